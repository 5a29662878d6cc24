package paths

import "golang.org/x/sys/unix"

// peerCred asks the kernel who connected to the unix socket fd: Linux
// records the peer's uid and pid at connect (SO_PEERCRED).
func peerCred(fd int) (uid, pid int, err error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return -1, 0, err
	}
	return int(cred.Uid), int(cred.Pid), nil
}
