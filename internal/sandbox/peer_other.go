//go:build !linux

package sandbox

// ReadPeer cannot tell on this system which session a peer belongs to:
// there is no /proc to read its ancestry, process session and
// environment from without cgo (macOS keeps them behind sysctl and
// libproc calls this package does not make), nor its no_new_privs (a
// Linux flag). Keeping a sandboxed runtime off polyrepl's sockets is
// left to its Seatbelt profile there. Its pid alone is returned, with
// ErrCannotTell.
func ReadPeer(pid int, cookieVar string, since uint64) (Peer, error) {
	return Peer{PID: pid}, ErrCannotTell
}

// SelfNoNewPrivs is false: no_new_privs is a Linux flag.
func SelfNoNewPrivs() bool { return false }
