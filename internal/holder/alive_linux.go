package holder

import "golang.org/x/sys/unix"

// peerClosed says, without waiting, whether the other end of the stream
// socket fd has closed (or failed): Linux reports it as POLLRDHUP.
func peerClosed(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0
}
