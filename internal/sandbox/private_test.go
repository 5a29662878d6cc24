package sandbox

import (
	"os"
	"testing"
)

// A holder killed before it could remove its private places leaves
// them; the next holder to make its own removes them, and never those
// of a holder that lives.
func TestMakePrivateSweepsTheGone(t *testing.T) {
	parent := TempParent(t.TempDir())
	rt := t.TempDir()
	live, err := MakePrivate("live", parent, rt)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()
	gone, err := MakePrivate("gone", parent, rt)
	if err != nil {
		t.Fatal(err)
	}
	gone.lock.Close() // its holder was killed
	if _, err := MakePrivate("live", parent, rt); err == nil {
		t.Error("a second holder took a live holder's private places")
	}
	next, err := MakePrivate("next", parent, rt)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Remove()
	for _, d := range []string{gone.Tmp, gone.RuntimeDir} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s was left: %v", d, err)
		}
	}
	for _, d := range []string{live.Tmp, live.RuntimeDir, next.Tmp} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v", d, fi, err)
		}
	}
	if _, err := MakePrivate("../x", parent, rt); err == nil {
		t.Error("a generation with a slash named a private directory")
	}
}
