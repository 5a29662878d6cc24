package paths

import (
	"fmt"
	"path/filepath"
	"runtime"
)

// longestHolder is as long as a holder's socket name: a session's
// generation (12 hex digits, session.newGeneration) and ".sock"
// (holder.SocketName).
const longestHolder = "0123456789ab.sock"

// longestSocket is the longest socket path polyrepl makes under the
// socket directory dir: a holder's, deeper than the daemon's.
func longestSocket(dir string) string {
	return filepath.Join(HoldersDir(dir), longestHolder)
}

// socketPathMax is the longest path a unix socket may have on goos: the
// address (sockaddr_un) holds 104 bytes on macOS and 108 on Linux, the
// path's closing NUL included.
func socketPathMax(goos string) int {
	if goos == "linux" {
		return 107
	}
	return 103
}

// CheckSocketPath refuses a path too long for a unix socket on this
// system, with words that say what to set; connecting or listening there
// would fail with "invalid argument" only.
func CheckSocketPath(path string) error {
	return checkSocketPath(runtime.GOOS, path)
}

func checkSocketPath(goos, path string) error {
	max := socketPathMax(goos)
	if len(path) <= max {
		return nil
	}
	system := "Linux"
	if goos == "darwin" {
		system = "macOS"
	}
	// What $XDG_RUNTIME_DIR may be for every socket under it to fit.
	room := max - (len(longestSocket("/x/polyrepl")) - len("/x"))
	return fmt.Errorf("cannot use the socket %s: its path is %d bytes, and a unix socket's may have at most %d on %s; set XDG_RUNTIME_DIR to a directory only you can write to, of at most %d bytes (polyrepl keeps its sockets under $XDG_RUNTIME_DIR/polyrepl)",
		path, len(path), max, system, room)
}
