package paths

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A directory someone else could control is refused, never followed or
// repaired.
func TestCheckPrivateDir(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := mk("ok", 0o700)
	open := mk("open", 0o755)
	link := filepath.Join(base, "link")
	if err := os.Symlink(ok, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckPrivateDir(ok); err != nil {
		t.Errorf("a private directory was refused: %v", err)
	}
	for _, p := range []string{open, link, file} {
		if err := CheckPrivateDir(p); !errors.Is(err, ErrUnsafe) {
			t.Errorf("CheckPrivateDir(%s) = %v, want a refusal", p, err)
		}
	}
	if os.Getuid() == 0 {
		foreign := mk("foreign", 0o700)
		if err := os.Chown(foreign, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := CheckPrivateDir(foreign); !errors.Is(err, ErrUnsafe) {
			t.Errorf("a directory owned by uid 65534 was not refused: %v", err)
		}
	}
	fresh := filepath.Join(base, "new", "polyrepl")
	if err := EnsurePrivateDir(fresh); err != nil {
		t.Fatalf("EnsurePrivateDir: %v", err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("a new private directory has mode %v (%v), want 0700", fi.Mode().Perm(), err)
	}
}
