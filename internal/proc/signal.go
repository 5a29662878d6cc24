package proc

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// pidfdOpen is unix.PidfdOpen, replaceable so tests can exercise the
// fallback used on kernels without pidfds.
var pidfdOpen = unix.PidfdOpen

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
// gone. It pins the process with a pidfd before re-checking the start time,
// which closes the window between the check and the signal; on kernels
// without pidfds it re-checks the start time right before kill(2).
func Signal(p Proc, sig unix.Signal) error {
	if err := checkTarget(p.PID); err != nil {
		return err
	}
	fd, err := pidfdOpen(p.PID, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return nil
	case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL):
		// No pidfd support (old kernel, seccomp filter): check then kill.
		if !Alive(p) {
			return nil
		}
		err = unix.Kill(p.PID, sig)
	case err != nil:
		return fmt.Errorf("signal %v to %v: open pidfd: %w", sig, p, err)
	default:
		defer unix.Close(fd)
		if !Alive(p) {
			return nil
		}
		err = unix.PidfdSendSignal(fd, sig, nil, 0)
	}
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
	s, _, err := readStat(unix.AT_FDCWD, statPath(pgid), nil)
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
