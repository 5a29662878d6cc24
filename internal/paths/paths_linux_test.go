package paths

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Without XDG_RUNTIME_DIR (as MCP clients start their servers), the socket
// goes where a login session's XDG_RUNTIME_DIR would have put it, if that
// is the user's private /run/user/<uid>; otherwise under /tmp. A
// /run/user/<uid> open to others, or a symlink, is never used.
func TestSocketDirWithoutXDGRuntimeDir(t *testing.T) {
	base := t.TempDir()
	defer func(old string) { runUser = old }(runUser)
	runUser = base
	mine := filepath.Join(base, strconv.Itoa(os.Getuid()))
	tmp := filepath.Join(os.TempDir(), "polyrepl-"+strconv.Itoa(os.Getuid()))

	t.Setenv("XDG_RUNTIME_DIR", mine)
	fromLogin := SocketDir()
	os.Unsetenv("XDG_RUNTIME_DIR")

	if got := SocketDir(); got != tmp {
		t.Errorf("no /run/user/<uid>: %s, want %s", got, tmp)
	}
	if err := os.Mkdir(mine, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := SocketDir(); got != fromLogin {
		t.Errorf("a private /run/user/<uid>: %s, want %s, as with XDG_RUNTIME_DIR set", got, fromLogin)
	}
	if err := os.Chmod(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := SocketDir(); got != tmp {
		t.Errorf("a /run/user/<uid> open to others: %s, want %s", got, tmp)
	}
	os.Remove(mine)
	if err := os.Symlink(t.TempDir(), mine); err != nil {
		t.Fatal(err)
	}
	if got := SocketDir(); got != tmp {
		t.Errorf("a symlinked /run/user/<uid>: %s, want %s", got, tmp)
	}
}
