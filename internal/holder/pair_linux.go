package holder

import "golang.org/x/sys/unix"

// rawPair makes a connected pair of unix stream sockets, closed on exec
// from the start.
func rawPair() ([2]int, error) {
	return unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
}
