//go:build !linux

package holder

import "golang.org/x/sys/unix"

// peerClosed says, without waiting, whether the other end of the stream
// socket fd has closed (or failed). Without POLLRDHUP: readable, and a
// peek reads end of file; unread bytes waiting mean it is open.
func peerClosed(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	if err != nil || n == 0 {
		return false
	}
	if fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0 {
		return true
	}
	var b [1]byte
	m, _, err := unix.Recvfrom(fd, b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	return err == nil && m == 0
}
