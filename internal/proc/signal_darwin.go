package proc

import "golang.org/x/sys/unix"

// signal sends sig to p with kill(2) after re-reading its start time: macOS
// has no pidfd to pin a process, so a pid that p's exit, its reaping and a
// reuse all freed and refilled between the re-read and kill(2) could still be
// hit. macOS normally hands out pids in turn, wrapping only after 99999,
// which makes that very unlikely, not impossible.
func signal(p Proc, sig unix.Signal) error {
	return killIfStill(p, sig)
}
