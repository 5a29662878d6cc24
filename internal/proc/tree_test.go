package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

// treeScript starts one process per way of joining or escaping a session;
// each runs a sleep with a distinct duration so the test can tell them apart.
const treeScript = `
sleep 1001 &
sh -c 'sleep 1002; true' &
setsid sleep 1003 &
(sleep 1004 &)
(setsid sleep 1005 &)
sh -c 'trap "" TERM; sleep 1006' &
wait
`

func TestTreeKill(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid (util-linux) not installed")
	}
	cookie := newCookie(t)
	noLeftovers(t, cookie)
	outsider := start(t, "", "exec sleep 1000")
	leader := start(t, cookie, treeScript)
	tree := leader.tree(t, cookie)

	all := []string{"sleep 1001", "sleep 1002", "sleep 1003", "sleep 1004", "sleep 1005", "sleep 1006"}
	var members []Proc
	eventually(t, "all tree processes to start", func() bool {
		members = tree.Members(true)
		got := byCmdline(members)
		for _, c := range all {
			if _, ok := got[c]; !ok {
				return false
			}
		}
		return true
	})
	if !slices.Contains(members, tree.Leader) {
		t.Errorf("members %v lack the leader %v", members, tree.Leader)
	}
	if slices.Contains(members, outsider.proc(t)) {
		t.Errorf("members %v include the outsider", members)
	}

	// Without the cookie, only the process that left both the group and
	// the leader's descendants is missed.
	noCookie := byCmdline(tree.Members(false))
	for _, c := range all {
		_, ok := noCookie[c]
		if want := c != "sleep 1005"; ok != want {
			t.Errorf("Members(false) has %q = %v; want %v", c, ok, want)
		}
	}
	if rss := RSS(tree.Members(false)); rss == 0 {
		t.Error("RSS of a live tree is 0")
	}

	// A grace long enough that a loaded machine's slow exits fit well
	// within it: a Kill that waits it out is told from one that does not
	// by seconds, not by a scheduler's whim.
	const grace = 8 * time.Second
	begin := time.Now()
	survivors, err := tree.Kill(grace)
	took := time.Since(begin)
	if err != nil || len(survivors) != 0 {
		t.Fatalf("Kill = %v, %v; want no survivors", survivors, err)
	}
	// One process ignores SIGTERM: once the others have acted on it and
	// only that one is left, waiting out the grace would bring nothing,
	// and Kill goes on to SIGKILL.
	if took >= grace {
		t.Errorf("Kill took %v; want it to skip the grace of %v once only a process ignoring SIGTERM was left", took, grace)
	}
	for _, m := range members {
		if Alive(m) {
			t.Errorf("%v (%s) still alive after Kill", m, proctest.Cmdline(m.PID))
		}
	}
	if left := withCookie(cookie); len(left) != 0 {
		t.Errorf("processes with the cookie remain: %v", left)
	}
	if m := tree.Members(true); len(m) != 0 {
		t.Errorf("Members after Kill = %v", m)
	}
	if RSS(members) != 0 {
		t.Error("RSS of killed processes is not 0")
	}
	if !Alive(outsider.proc(t)) {
		t.Error("Kill ended a process outside the tree")
	}
	leader.waitDone(t)
}

// TestKillLeaderGone covers a leader that exited while its children live
// on in its group, found by pgid and, after setsid, only by cookie.
func TestKillLeaderGone(t *testing.T) {
	cookie := newCookie(t)
	noLeftovers(t, cookie)
	gone := filepath.Join(t.TempDir(), "gone") // the leader ends once its identity is read
	leader := start(t, cookie, "(sleep 1007 &); (setsid sleep 1008 &) 2>/dev/null || true; while [ ! -e "+gone+" ]; do sleep 0.01; done")
	tree := leader.tree(t, cookie)
	if err := os.WriteFile(gone, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	leader.waitDone(t)
	if Alive(tree.Leader) {
		t.Fatal("leader still alive after exit")
	}
	eventually(t, "the orphans to be found", func() bool {
		got := byCmdline(tree.Members(true))
		_, a := got["sleep 1007"]
		_, b := got["sleep 1008"]
		return a && (b || !hasSetsid())
	})
	if got := byCmdline(tree.Members(false)); len(got) != 1 {
		t.Errorf("Members(false) = %v; want only the group member", got)
	}
	survivors, err := tree.Kill(200 * time.Millisecond)
	if err != nil || len(survivors) != 0 {
		t.Fatalf("Kill = %v, %v; want no survivors", survivors, err)
	}
	if left := withCookie(cookie); len(left) != 0 {
		t.Errorf("processes with the cookie remain: %v", left)
	}
}

// TestOddCommandName runs a process whose name contains spaces and
// parentheses, which must not confuse the stat parser.
func TestOddCommandName(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	odd := filepath.Join(t.TempDir(), "a) b (c) ")
	if err := os.Symlink(sleep, odd); err != nil {
		t.Fatal(err)
	}
	cookie := newCookie(t)
	noLeftovers(t, cookie)
	c := startArgv(t, cookie, odd, "1000")
	tree := c.tree(t, cookie)
	comm, _ := os.ReadFile("/proc/" + itoa(tree.Leader.PID) + "/comm")
	t.Logf("comm %q", comm)
	if got := tree.Members(false); len(got) != 1 || got[0] != tree.Leader {
		t.Errorf("Members = %v; want [%v]", got, tree.Leader)
	}
	if !Alive(tree.Leader) {
		t.Error("odd-named process not alive")
	}
	if sv, err := tree.Kill(200 * time.Millisecond); err != nil || len(sv) != 0 {
		t.Errorf("Kill = %v, %v", sv, err)
	}
	c.waitDone(t)
}

func hasSetsid() bool {
	_, err := exec.LookPath("setsid")
	return err == nil
}

// TestKillBadCookie checks that an unusable cookie is reported but does not
// stop Kill from ending the group.
func TestKillBadCookie(t *testing.T) {
	cookie := newCookie(t)
	noLeftovers(t, cookie)
	c := start(t, cookie, "sleep 1016 & wait")
	tree := c.tree(t, "no-equals-sign")
	eventually(t, "the group", func() bool { return len(tree.Members(true)) == 2 })
	survivors, err := tree.Kill(200 * time.Millisecond)
	if err == nil || len(survivors) != 0 {
		t.Errorf("Kill = %v, %v; want no survivors and a cookie error", survivors, err)
	}
	if m := tree.Members(false); len(m) != 0 {
		t.Errorf("members left: %v", m)
	}
	c.waitDone(t)
}

// Many trees ended at once share scans of the process table, and each
// is still ended whole: 8 trees, each with a child that left the group
// (found by its cookie alone), killed at the same time.
func TestKillManyAtOnce(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid (util-linux) not installed")
	}
	const n = 8
	trees := make([]Tree, n)
	for i := range trees {
		cookie := newCookie(t)
		noLeftovers(t, cookie)
		trees[i] = start(t, cookie, "setsid sleep 1007 & sleep 1008 & wait").tree(t, cookie)
		eventually(t, "the tree's processes to start", func() bool { return len(trees[i].Members(true)) == 3 })
	}
	errs := make(chan error, n)
	for _, tr := range trees {
		go func() {
			_, err := tr.Kill(time.Second)
			errs <- err
		}()
	}
	for range trees {
		if err := <-errs; err != nil {
			t.Errorf("Kill: %v", err)
		}
	}
	for i, tr := range trees {
		if left := tr.Members(true); len(left) > 0 {
			t.Errorf("tree %d: %v left after Kill", i, left)
		}
	}
}
