package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// short is a timeout that passes at once, in seconds.
var short = api.Seconds(0.02)

// A second cell while one runs is refused as busy, from any client, and
// changes nothing: the running cell goes on and Wait collects it.
func TestBusyRefusesAndChangesNothing(t *testing.T) {
	m := newTestManager(t)
	first := req("print started\nblock")
	first.Timeout = short
	r := execOK(t, m, "s", first)
	if r.Status != api.StatusRunning || r.Cell != 1 {
		t.Fatalf("first cell: status %q, cell %d; want running cell 1", r.Status, r.Cell)
	}
	f := fakeOf(t, r.Generation)
	f.WaitRun(t)

	for _, c := range []api.Client{alice, bob} {
		second := req("value 2")
		second.Client = c
		_, err := m.Exec(context.Background(), "s", second, nil)
		wantCode(t, err, "busy")
	}
	if len(f.runs) != 0 {
		t.Errorf("a refused cell reached the runtime: %+v", <-f.runs)
	}
	i := describe(t, m, "s")
	if i.State != Running || i.Cells != 1 || i.Running == nil || i.Running.Cell != 1 || i.Generation != r.Generation {
		t.Errorf("after the refusals: state %q, cells %d, running %+v, generation %s", i.State, i.Cells, i.Running, i.Generation)
	}

	f.Print("finished\n")
	f.Finish(driver.Result{Value: "1"})
	w, err := m.Wait(context.Background(), "s", api.WaitRequest{Client: alice}, nil)
	if err != nil || w.Cell != 1 || w.Status != api.StatusDone || w.Value != "1" || w.Output != "finished\n" {
		t.Fatalf("wait: %+v, %v; want cell 1 done with its value and the rest of its output", w, err)
	}
	if n := execOK(t, m, "s", req("value 2")); n.Cell != 2 {
		t.Errorf("the next cell is cell %d, want 2", n.Cell)
	}
}

// A call whose timeout passes says the cell is running and leaves it
// running; Wait collects the rest: each piece of output told once.
func TestTimeoutLeavesTheCellRunning(t *testing.T) {
	m := newTestManager(t)
	x := req("print one\nblock")
	x.Timeout = short
	r := execOK(t, m, "s", x)
	if r.Status != api.StatusRunning || r.Output != "one\n" || count(r.Notes, api.NoteRunning) != 1 {
		t.Fatalf("exec: status %q, output %q, notes %v; want running, one, a running note", r.Status, r.Output, kinds(r.Notes))
	}
	f := fakeOf(t, r.Generation)

	f.Print("two\n")
	w1, err := m.Wait(context.Background(), "s", api.WaitRequest{Client: alice, Timeout: short}, nil)
	if err != nil || w1.Status != api.StatusRunning || w1.Output != "two\n" || w1.Cell != 1 {
		t.Fatalf("first wait: %+v, %v; want running with the new output only", w1, err)
	}
	if i := describe(t, m, "s"); i.State != Running {
		t.Errorf("after the timeouts the session is %q, want running", i.State)
	}

	f.Print("three\n")
	f.Finish(driver.Result{Value: "v"})
	w2, err := m.Wait(context.Background(), "s", api.WaitRequest{Client: alice}, nil)
	if err != nil || w2.Status != api.StatusDone || w2.Output != "three\n" || w2.Value != "v" {
		t.Fatalf("second wait: %+v, %v; want done with the last output and the value", w2, err)
	}
	w3, err := m.Wait(context.Background(), "s", api.WaitRequest{Client: alice}, nil)
	if err != nil || w3.Output != "" || w3.Value != "" || count(w3.Notes, api.NoteCollected) != 1 {
		t.Errorf("third wait: %+v, %v; want nothing new to collect", w3, err)
	}
}

// A timeout of 0 is the one rule for "start it and answer at once":
// exec answers running without waiting, wait with 0 looks without
// waiting, and a later wait collects.
func TestTimeoutZeroAnswersAtOnce(t *testing.T) {
	m := newTestManager(t)
	x := req("print one\nblock")
	x.Timeout = api.Seconds(0)
	r := execOK(t, m, "s", x)
	if r.Status != api.StatusRunning || r.Cell != 1 || count(r.Notes, api.NoteRunning) != 1 {
		t.Fatalf("exec -t 0: status %q, cell %d, notes %v; want cell 1 running with a running note", r.Status, r.Cell, kinds(r.Notes))
	}
	f := fakeOf(t, r.Generation)
	f.WaitRun(t)
	w, err := m.Wait(context.Background(), "s", api.WaitRequest{Client: alice, Timeout: api.Seconds(0)}, nil)
	if err != nil || w.Status != api.StatusRunning || w.Cell != 1 {
		t.Fatalf("wait -t 0 while it runs: %+v, %v; want cell 1 running", w, err)
	}
	f.Finish(driver.Result{Value: "v"})
	w, err = m.Wait(context.Background(), "s", api.WaitRequest{Client: alice}, nil)
	if err != nil || w.Status != api.StatusDone || w.Value != "v" {
		t.Fatalf("wait after it finished: %+v, %v; want done with its value", w, err)
	}
}

// A result nobody collected (its caller went away) comes with the next
// cell's reply as a note of kind uncollected, once; until then the
// session shows it unread.
func TestUncollectedResultComesWithTheNextReply(t *testing.T) {
	m := newTestManager(t)
	ctx, cancel := context.WithCancel(context.Background())
	ch := execAsync(ctx, m, "s", req("print early\nblock"))
	f := waitFake(t, m, "s")
	f.WaitRun(t)
	cancel()
	if r := await(t, ch); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("a cancelled call answered %+v, %v", r.r, r.err)
	}
	f.Print("late\n")
	f.Finish(driver.Result{Value: "7"})
	if i := describe(t, m, "s"); !i.Unread || i.State != Idle {
		t.Errorf("describe: unread %v, state %q; want an idle session with something unread", i.Unread, i.State)
	}

	r2 := execOK(t, m, "s", req("value 8"))
	if r2.Cell != 2 || r2.Value != "8" || r2.Output != "" {
		t.Errorf("next cell: cell %d, value %q, output %q; want cell 2's own result only", r2.Cell, r2.Value, r2.Output)
	}
	if n := count(r2.Notes, api.NoteUncollected); n != 1 {
		t.Errorf("next cell: %d uncollected notes, want 1; notes %v", n, kinds(r2.Notes))
	}
	r3 := execOK(t, m, "s", req("value 9"))
	if n := count(r3.Notes, api.NoteUncollected); n != 0 {
		t.Errorf("the cell after: %d uncollected notes, want 0 (told once)", n)
	}
	if i := describe(t, m, "s"); i.Unread {
		t.Error("the session still shows something unread")
	}
}

// A result collected by Wait is not told again as uncollected.
func TestResultCollectedByWaitIsNotUncollected(t *testing.T) {
	m := newTestManager(t)
	x := req("block")
	x.Timeout = short
	r := execOK(t, m, "s", x)
	fakeOf(t, r.Generation).Finish(driver.Result{Value: "1"})
	if w, err := m.Wait(context.Background(), "s", api.WaitRequest{Client: bob}, nil); err != nil || w.Value != "1" {
		t.Fatalf("wait: %+v, %v", w, err)
	}
	if r2 := execOK(t, m, "s", req("value 2")); count(r2.Notes, api.NoteUncollected) != 0 {
		t.Errorf("a collected result was told again: notes %v", kinds(r2.Notes))
	}
}

// Interrupt stops the running cell and returns its result; with nothing
// running it says so and changes nothing.
func TestInterrupt(t *testing.T) {
	m := newTestManager(t)
	ctl := api.ControlRequest{Client: alice}
	r0 := execOK(t, m, "s", req("value 0"))
	idle, err := m.Interrupt(context.Background(), "s", ctl)
	if err != nil || idle.Cell != 1 || idle.Status != api.StatusDone || count(idle.Notes, api.NoteNotRunning) != 1 {
		t.Errorf("interrupt while idle: %+v, %v; want cell 1 as it was and a note", idle, err)
	}

	x := req("print partial\nblock")
	x.Timeout = short
	execOK(t, m, "s", x)
	f := fakeOf(t, r0.Generation)
	r, err := m.Interrupt(context.Background(), "s", ctl)
	if err != nil || r.Status != api.StatusInterrupted || r.Cell != 2 || r.Output != "" {
		t.Fatalf("interrupt: %+v, %v; want cell 2 interrupted, its output already told", r, err)
	}
	// The interrupt made while idle did not reach the runtime; the cell
	// stopped at the first attempt.
	if a := f.Attempts(); len(a) != 1 || a[0] != 0 {
		t.Errorf("interrupt attempts sent to the runtime: %v, want [0]", a)
	}
	if i := describe(t, m, "s"); i.State != Idle {
		t.Errorf("after interrupt the session is %q, want idle", i.State)
	}
}

// Every client reads a cell from its own position: an interrupt from
// another client gets the cell's output and result, told whose cell it
// is, and the sender's exec still gets all of it; a sender whose timeout
// passed gets the rest with its wait, whoever read it meanwhile.
func TestEveryReaderReadsTheCell(t *testing.T) {
	m := newTestManager(t)
	execOK(t, m, "s", req("value 0"))
	f, ch := startBlocked(t, m, "s", req("print partial\nblock"))
	r, err := m.Interrupt(context.Background(), "s", api.ControlRequest{Client: bob})
	if err != nil || r.Status != api.StatusInterrupted || r.Cell != 2 || r.Output != "partial\n" || count(r.Notes, api.NoteSentBy) != 1 {
		t.Fatalf("bob's interrupt: %+v, %v; want cell 2 interrupted, its output, a note that alice sent it", r, err)
	}
	for _, n := range r.Notes {
		if n.Kind == api.NoteSentBy && (n.Client == nil || n.Client.Who != alice.Who) {
			t.Errorf("the note names %+v, want alice", n.Client)
		}
	}
	sent := await(t, ch)
	if sent.err != nil || sent.r.Status != api.StatusInterrupted || sent.r.Output != "partial\n" || count(sent.r.Notes, api.NoteSentBy) != 0 {
		t.Errorf("alice's exec: %+v, %v; want its output", sent.r, sent.err)
	}

	// The sender stopped waiting (its timeout passed): the interrupt
	// reads the cell from its start, and the sender's wait the rest.
	x := req("print more\nblock")
	x.Timeout = short
	first := execOK(t, m, "s", x)
	f.Print("late\n")
	r, err = m.Interrupt(context.Background(), "s", api.ControlRequest{Client: bob})
	if err != nil || r.Status != api.StatusInterrupted || r.Output != "more\nlate\n" {
		t.Errorf("bob's interrupt with nobody waiting: %+v, %v; want all the cell printed", r, err)
	}
	w, err := m.Wait(context.Background(), "s", api.WaitRequest{Client: alice, Timeout: short}, nil)
	if err != nil || first.Output+w.Output != "more\nlate\n" || w.Status != api.StatusInterrupted {
		t.Errorf("alice's wait: %+v, %v after %q; want the rest of her cell and its end", w, err, first.Output)
	}
	w, err = m.Wait(context.Background(), "s", api.WaitRequest{Client: alice, Timeout: short}, nil)
	if err != nil || w.Output != "" || count(w.Notes, api.NoteCollected) != 1 {
		t.Errorf("alice's second wait: %+v, %v; want nothing new", w, err)
	}
}

// A cell running in another session is told to each client once when it
// starts and once when it ends uncollected, not on every call between;
// another client hears of it for itself.
func TestOthersToldOnce(t *testing.T) {
	m := newTestManager(t)
	x := req("print started\nblock")
	x.Timeout = short
	r := execOK(t, m, "a", x)
	f := fakeOf(t, r.Generation)
	f.WaitRun(t)
	if n := count(execOK(t, m, "b", req("value 1")).Notes, api.NoteOthers); n != 1 {
		t.Fatalf("the first call elsewhere has %d others notes, want 1", n)
	}
	for i := 0; i < 3; i++ {
		if n := count(execOK(t, m, "b", req("value 1")).Notes, api.NoteOthers); n != 0 {
			t.Fatalf("call %d elsewhere told the running cell again", i+2)
		}
	}
	if n := count(execOK(t, m, "b", reqBy(bob, "value 1")).Notes, api.NoteOthers); n != 1 {
		t.Errorf("another client was not told of the running cell")
	}
	f.Finish(driver.Result{Value: "9"})
	for deadline := time.Now().Add(10 * time.Second); describe(t, m, "a").Running != nil; {
		if time.Now().After(deadline) {
			t.Fatal("the cell did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := count(execOK(t, m, "b", req("value 1")).Notes, api.NoteOthers); n != 1 {
		t.Errorf("the cell's end, uncollected, was not told")
	}
	if n := count(execOK(t, m, "b", req("value 1")).Notes, api.NoteOthers); n != 0 {
		t.Errorf("the uncollected result was told twice")
	}
}
