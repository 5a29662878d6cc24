package holder

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc"
)

// TestCheckpointRollback: a checkpoint taken after x = 1 keeps it while
// the session goes on to x = 2; a rollback resumes it in the runtime's
// place (x is 1 again), the old runtime ends, the session is never told
// of a death, and the checkpoint serves a second rollback. The holder's
// end ends the checkpoint too.
func TestCheckpointRollback(t *testing.T) {
	needPython(t)
	w := newWorld(t)
	p, ev := w.start()
	run(t, p, 1, 1, "x = 1")
	ev.until(t, "cell 1's result", func() bool { return len(ev.done) == 1 })
	ck, err := p.Checkpoint("")
	if err != nil {
		t.Fatal(err)
	}
	if ck.Label != "c1" || ck.Cell != 1 || ck.Proc.PID <= 0 || ck.Proc.PID == p.PID() {
		t.Fatalf("the checkpoint: %+v (runtime pid %d)", ck, p.PID())
	}
	if !proc.Stopped(ck.Proc) {
		t.Error("the checkpoint's process is not stopped")
	}
	if cs := p.Checkpoints(); len(cs) != 1 || cs[0].Label != "c1" {
		t.Errorf("the daemon's side lists checkpoints %+v", cs)
	}
	for _, m := range p.Tree().Members(true) {
		if m.PID == ck.Proc.PID {
			t.Errorf("the checkpoint %d is a member of the runtime's tree", m.PID)
		}
	}
	run(t, p, 2, 2, "x = 2")
	ev.until(t, "cell 2's result", func() bool { return len(ev.done) == 2 })

	first := p.Tree().Leader
	for i, cell := range []int{3, 5} {
		rb, err := p.Rollback("")
		if err != nil {
			log, _ := os.ReadFile(w.spawn.Log)
			t.Fatalf("rollback %d: %v; the holder's log:\n%s", i+1, err, log)
		}
		if rb.Checkpoint.Label != "c1" || rb.Leader.PID == first.PID || p.PID() != rb.Leader.PID {
			t.Fatalf("rollback %d: %+v; the daemon's leader %d", i+1, rb, p.PID())
		}
		run(t, p, cell, cell, "print(x)\nx = 2")
		ev.until(t, "the cell after the rollback", func() bool { return len(ev.done) == i+3 })
		if !proc.Alive(ck.Proc) {
			t.Fatal("the checkpoint ended with the rollback")
		}
		for deadline := time.Now().Add(10 * time.Second); proc.Alive(first); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the runtime rolled back from (pid %d) still runs", first.PID)
			}
		}
		first = rb.Leader
	}
	ev.mu.Lock()
	out, exit, lost := ev.out.String(), ev.exit, ev.lost
	ev.mu.Unlock()
	if out != "1\n1\n" {
		t.Errorf("after each rollback x printed %q, want 1 each time", out)
	}
	if exit != nil || lost != "" {
		t.Errorf("the session was told of a death: exit %+v, lost %q", exit, lost)
	}
	if _, err := p.Rollback("nope"); err == nil || !strings.Contains(err.Error(), "no checkpoint") {
		t.Errorf("a rollback to a label nobody took: %v", err)
	}
	p.End()
	for deadline := time.Now().Add(10 * time.Second); proc.Alive(ck.Proc); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the holder's end left the checkpoint")
		}
	}
}
