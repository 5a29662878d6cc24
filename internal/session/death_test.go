package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// A runtime that dies during a cell: the cell's reply says dead, the
// calls after it are refused as dead with the Death, and the next exec
// starts a fresh session under the name whose reply says what was lost to
// a client that had not heard of it.
func TestDeathDuringACell(t *testing.T) {
	for _, tc := range []struct {
		name   string
		exit   driver.Exit
		by     string
		code   int
		signal int
	}{
		{name: "exit", exit: driver.Exit{Code: 3}, by: "exit", code: 3},
		{name: "signal", exit: driver.Exit{Code: -1, Signal: 15}, by: "signal", code: -1, signal: 15},
		{name: "sigkill", exit: driver.Exit{Code: -1, Signal: 9}, by: "signal", code: -1, signal: 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestManager(t)
			execOK(t, m, "s", req("names x"))
			f, ch := startBlocked(t, m, "s", req("print last words\nblock"))
			f.Exit(t, tc.exit)
			r := await(t, ch)
			if r.err != nil || r.r.Status != api.StatusDead || r.r.Cell != 2 || r.r.Output != "last words\n" || r.r.Error == nil {
				t.Fatalf("the cell's reply: %+v, %v; want cell 2 dead with its output and an error", r.r, r.err)
			}
			if n := count(r.r.Notes, api.NoteLost); n != 1 {
				t.Errorf("the cell's reply has %d lost notes, want 1: %v", n, kinds(r.r.Notes))
			}

			_, err := m.Wait(context.Background(), "s", api.WaitRequest{Client: alice}, nil)
			d := wantCode(t, err, "dead").Death
			if d == nil || d.By != tc.by || d.ExitCode != tc.code || d.Signal != tc.signal {
				t.Errorf("wait's death: %+v; want by %q, exit code %d, signal %d", d, tc.by, tc.code, tc.signal)
			}
			_, err = m.Interrupt(context.Background(), "s", api.ControlRequest{Client: bob})
			if d := wantCode(t, err, "dead").Death; d == nil || d.By != tc.by {
				t.Errorf("interrupt's death: %+v; want by %q", d, tc.by)
			}
			i := describe(t, m, "s")
			if i.State != Dead || i.Death == nil || i.Death.By != tc.by {
				t.Errorf("describe: state %q, death %+v", i.State, i.Death)
			}

			fresh := execOK(t, m, "s", reqBy(carol, "value 1"))
			if fresh.Generation == r.r.Generation || fresh.Cell != 1 || fresh.Value != "1" {
				t.Errorf("next exec: generation %s (was %s), cell %d, value %q; want a fresh session's cell 1",
					fresh.Generation, r.r.Generation, fresh.Cell, fresh.Value)
			}
			if count(fresh.Notes, api.NoteLost) != 1 || count(fresh.Notes, api.NoteCreated) != 1 {
				t.Errorf("next exec's notes %v; want lost and created", kinds(fresh.Notes))
			}
			if i := describe(t, m, "s"); i.State != Idle || len(i.Names) != 0 || i.Generation != fresh.Generation {
				t.Errorf("the fresh session: state %q, names %v, generation %s", i.State, i.Names, i.Generation)
			}
			if f.alive() {
				t.Error("the dead runtime's process still runs")
			}
		})
	}
}

// A death is told to the client that ran the cell in several places. This
// test counts them over what a client does next: the dead cell's reply, a
// wait, an interrupt, the exec that starts afresh and one more exec.
func TestHowOftenADeathIsTold(t *testing.T) {
	m := newTestManager(t)
	execOK(t, m, "s", req("value 0"))
	f, ch := startBlocked(t, m, "s", req("block"))
	old := f.gen
	f.Exit(t, driver.Exit{Code: 1})
	dead := await(t, ch)
	if dead.err != nil {
		t.Fatal(dead.err)
	}

	var lost, refused, activity []string // which call told it, each time
	tell := func(call string, r api.CellResult) {
		for range count(r.Notes, api.NoteLost) {
			lost = append(lost, call)
		}
		if r.Activity != nil {
			for _, e := range r.Activity.Entries {
				// The note of the death is by no client: the runtime died.
				if e.Kind == api.EntryNote && e.Generation == old && e.Who == "" {
					activity = append(activity, call)
				}
			}
		}
	}
	tell("dead reply", dead.r)
	var lostRefusals []string
	refusal := func(call string, err error) {
		if codeOf(err) == "dead" {
			refused = append(refused, call)
		}
		if e, ok := err.(*Error); ok && e.Lost != nil {
			lostRefusals = append(lostRefusals, call)
		}
	}
	refusal("wait", second(m.Wait(context.Background(), "s", api.WaitRequest{Client: alice}, nil)))
	refusal("interrupt", second(m.Interrupt(context.Background(), "s", api.ControlRequest{Client: alice})))
	tell("fresh exec", execOK(t, m, "s", req("value 1")))
	tell("next exec", execOK(t, m, "s", req("value 2")))

	// Told in a reply once: in the dead cell's reply, not again in the
	// reply of the exec that starts afresh.
	if want := []string{"dead reply"}; !equal(lost, want) {
		t.Errorf("lost notes in %v, want %v", lost, want)
	}
	// Refused: every call but exec is refused as dead, each time, until an
	// exec starts afresh; the refusal carries the Death. That is intended
	// (there is no session to wait on or interrupt), but the refusal does
	// not tell again what was lost.
	if want := []string{"wait", "interrupt"}; !equal(refused, want) {
		t.Errorf("refused as dead by %v, want %v", refused, want)
	}
	if len(lostRefusals) != 0 {
		t.Errorf("refusals told the loss again: %v", lostRefusals)
	}
	// Nor does the shared record's note of the death come to alice as
	// activity: she heard of it in the dead reply.
	if len(activity) != 0 {
		t.Errorf("the death was told again as activity in %v", activity)
	}
	t.Logf("alice was told the death: as a lost note in %v, as a refusal by %v, as activity in %v", lost, refused, activity)
}

// Bob, who did not run the dying cell, hears of the death once too: as
// the record's activity, or in the first refusal, or when he starts the
// name afresh — and only the first of these tells it.
func TestADeathIsToldOnceToEachClient(t *testing.T) {
	m := newTestManager(t)
	execOK(t, m, "s", reqBy(bob, "value 0"))
	f, ch := startBlocked(t, m, "s", req("block"))
	f.Exit(t, driver.Exit{Code: 1})
	if r := await(t, ch); count(r.r.Notes, api.NoteLost) != 1 {
		t.Fatalf("alice's dead reply: notes %v, want a lost note", kinds(r.r.Notes))
	}
	_, err := m.Wait(context.Background(), "s", api.WaitRequest{Client: bob}, nil)
	if e, ok := err.(*Error); !ok || e.Code != api.CodeDead || e.Lost == nil {
		t.Fatalf("bob's first wait: %v; want refused as dead, saying what was lost", err)
	}
	_, err = m.Wait(context.Background(), "s", api.WaitRequest{Client: bob}, nil)
	if e, ok := err.(*Error); !ok || e.Code != api.CodeDead || e.Lost != nil {
		t.Errorf("bob's second wait: %#v; want refused as dead, without the loss again", err)
	}
	fresh := execOK(t, m, "s", reqBy(bob, "value 1"))
	if n := count(fresh.Notes, api.NoteLost); n != 0 {
		t.Errorf("bob's fresh exec told the loss again: notes %v", kinds(fresh.Notes))
	}
	if a := fresh.Activity; a != nil {
		for _, e := range a.Entries {
			if e.Note != nil && e.Note.Kind == api.NoteEnded {
				t.Errorf("bob's fresh exec told the death again as activity: %+v", e.Note)
			}
		}
	}
}

// A session that died with a cell nobody collected is mentioned to a
// client busy elsewhere, with what it lost, once; the reply that then
// collects the cell does not tell the death again.
func TestADeadSessionElsewhereIsMentionedOnce(t *testing.T) {
	m := newTestManager(t)
	execOK(t, m, "s", req("names kept"))
	x := req("block")
	x.Timeout = short
	r := execOK(t, m, "s", x)
	fakeOf(t, r.Generation).Exit(t, driver.Exit{Code: 1})
	first := execOK(t, m, "other", req("value 1"))
	var others []api.Other
	for _, n := range first.Notes {
		if n.Kind == api.NoteOthers {
			others = append(others, n.Others...)
		}
	}
	if len(others) != 1 || others[0].Session != "s" || others[0].State != Dead || others[0].Death == nil || !equal(others[0].Names, []string{"kept"}) {
		t.Fatalf("the first exec elsewhere: others %+v; want s, dead, with its death and lost names", others)
	}
	if again := execOK(t, m, "other", req("value 2")); count(again.Notes, api.NoteOthers) != 0 {
		t.Errorf("the death was mentioned again: notes %v", kinds(again.Notes))
	}
	w, err := m.Wait(context.Background(), "s", api.WaitRequest{Client: alice}, nil)
	if err != nil || w.Status != api.StatusDead || count(w.Notes, api.NoteLost) != 0 {
		t.Errorf("collecting the dead cell: %+v, %v; want it dead, without the loss told again", w, err)
	}
}

// A session that dies while idle: the next wait is refused as dead, and
// the next exec starts afresh and says what was lost to a client that
// had not heard of it.
func TestDeathWhileIdle(t *testing.T) {
	m := newTestManager(t)
	r := execOK(t, m, "s", req("names a b"))
	fakeOf(t, r.Generation).Exit(t, driver.Exit{Code: -1, Signal: 9})
	_, err := m.Wait(context.Background(), "s", api.WaitRequest{Client: alice}, nil)
	if d := wantCode(t, err, "dead").Death; d == nil || d.By != "signal" || d.Signal != 9 {
		t.Errorf("death %+v; want by signal 9", d)
	} else if strings.Contains(d.Cause, "outside") || strings.Contains(d.Cause, "often") {
		t.Errorf("death %q guesses who sent the signal", d.Cause)
	}
	fresh := execOK(t, m, "s", reqBy(bob, "value 1"))
	if fresh.Generation == r.Generation || count(fresh.Notes, api.NoteLost) != 1 {
		t.Errorf("next exec: generation %s (was %s), notes %v; want a fresh session and a lost note", fresh.Generation, r.Generation, kinds(fresh.Notes))
	}
}

// A cell nobody waited for when the session died: the first wait collects
// it, as dead, once; the wait after is refused as dead.
func TestDeadCellIsCollectedOnce(t *testing.T) {
	m := newTestManager(t)
	x := req("print going\nblock")
	x.Timeout = short
	r := execOK(t, m, "s", x)
	f := fakeOf(t, r.Generation)
	f.Print("gone\n")
	f.Exit(t, driver.Exit{Code: 2})
	if i := describe(t, m, "s"); !i.Unread || i.State != Dead {
		t.Errorf("describe: state %q, unread %v; want dead with the cell unread", i.State, i.Unread)
	}
	w, err := m.Wait(context.Background(), "s", api.WaitRequest{Client: bob}, nil)
	if err != nil || w.Status != api.StatusDead || w.Cell != 1 || w.Output != "going\ngone\n" || count(w.Notes, api.NoteLost) != 1 {
		t.Fatalf("first wait: %+v, %v; want cell 1 dead with all its output (bob read none of it) and a lost note", w, err)
	}
	_, err = m.Wait(context.Background(), "s", api.WaitRequest{Client: bob}, nil)
	wantCode(t, err, "dead")
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// An exec sent the moment the dead cell's reply comes must find the death
// fully recorded: the fresh life tells what was lost, no death note is
// left for a later life to tell, and the fresh life stays recorded as live.
// (Manager.Exec waits for the death to be written down before a new life
// of the name starts.)
func TestExecRightAfterADeath(t *testing.T) {
	m := newTestManager(t)
	f, ch := startBlocked(t, m, "s", req("block"))
	f.exit(driver.Exit{Code: 1}) // no waiting for Exited to return
	if r := await(t, ch); r.r.Status != api.StatusDead {
		t.Fatalf("the cell's reply: %+v, %v", r.r, r.err)
	}
	fresh := execOK(t, m, "s", reqBy(bob, "value 1"))
	f.waitExited(t)
	if n := count(fresh.Notes, api.NoteLost); n != 1 {
		t.Errorf("the fresh exec has %d lost notes, want 1", n)
	}
	if loss, _ := dirsOf(m).state.Loss("s"); loss != nil {
		t.Errorf("a death note is left for a later life: %+v", loss.Death)
	}
	if lives, _ := dirsOf(m).state.Lives(); len(lives) != 1 || lives[0].Generation != fresh.Generation {
		t.Errorf("live records %+v, want the fresh life's", lives)
	}
}

// A name whose life died unasked starts again as that life was started
// (here its working directory), and says so; after a kill too (its
// runtime, directory and memory limit, from the death note, which a
// later daemon reads as well) unless the call names another runtime,
// which the creation line then says it replaced.
func TestANewLifeAfterADeathNobodyAskedFor(t *testing.T) {
	m := newTestManager(t)
	dir := t.TempDir()
	first := req("value 0")
	first.Spawn.Cwd = dir
	first.Spawn.Memory = 1 << 30
	r := execOK(t, m, "s", first)
	fakeOf(t, r.Generation).Exit(t, driver.Exit{Code: 3})
	if _, err := m.Wait(context.Background(), "s", api.WaitRequest{Client: alice}, nil); codeOf(err) != "dead" {
		t.Fatalf("wait after the death: %v, want dead", err)
	}

	again := execOK(t, m, "s", req("value 1")) // asks for cwd "/"
	if i := describe(t, m, "s"); i.Cwd != dir {
		t.Errorf("the life after an exit runs in %s, want %s as the one before", i.Cwd, dir)
	}
	created := false
	for _, n := range again.Notes {
		created = created || (n.Kind == api.NoteCreated && n.Again && n.Ended == "" && n.Cwd == dir)
	}
	if !created {
		t.Errorf("notes %+v, want a created note saying it started as before", again.Notes)
	}

	if _, err := m.Kill("s", api.ControlRequest{Client: alice}); err != nil {
		t.Fatal(err)
	}
	if sp, lin := m.respawn("s", nil, api.Spawn{Runtime: "other", Cwd: "/"}); sp.Runtime != "other" || lin.again || lin.replaced != fakeRuntime {
		t.Errorf("a call naming another runtime after a kill: runtime %q, %+v; want its own, replacing %s", sp.Runtime, lin, fakeRuntime)
	}
	plain := req("value 2")
	plain.Spawn.Runtime = "" // as a client sends a call that names no runtime
	after := execOK(t, m, "s", plain)
	i := describe(t, m, "s")
	if i.Cwd != dir || i.Runtime != fakeRuntime {
		t.Errorf("the life after a kill: %s in %s, want %s in %s as the one before", i.Runtime, i.Cwd, fakeRuntime, dir)
	}
	s := m.get("s")
	if s.Spawn.Memory != 1<<30 {
		t.Errorf("the life after a kill has the memory limit %d, want the one before's %d", s.Spawn.Memory, 1<<30)
	}
	created = false
	for _, n := range after.Notes {
		created = created || (n.Kind == api.NoteCreated && n.Again && n.Ended == api.ByKill && n.Runtime == fakeRuntime)
	}
	if !created {
		t.Errorf("notes %+v, want a created note saying it started as the killed life", after.Notes)
	}
}

// An end under way when its daemon ended is the death's cause, with what
// the next daemon found; a restart that never began its new life is told
// as the end of the old one.
func TestInterruptedEnd(t *testing.T) {
	at := time.Unix(1, 0)
	for _, tc := range []struct {
		by, cause, how string
		wantBy, want   string
	}{
		{api.ByKill, "killed by alice via cli", "the next daemon finished it", api.ByKill,
			"killed by alice via cli (the daemon ended while the kill was under way; the next daemon finished it)"},
		{api.ByStop, "stopped with the daemon, on request", "the runtime had ended when the next daemon started", api.ByStop,
			"stopped with the daemon, on request (the daemon ended while the stop was under way; the runtime had ended when the next daemon started)"},
		{api.ByRestart, "restarted by bob via mcp", "the next daemon finished it", api.ByKill,
			"restarted by bob via mcp (the daemon ended while the restart was under way; the next daemon finished it); the new life was not started: the next exec starts one"},
	} {
		dying := &api.Death{By: tc.by, Cause: tc.cause, At: at}
		d := interruptedEnd(dying, tc.how)
		if d.By != tc.wantBy || d.Cause != tc.want || d.At.Equal(at) || dying.Cause != tc.cause {
			t.Errorf("interruptedEnd(%s) = %s %q at %v; want %s %q, now, and the journalled death unchanged", tc.by, d.By, d.Cause, d.At, tc.wantBy, tc.want)
		}
	}
}
