// Package paths owns where polyrepl keeps things on disk — the daemon's
// socket directory and the per-host state directory — and refuses places an
// attacker could have prepared: symlinks, directories owned by someone else,
// or directories others can read.
package paths

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Files inside the socket directory.
const (
	SocketName = "daemon.sock"
	LockName   = "daemon.lock"
	LogName    = "daemon.log"
	// RuntimesName is the directory of what the runtimes need on disk
	// (worker programs, cell files) and, under it, of the holders'
	// sockets.
	RuntimesName = "runtimes"
)

// HoldersDir is where, in the socket directory, the holders of the
// sessions listen: one socket each, named after the session's
// generation.
func HoldersDir(socketDir string) string { return filepath.Join(socketDir, RuntimesName, "holders") }

// SocketDir returns the directory that holds the daemon's socket, lock and
// log. It does not create it; see EnsurePrivateDir.
//
// On Linux: $XDG_RUNTIME_DIR/polyrepl; else, when the user has a private
// /run/user/<uid> (what XDG_RUNTIME_DIR names in a login session), that
// one's polyrepl; else /tmp/polyrepl-<uid> ($TMPDIR's, if set). The
// middle step matters: MCP clients start their servers with a few
// variables only (HOME, LOGNAME, PATH, SHELL, TERM, USER), and without it
// an agent's server and the person's terminal would reach two daemons.
//
// On macOS, which has neither: $XDG_RUNTIME_DIR/polyrepl if set; else
// $TMPDIR/polyrepl when $TMPDIR is a private directory of the user's (as
// launchd's /var/folders/…/T/ is); else ~/Library/Caches/polyrepl. A
// place too long for the holders' sockets under it (macOS allows 103
// bytes) is passed over, for /tmp/polyrepl-<uid> at last.
func SocketDir() string { return here().socketDir() }

// runUser holds the users' runtime directories that systemd-logind makes;
// a test points it elsewhere.
var runUser = "/run/user"

// Socket is the daemon's socket path.
func Socket() string { return filepath.Join(SocketDir(), SocketName) }

// StateDir returns $XDG_STATE_HOME/polyrepl/<host>, by default
// ~/.local/state/polyrepl/<host> on Linux. Per-host, because a home on
// NFS is shared by machines that each run their own daemon. On macOS it
// is ~/Library/Application Support/polyrepl with no host level: a Mac's
// host name changes with the network it joins, and state would seem to
// vanish (and a home shared by several Macs is rare).
func StateDir() (string, error) {
	w := here()
	base, err := w.stateBase()
	if err != nil || w.goos == "darwin" {
		return base, err
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return filepath.Join(base, host), nil
}

// ErrUnsafe marks a refusal of a directory or a file someone else could
// control, or a cell could have planted: errors.Is tells it from an I/O
// failure.
var ErrUnsafe = errors.New("unsafe path")

// refusal is an ErrUnsafe whose words are only the refusal itself, which
// says what to do.
type refusal struct{ msg string }

func (r *refusal) Error() string        { return r.msg }
func (r *refusal) Is(target error) bool { return target == ErrUnsafe }

// unsafe makes a refusal.
func unsafe(format string, a ...any) error {
	return &refusal{fmt.Sprintf(format, a...)}
}

// EnsurePrivateDir creates dir (and missing parents) with mode 0700 and
// checks that dir itself is a real directory, not a symlink, owned by us and
// closed to group and others. An existing directory that fails a check is
// refused, never repaired or followed: someone else may have planted it.
func EnsurePrivateDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %w", filepath.Dir(dir), err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	return CheckPrivateDir(dir)
}

// CheckPrivateDir verifies, without following symlinks, that dir is a
// directory owned by the current user with no group or other permissions.
func CheckPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("cannot inspect %s: %w", dir, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return unsafe("refusing %s: it is a symlink; remove it so polyrepl can create a private directory there", dir)
	}
	if !fi.IsDir() {
		return unsafe("refusing %s: it is not a directory; remove it so polyrepl can create a private directory there", dir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("cannot read the owner of %s", dir)
	}
	if int(st.Uid) != os.Getuid() {
		return unsafe("refusing %s: it is owned by uid %d, not by you (uid %d); someone else may have planted it, remove it", dir, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return unsafe("refusing %s: its mode is %04o, open to other users; run `chmod 700 %s` if you trust its contents", dir, fi.Mode().Perm(), dir)
	}
	return nil
}
