package proc

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// pidfdOpen is unix.PidfdOpen, replaceable so tests can exercise the
// fallback used on kernels without pidfds.
var pidfdOpen = unix.PidfdOpen

// signal sends sig to p through a pidfd opened before p is re-checked, so
// that the pid cannot change hands between the check and the signal; where
// pidfds are missing (old kernel, seccomp filter) it checks then kills.
func signal(p Proc, sig unix.Signal) error {
	fd, err := pidfdOpen(p.PID, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return nil
	case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL):
		return killIfStill(p, sig)
	case err != nil:
		return fmt.Errorf("signal %v to %v: open pidfd: %w", sig, p, err)
	}
	defer unix.Close(fd)
	s, err := procStat(p.PID)
	if !stillAlive(p, s, err) {
		return nil
	}
	return sent(p, sig, unix.PidfdSendSignal(fd, sig, nil, 0))
}
