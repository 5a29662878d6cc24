package holder

import (
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc"
)

// TestForkHolder: a holder started as a fork adopts a copy of another
// holder's runtime, taken between cells: the same names, each changing
// its own from then on; its hello says what the copy was made from; the
// parent's tree leaves the copy out, and the fork's end ends the copy.
func TestForkHolder(t *testing.T) {
	needPython(t)
	w := newWorld(t)
	p, ev := w.start()
	run(t, p, 1, 1, "x = [1, 2, 3]")
	ev.until(t, "cell 1's result", func() bool { return len(ev.done) == 1 })
	if p.Hello().ForkDir == "" {
		t.Fatal("the parent's hello names no directory for a fork's channels")
	}

	fw := &world{t: t, dir: w.dir, spawn: w.spawn}
	gen := w.spawn.Generation + "f"
	fw.spawn.Name, fw.spawn.Generation, fw.spawn.Cookie = "f", gen, "POLYREPL_TEST_HOLDER="+gen
	fw.spawn.Socket = SocketName(w.dir+"/holders", gen)
	fw.spawn.Fork = &ForkBrief{From: "s", Dir: p.Hello().ForkDir}
	fw.spawn.ForkFrom = p.Fork
	q, fev := fw.start()
	hi := q.Hello()
	if hi.Forked == nil || hi.Forked.Cell != 1 || hi.Forked.Generation != w.spawn.Generation || hi.Leader.PID == p.PID() || hi.Leader.PID != hi.Forked.PID {
		t.Fatalf("the fork's hello: leader %+v, forked %+v (parent pid %d)", hi.Leader, hi.Forked, p.PID())
	}
	run(t, q, 2, 2, "x.append(4)\nprint(x)")
	fev.until(t, "the fork's cell", func() bool { return len(fev.done) == 1 })
	run(t, p, 2, 2, "print(x)")
	ev.until(t, "the parent's cell", func() bool { return len(ev.done) == 2 })
	fev.mu.Lock()
	fout := fev.out.String()
	fev.mu.Unlock()
	ev.mu.Lock()
	pout := ev.out.String()
	ev.mu.Unlock()
	if fout != "[1, 2, 3, 4]\n" || pout != "[1, 2, 3]\n" {
		t.Errorf("the fork printed %q, the parent %q", fout, pout)
	}
	// The parent's holder asks its driver for the tree, which spares the
	// copy; the daemon's view (its hello) is the same leader.
	for _, m := range p.Tree().Members(true) {
		if m.PID == hi.Leader.PID {
			t.Errorf("the copy %d is a member of the parent's tree as its daemon sees it", m.PID)
		}
	}
	copyProc := hi.Leader
	q.End()
	for deadline := time.Now().Add(10 * time.Second); proc.Alive(copyProc); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the fork's end did not end the copy")
		}
	}
	run(t, p, 3, 3, "print(len(x))")
	ev.until(t, "the parent's cell after the fork ended", func() bool { return len(ev.done) == 3 })
}
