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

// A fork's runtime goes on using its parent's private places: they stay
// while either holder lives, whichever ends first, and go with the last.
func TestSharedPlacesGoWithTheLastHolder(t *testing.T) {
	parent := TempParent(t.TempDir())
	rt := t.TempDir()
	exists := func(p *Private) bool {
		_, err1 := os.Stat(p.Tmp)
		_, err2 := os.Stat(p.RuntimeDir)
		return err1 == nil && err2 == nil
	}
	for _, parentFirst := range []bool{true, false} {
		owner, err := MakePrivate("own", parent, rt)
		if err != nil {
			t.Fatal(err)
		}
		fork, err := Share(parent, owner.RuntimeDir, "fork")
		if err != nil || fork == nil || fork.Tmp != owner.Tmp {
			t.Fatalf("Share: %+v %v", fork, err)
		}
		first, last := fork, owner
		if parentFirst {
			first, last = owner, fork
		}
		first.Remove()
		if !exists(owner) {
			t.Fatalf("parent first %v: the places went while a holder used them", parentFirst)
		}
		// Another session's start sweeps only what nobody holds.
		other, err := MakePrivate("other", parent, rt)
		if err != nil {
			t.Fatal(err)
		}
		if !exists(owner) {
			t.Fatalf("parent first %v: a sweep took the places a holder used", parentFirst)
		}
		last.Remove()
		other.Remove()
		if exists(owner) {
			t.Errorf("parent first %v: the places stayed after the last holder ended", parentFirst)
		}
	}

	// A fork's holder killed: its lease is held by nobody, and the next
	// sweep removes the places of the parent that ended meanwhile.
	owner, _ := MakePrivate("own2", parent, rt)
	fork, _ := Share(parent, owner.RuntimeDir, "fork2")
	fork.lock.Close()
	owner.Remove()
	next, err := MakePrivate("next", parent, rt)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Remove()
	if exists(owner) {
		t.Error("the places of a parent and a killed fork were left")
	}
	left, _ := os.ReadDir(parent)
	for _, e := range left {
		if e.Name() != "next" && e.Name() != "next.lock" {
			t.Errorf("left in the sandboxes' directory: %s", e.Name())
		}
	}

	// A session without a sandbox keeps its driver files where nobody
	// removes them: nothing to share.
	if p, err := Share(parent, rt, "fork3"); p != nil || err != nil {
		t.Errorf("Share of the runtimes' directory: %+v %v", p, err)
	}
}
