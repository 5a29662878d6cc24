package daemon

import (
	"os"
	"path/filepath"
	"testing"
)

// The pid in the socket directory's lock is read as a pid or not at all.
func TestLockPID(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		in   string
		want int
	}{
		{"1234\n", 1234},
		{"", 0},
		{"pid\n", 0},
		{"-5\n", 0},
		{"123456789012345678901234567890\n", 0},
	} {
		p := filepath.Join(dir, "lock")
		os.Remove(p)
		if err := os.WriteFile(p, []byte(c.in), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := lockPID(p); got != c.want {
			t.Errorf("lockPID(%q) = %d, want %d", c.in, got, c.want)
		}
	}
	link := filepath.Join(dir, "link")
	os.Symlink(filepath.Join(dir, "lock"), link)
	if got := lockPID(link); got != 0 {
		t.Errorf("a symlink was followed: %d", got)
	}
	if got := lockPID(filepath.Join(dir, "absent")); got != 0 {
		t.Errorf("no file: %d", got)
	}
}
