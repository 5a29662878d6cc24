//go:build !linux

package holder

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// rawPair makes a connected pair of unix stream sockets, closed on exec.
// Without SOCK_CLOEXEC the flag is set after, under the fork lock, so no
// process started meanwhile inherits them.
func rawPair() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fds[0])
		unix.CloseOnExec(fds[1])
	}
	return fds, err
}
