package paths

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// macTmp is what launchd sets $TMPDIR to on macOS: the user's own, 0700.
const macTmp = "/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/"

// The socket directory each system chooses, from its environment alone
// (and whether a directory is the user's private one): on macOS
// ~/Library/Caches, whether TMPDIR is set or not (an MCP client's server
// has none, and must reach the terminal's daemon), else the per-user
// $TMPDIR, passing over a place too long for the holders' sockets; on
// Linux as it always was.
func TestSocketDirFor(t *testing.T) {
	long := "/" + strings.Repeat("d", 70)
	for _, c := range []struct {
		goos, why string
		env       map[string]string
		home      string
		private   []string // the user's private directories
		want      string
	}{
		{"darwin", "XDG_RUNTIME_DIR set", map[string]string{"XDG_RUNTIME_DIR": "/run/me", "TMPDIR": macTmp}, "/Users/ada", []string{filepath.Clean(macTmp)}, "/run/me/polyrepl"},
		{"darwin", "TMPDIR set", map[string]string{"TMPDIR": macTmp}, "/Users/ada", []string{filepath.Clean(macTmp)}, "/Users/ada/Library/Caches/polyrepl"},
		{"darwin", "TMPDIR set, no home", map[string]string{"TMPDIR": macTmp}, "", []string{filepath.Clean(macTmp)}, filepath.Join(macTmp, "polyrepl")},
		{"darwin", "TMPDIR set, long home", map[string]string{"TMPDIR": macTmp}, "/" + strings.Repeat("h", 70), []string{filepath.Clean(macTmp)}, filepath.Join(macTmp, "polyrepl")},
		{"darwin", "TMPDIR shared with other users", map[string]string{"TMPDIR": "/tmp"}, "/Users/ada", nil, "/Users/ada/Library/Caches/polyrepl"},
		{"darwin", "neither (as MCP clients start servers)", nil, "/Users/ada", nil, "/Users/ada/Library/Caches/polyrepl"},
		{"darwin", "a relative XDG_RUNTIME_DIR", map[string]string{"XDG_RUNTIME_DIR": "run"}, "/Users/ada", nil, "/Users/ada/Library/Caches/polyrepl"},
		{"darwin", "long TMPDIR", map[string]string{"TMPDIR": long}, "/Users/ada", []string{long}, "/Users/ada/Library/Caches/polyrepl"},
		{"darwin", "long XDG_RUNTIME_DIR", map[string]string{"XDG_RUNTIME_DIR": long, "TMPDIR": macTmp}, "/Users/ada", []string{filepath.Clean(macTmp)}, "/Users/ada/Library/Caches/polyrepl"},
		{"darwin", "long TMPDIR and long home", map[string]string{"TMPDIR": long}, long, []string{long}, "/tmp/polyrepl-501"},
		{"darwin", "no TMPDIR, no home", nil, "", nil, "/tmp/polyrepl-501"},
		{"linux", "XDG_RUNTIME_DIR set", map[string]string{"XDG_RUNTIME_DIR": "/run/user/501"}, "/home/ada", nil, "/run/user/501/polyrepl"},
		{"linux", "long XDG_RUNTIME_DIR, used as ever", map[string]string{"XDG_RUNTIME_DIR": long}, "/home/ada", nil, long + "/polyrepl"},
		{"linux", "a private /run/user/<uid>", nil, "/home/ada", []string{"/run/user/501"}, "/run/user/501/polyrepl"},
		{"linux", "neither, TMPDIR set", map[string]string{"TMPDIR": "/scratch"}, "/home/ada", nil, "/scratch/polyrepl-501"},
		{"linux", "neither", nil, "/home/ada", nil, "/tmp/polyrepl-501"},
	} {
		w := where{
			goos: c.goos, getenv: func(k string) string { return c.env[k] }, home: c.home, uid: 501,
			private: func(dir string) bool {
				for _, p := range c.private {
					if dir == p {
						return true
					}
				}
				return false
			},
		}
		got := w.socketDir()
		if got != c.want {
			t.Errorf("%s, %s: %s, want %s", c.goos, c.why, got, c.want)
		}
		if err := checkSocketPath(c.goos, longestSocket(got)); c.goos == "darwin" && err != nil {
			t.Errorf("%s, %s: %v", c.goos, c.why, err)
		}
	}
}

// A socket too long for the system is refused with what to set, and
// where the limit falls: 103 bytes on macOS, 107 on Linux.
func TestCheckSocketPath(t *testing.T) {
	for goos, max := range map[string]int{"darwin": 103, "linux": 107} {
		fits := "/" + strings.Repeat("s", max-1)
		if err := checkSocketPath(goos, fits); err != nil {
			t.Errorf("%s: a path of %d bytes was refused: %v", goos, len(fits), err)
		}
		err := checkSocketPath(goos, fits+"s")
		if err == nil || !strings.Contains(err.Error(), "set XDG_RUNTIME_DIR") {
			t.Errorf("%s: a path of %d bytes: %v, want a refusal saying what to set", goos, len(fits)+1, err)
		}
		// The room it says to leave is enough.
		xdg := "/" + strings.Repeat("x", max-44-1)
		if err := checkSocketPath(goos, longestSocket(xdg+"/polyrepl")); err != nil {
			t.Errorf("%s: the room the refusal names is not enough: %v", goos, err)
		}
	}
	if err := checkSocketPath("darwin", "/"+strings.Repeat("s", 200)); !strings.Contains(err.Error(), "on macOS") || !strings.Contains(err.Error(), "at most 59 bytes") {
		t.Errorf("darwin: %v", err)
	}
}

// The state directory: $XDG_STATE_HOME's, else where each system keeps an
// application's data.
func TestStateBase(t *testing.T) {
	for _, c := range []struct {
		goos      string
		env       map[string]string
		home      string
		want, err string
	}{
		{"darwin", map[string]string{"XDG_STATE_HOME": "/Users/ada/state"}, "/Users/ada", "/Users/ada/state/polyrepl", ""},
		{"darwin", map[string]string{"XDG_STATE_HOME": "state"}, "/Users/ada", "/Users/ada/Library/Application Support/polyrepl", ""},
		{"darwin", nil, "/Users/ada", "/Users/ada/Library/Application Support/polyrepl", ""},
		{"darwin", nil, "", "", "set XDG_STATE_HOME or HOME"},
		{"linux", map[string]string{"XDG_STATE_HOME": "/home/ada/state"}, "/home/ada", "/home/ada/state/polyrepl", ""},
		{"linux", nil, "/home/ada", "/home/ada/.local/state/polyrepl", ""},
		{"linux", nil, "", "", "set XDG_STATE_HOME or HOME"},
	} {
		w := where{goos: c.goos, getenv: func(k string) string { return c.env[k] }, home: c.home, uid: 501}
		got, err := w.stateBase()
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s, %v, home %q: %q, %v; want %q, %q", c.goos, c.env, c.home, got, err, c.want, c.err)
		}
	}
}

// Each end of a connection learns the other's uid and pid from the
// kernel; a socket path too long is refused before the system is asked.
func TestPeer(t *testing.T) {
	dir := t.TempDir()
	ln, err := Listen(filepath.Join(dir, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.DialUnix("unix", nil, ln.Addr().(*net.UnixAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, end := range []*net.UnixConn{c, s} {
		if uid, pid, err := Peer(end); err != nil || uid != os.Getuid() || pid != os.Getpid() {
			t.Errorf("Peer = %d, %d, %v; want %d, %d", uid, pid, err, os.Getuid(), os.Getpid())
		}
	}
	if _, err := Listen(filepath.Join(dir, strings.Repeat("l", 120))); err == nil || !strings.Contains(err.Error(), "set XDG_RUNTIME_DIR") {
		t.Errorf("Listen on a path too long: %v, want a refusal saying what to set", err)
	}
}
