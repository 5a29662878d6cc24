package paths

import "golang.org/x/sys/unix"

// peerCred asks the kernel who connected to the unix socket fd. macOS has
// no SO_PEERCRED: it records the peer's credentials (LOCAL_PEERCRED, a
// struct xucred with its effective uid) and its pid (LOCAL_PEERPID)
// separately, both at connect, neither forgeable by the peer.
func peerCred(fd int) (uid, pid int, err error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return -1, 0, err
	}
	pid, err = unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	if err != nil {
		return -1, 0, err
	}
	return int(cred.Uid), pid, nil
}
