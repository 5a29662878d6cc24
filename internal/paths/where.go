package paths

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
)

// where is what choosing polyrepl's directories depends on. It is passed
// in, never read by the choice itself, so that the choice is a pure
// function: a test on Linux checks what macOS would choose.
type where struct {
	goos   string              // runtime.GOOS
	getenv func(string) string // os.Getenv
	home   string              // the user's home directory; "" if unknown
	uid    int
	// private reports whether dir is a directory of the user's that is
	// closed to others (CheckPrivateDir): a place the system may share
	// between users is taken only if so.
	private func(dir string) bool
}

// here is where this process runs.
func here() where {
	home, _ := os.UserHomeDir()
	return where{
		goos: runtime.GOOS, getenv: os.Getenv, home: home, uid: os.Getuid(),
		private: func(dir string) bool { return CheckPrivateDir(dir) == nil },
	}
}

// socketDir chooses the socket directory (see SocketDir).
func (w where) socketDir() string {
	if w.goos == "darwin" {
		return w.macOSSocketDir()
	}
	if d := w.getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "polyrepl")
	}
	if d := filepath.Join(runUser, strconv.Itoa(w.uid)); w.private(d) {
		return filepath.Join(d, "polyrepl")
	}
	tmp := w.getenv("TMPDIR") // as os.TempDir
	if tmp == "" {
		tmp = "/tmp"
	}
	return filepath.Join(tmp, fmt.Sprintf("polyrepl-%d", w.uid))
}

// macOSSocketDir is socketDir on macOS, where nothing sets
// XDG_RUNTIME_DIR unless the user does: there ~/Library/Caches/polyrepl
// takes /run/user/<uid>'s place. It comes before launchd's per-user
// temporary directory ($TMPDIR, /var/folders/…/T/, the user's and 0700)
// because an MCP client starts its server without TMPDIR (HOME, PATH and
// a few more only): both must reach the one daemon a terminal reaches.
// A place that leaves no room for polyrepl's sockets under it (macOS
// allows 103 bytes) is passed over; /tmp/polyrepl-<uid>, short and
// checked like Linux's, is the last resort.
func (w where) macOSSocketDir() string {
	var places []string
	if d := w.getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		places = append(places, filepath.Join(d, "polyrepl"))
	}
	if filepath.IsAbs(w.home) {
		places = append(places, filepath.Join(w.home, "Library", "Caches", "polyrepl"))
	}
	if d := w.getenv("TMPDIR"); filepath.IsAbs(d) && w.private(filepath.Clean(d)) {
		places = append(places, filepath.Join(d, "polyrepl"))
	}
	for _, d := range places {
		if len(longestSocket(d)) <= socketPathMax(w.goos) {
			return d
		}
	}
	return filepath.Join("/tmp", fmt.Sprintf("polyrepl-%d", w.uid))
}

// stateBase chooses the directory StateDir keeps each host's state under:
// $XDG_STATE_HOME/polyrepl, else ~/.local/state/polyrepl on Linux and
// ~/Library/Application Support/polyrepl on macOS, where applications
// keep what they must not lose.
func (w where) stateBase() (string, error) {
	if d := w.getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "polyrepl"), nil
	}
	if w.home == "" {
		return "", fmt.Errorf("cannot find the state directory: set XDG_STATE_HOME or HOME: $HOME is not defined")
	}
	if w.goos == "darwin" {
		return filepath.Join(w.home, "Library", "Application Support", "polyrepl"), nil
	}
	return filepath.Join(w.home, ".local", "state", "polyrepl"), nil
}
