package limit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCap holds hogs to a cap on all sessions together with whatever
// cgroup this machine gives the daemon (a cgroup v1 memory group here, as
// root): a hog with no limit of its own is killed by the cap, and its
// kill is told as the cap's; a hog with a limit of its own below the cap
// is killed by its own limit, told as its own; a hog within both lives.
// A daemon of the same state directory without a cap lifts it.
func TestCap(t *testing.T) {
	key := fmt.Sprintf("test-cap-%d", os.Getpid())
	l := &Limiter{Want: "cgroup", Total: 128 << 20, Key: key}
	st := l.Cap()
	if !st.Enforced {
		if _, err := (&Limiter{Want: "cgroup"}).Apply(os.Getpid(), "polyrepl-probe", 1<<40); err != nil {
			t.Skipf("no cgroup to hold memory limits with here: %v", err)
		}
		t.Fatalf("the cap is not enforced with a cgroup to hold it: %s", st.Describe())
	}
	defer os.Remove(st.Group)
	if !strings.HasPrefix(filepath.Base(st.Group), capPrefix) || !strings.Contains(st.Describe(), "128 MB on all sessions together, enforced by") {
		t.Errorf("the cap's group %s, described %q", st.Group, st.Describe())
	}
	if u := st.Usage(); u < 0 {
		t.Errorf("the cap's usage cannot be read: %d", u)
	}

	lim, ps, out, err := hogUnder(t, l, 256, 0)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(lim.group) != st.Group || !lim.Capped(st.Group) || lim.Bytes != 0 {
		t.Errorf("the session's group %s (own limit %d) is not under the cap's %s", lim.group, lim.Bytes, st.Group)
	}
	if !strings.Contains(lim.Describe(), "no limit of its own, under the cap on all sessions together of 128 MB") {
		t.Errorf("a session held by the cap alone is described %q", lim.Describe())
	}
	if lim.Over() != OverCap || !strings.Contains(lim.OverWords(), "the memory cap on all sessions together, 128 MB") {
		t.Errorf("a hog killed by the cap: Over %q, %q", lim.Over(), lim.OverWords())
	}
	held := Restore(lim.Held())
	if held.Over() != OverCap {
		t.Errorf("a limit taken up by a later daemon says Over %q, want the cap", held.Over())
	}
	killedForMemory(t, lim, ps, out)

	lim, ps, out, err = hogUnder(t, l, 256, 64)
	if err != nil {
		t.Fatal(err)
	}
	if lim.Over() != OverOwn || !strings.HasPrefix(lim.OverWords(), "its memory limit of 64 MB") {
		t.Errorf("a hog killed by its own limit under the cap: Over %q, %q", lim.Over(), lim.OverWords())
	}
	killedForMemory(t, lim, ps, out)

	lim, ps, out, err = hogUnder(t, l, 16, 0)
	if err != nil {
		t.Fatal(err)
	}
	withinLimit(t, lim, ps, out)

	// A daemon of the same state directory asking no cap lifts it, and
	// puts sessions without a limit in no group.
	none := &Limiter{Want: "cgroup", Key: key}
	if lim, err := none.Apply(os.Getpid(), "polyrepl-unused", 0); err != nil || lim != nil {
		t.Errorf("no limit and no cap: %v, %v; want none", lim, err)
	}
	none.Prepare()
	file := "memory.max"
	if st.By == ByCgroupV1 {
		file = "memory.limit_in_bytes"
	}
	if b, _ := os.ReadFile(filepath.Join(st.Group, file)); len(strings.TrimSpace(string(b))) < 10 && strings.TrimSpace(string(b)) != "max" {
		t.Errorf("the cap's %s is %q after a daemon without a cap took over", file, b)
	}
}

// TestCapNotEnforced: where no cgroup holds limits (the rlimit asked
// for), the cap says it is not enforced and why, and sessions start.
func TestCapNotEnforced(t *testing.T) {
	l := &Limiter{Want: ByRlimit, Total: 1 << 30, Key: "x"}
	st := l.Cap()
	if st.Enforced || !strings.Contains(st.Describe(), "1.0 GB on all sessions together, NOT enforced: no cgroup to hold it: $POLYREPL_MEMORY_BY asks for the rlimit") {
		t.Errorf("the cap with the rlimit: %+v, %q", st, st.Describe())
	}
	if lim, err := l.Apply(os.Getpid(), "polyrepl-x", 0); lim != nil || err != nil {
		t.Errorf("a session without a limit where the cap is not enforced: %v, %v", lim, err)
	}
	if (&Limiter{}).Cap() != (CapState{}) {
		t.Errorf("no cap asked for, yet one is said")
	}
}
