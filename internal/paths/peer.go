package paths

import (
	"fmt"
	"net"
	"os"
)

// PeerUID returns the uid of the process at the other end of a unix socket
// connection, from the kernel: it cannot be forged by the peer.
func PeerUID(c *net.UnixConn) (int, error) {
	uid, _, err := Peer(c)
	return uid, err
}

// Peer returns the uid and pid of the process at the other end of a unix
// socket connection, as the kernel recorded them when it connected
// (SO_PEERCRED on Linux, LOCAL_PEERCRED and LOCAL_PEERPID on macOS).
func Peer(c *net.UnixConn) (uid, pid int, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, 0, fmt.Errorf("cannot read the peer's credentials: %w", err)
	}
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		uid, pid, cerr = peerCred(int(fd))
	}); err != nil {
		return -1, 0, fmt.Errorf("cannot read the peer's credentials: %w", err)
	}
	if cerr != nil {
		return -1, 0, fmt.Errorf("cannot read the peer's credentials: %w", cerr)
	}
	return uid, pid, nil
}

// Listen listens on a unix socket at path, private to the user (0600; its
// directory is checked by the caller), removed when the listener closes.
// A path too long for a socket is refused with words that say what to
// set (see CheckSocketPath), not the system's "invalid argument".
func Listen(path string) (*net.UnixListener, error) {
	if err := CheckSocketPath(path); err != nil {
		return nil, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("cannot restrict %s: %w", path, err)
	}
	return ln, nil
}
