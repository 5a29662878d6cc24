package proc

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// errRefused marks a signal this package will not send because it could
// hit init, the whole system, or the daemon itself.
var errRefused = errors.New("refusing to signal")

// checkTarget refuses pids that must never be signalled individually: 0 and
// negatives (which kill(2) treats as groups), 1 (init), and the calling
// process and the leader of its process group.
func checkTarget(pid int) error {
	switch {
	case pid <= 1:
		return fmt.Errorf("%w pid %d: not a single user process", errRefused, pid)
	case pid == os.Getpid():
		return fmt.Errorf("%w pid %d: it is the calling process", errRefused, pid)
	case pid == unix.Getpgrp():
		return fmt.Errorf("%w pid %d: it leads the caller's process group", errRefused, pid)
	}
	return nil
}

// checkGroup refuses process groups that must never be signalled: ids <= 1
// (which would reach init or every process) and the caller's own group.
func checkGroup(pgid int) error {
	switch {
	case pgid <= 1:
		return fmt.Errorf("%w process group %d: not a session group", errRefused, pgid)
	case pgid == os.Getpid() || pgid == unix.Getpgrp():
		return fmt.Errorf("%w process group %d: it is the caller's own group", errRefused, pgid)
	}
	return nil
}

// Signal sends sig to p only if p is still the same process, so that a pid
// reused by an unrelated process is never hit; it returns nil if p is already
// gone. On Linux it pins the process with a pidfd before re-checking the start
// time, which closes the window between the check and the signal; on kernels
// without pidfds, and on macOS, which has none, it re-checks the start time
// right before kill(2), leaving only the moment between the two for p to
// exit, be reaped and have its pid handed to another process.
func Signal(p Proc, sig unix.Signal) error {
	if err := checkTarget(p.PID); err != nil {
		return err
	}
	return signal(p, sig)
}

// stillAlive decides, from a fresh read of p.PID in the process table (s,
// or err when nothing could be read), whether that pid still names p, alive,
// so that it may be signalled (and Alive is true):
//   - nothing read (gone, or unreadable): no, nothing is known to be p;
//   - another start time: no, the pid now names another process;
//   - p, but a zombie: no, it has exited and a signal would do nothing;
//   - p, not a zombie: yes.
func stillAlive(p Proc, s stat, err error) bool {
	return err == nil && s.start == p.Start && !s.zombie()
}

// killIfStill re-reads p right before kill(2) and sends sig only if it is
// still p (stillAlive): the way to signal where no pidfd pins the process.
func killIfStill(p Proc, sig unix.Signal) error {
	s, err := procStat(p.PID)
	if !stillAlive(p, s, err) {
		return nil
	}
	return sent(p, sig, unix.Kill(p.PID, sig))
}

// sent turns the outcome of sending sig to p into Signal's error: a process
// that exited meanwhile (ESRCH) is no error.
func sent(p Proc, sig unix.Signal, err error) error {
	if err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("signal %v to %v: %w (check the daemon may signal this process)", sig, p, err)
	}
	return nil
}

// SignalGroup sends sig to the process group of the leader (kill(-pgid)),
// reaching every process still in the group at once, even one forked a
// moment ago. It first checks the leader's start time if the leader still
// exists; if the leader is gone but group members remain, it signals those
// members individually with Signal. If the leader's pid now belongs to a
// different process, the group cannot be ours any more and nothing is sent.
func (t Tree) SignalGroup(sig unix.Signal) error {
	pgid := t.Leader.PID
	if err := checkGroup(pgid); err != nil {
		return err
	}
	s, err := procStat(pgid)
	switch {
	case err == nil && s.start == t.Leader.Start:
		// The leader exists (perhaps as a zombie), so the group is ours.
		if err := unix.Kill(-pgid, sig); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("signal %v to process group %d: %w", sig, pgid, err)
		}
		return nil
	case err == nil:
		// Pid reused: a pid naming a live group is never reused, so our
		// group has no members left.
		return nil
	case !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ESRCH):
		return fmt.Errorf("signal %v to process group %d: check leader %v: %w", sig, pgid, t.Leader, err)
	}
	es, err := scan("")
	if err != nil {
		return fmt.Errorf("signal %v to process group %d: %w", sig, pgid, err)
	}
	var errs []error
	for _, e := range es {
		if e.pgid == pgid && !e.zombie() {
			errs = append(errs, Signal(e.proc(), sig))
		}
	}
	return errors.Join(errs...)
}
