package session

import (
	"context"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// Kill ends the session and its processes: it is no longer listed, its
// names are gone, calls on it are refused as dead with how it was killed,
// and the next exec starts a fresh session that says what was lost to a
// client that had not heard of it (the killer heard it in the reply).
func TestKill(t *testing.T) {
	m := newTestManager(t)
	r := execOK(t, m, "s", req("names x y"))
	f := fakeOf(t, r.Generation)
	k, err := m.Kill("s", api.ControlRequest{Client: alice})
	if err != nil {
		t.Fatal(err)
	}
	if k.Info.State != Dead || k.Info.Death == nil || k.Info.Death.By != "kill" || k.Info.Generation != r.Generation {
		t.Errorf("kill reply: state %q, death %+v, generation %s", k.Info.State, k.Info.Death, k.Info.Generation)
	}
	if !equal(k.Info.Names, []string{"x", "y"}) {
		t.Errorf("kill reply names %v, want the names lost: [x y]", k.Info.Names)
	}
	f.waitExited(t)
	if f.alive() {
		t.Error("the killed session's process still runs")
	}
	if l := m.List(false); len(l) != 0 {
		t.Errorf("listed after kill: %+v", l)
	}
	for call, err := range map[string]error{
		"wait":     second(m.Wait(context.Background(), "s", api.WaitRequest{Client: alice}, nil)),
		"describe": second(m.Describe("s", api.Client{})),
		"kill":     second(m.Kill("s", api.ControlRequest{Client: alice})),
	} {
		if d := wantCode(t, err, "dead").Death; d == nil || d.By != "kill" {
			t.Errorf("%s after kill: death %+v, want by kill", call, d)
		}
	}

	fresh := execOK(t, m, "s", reqBy(carol, "value 1"))
	if fresh.Generation == r.Generation || fresh.Cell != 1 || count(fresh.Notes, api.NoteLost) != 1 {
		t.Errorf("exec after kill: generation %s (was %s), cell %d, notes %v; want a fresh cell 1 and a lost note",
			fresh.Generation, r.Generation, fresh.Cell, kinds(fresh.Notes))
	}
	if i := describe(t, m, "s"); len(i.Names) != 0 || i.State != Idle {
		t.Errorf("after kill and exec: names %v, state %q", i.Names, i.State)
	}
}

// Kill during a cell ends the cell as dead.
func TestKillDuringACell(t *testing.T) {
	m := newTestManager(t)
	_, ch := startBlocked(t, m, "s", req("print working\nblock"))
	if _, err := m.Kill("s", api.ControlRequest{Client: bob}); err != nil {
		t.Fatal(err)
	}
	r := await(t, ch)
	if r.err != nil || r.r.Status != api.StatusDead || r.r.Output != "working\n" {
		t.Errorf("the running cell's reply: %+v, %v; want dead with its output", r.r, r.err)
	}
}

// Restart replaces the process with a fresh one, started the same way:
// a new generation, an empty namespace, cells from 1 again; the old
// generation is stale, and no death is told since nothing was lost
// unasked.
func TestRestart(t *testing.T) {
	m := newTestManager(t)
	r := execOK(t, m, "s", req("names x"))
	old := fakeOf(t, r.Generation)
	k, err := m.Restart(context.Background(), "s", api.ControlRequest{Client: alice})
	if err != nil {
		t.Fatal(err)
	}
	if k.Info.Generation == r.Generation || k.Info.State != Idle || len(k.Info.Names) != 0 || k.Info.Runtime != fakeRuntime {
		t.Errorf("restart reply: generation %s (was %s), state %q, names %v, runtime %q",
			k.Info.Generation, r.Generation, k.Info.State, k.Info.Names, k.Info.Runtime)
	}
	old.waitExited(t)
	if old.alive() {
		t.Error("the old process still runs")
	}
	if n := startedIn(m); n != 2 {
		t.Errorf("%d processes started, want 2", n)
	}
	x := req("value 1")
	x.Generation = k.Info.Generation
	next := execOK(t, m, "s", x)
	if next.Cell != 1 || next.Generation != k.Info.Generation || count(next.Notes, api.NoteLost) != 0 || count(next.Notes, api.NoteCreated) != 0 {
		t.Errorf("exec after restart: cell %d, generation %s, notes %v; want cell 1 of the new generation, no lost or created note",
			next.Cell, next.Generation, kinds(next.Notes))
	}
	x.Generation = r.Generation
	_, err = m.Exec(context.Background(), "s", x, nil)
	wantCode(t, err, "stale")
}

// A request names the life it means by its generation: an earlier one is
// refused as stale, the current one works, and none reaches the current.
func TestGenerations(t *testing.T) {
	m := newTestManager(t)
	first := execOK(t, m, "s", req("value 1")).Generation
	if _, err := m.Restart(context.Background(), "s", api.ControlRequest{Client: alice}); err != nil {
		t.Fatal(err)
	}
	current := describe(t, m, "s").Generation

	for _, tc := range []struct {
		name string
		gen  string
		want string // the error code, or "" for none
	}{
		{"earlier", first, "stale"},
		{"unknown", "0123456789ab", "stale"},
		{"current", current, ""},
		{"none", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := req("value 2")
			x.Generation = tc.gen
			calls := map[string]func() (string, error){
				"exec": func() (string, error) {
					r, err := m.Exec(context.Background(), "s", x, nil)
					return r.Generation, err
				},
				"wait": func() (string, error) {
					r, err := m.Wait(context.Background(), "s", api.WaitRequest{Client: alice, Generation: tc.gen}, nil)
					return r.Generation, err
				},
				"interrupt": func() (string, error) {
					r, err := m.Interrupt(context.Background(), "s", api.ControlRequest{Client: alice, Generation: tc.gen})
					return r.Generation, err
				},
			}
			for call, do := range calls {
				gen, err := do()
				if got := codeOf(err); got != tc.want || (tc.want == "" && err != nil) {
					t.Errorf("%s: error %v (code %q), want code %q", call, err, got, tc.want)
				}
				if tc.want == "" && gen != current {
					t.Errorf("%s reached generation %s, want the current %s", call, gen, current)
				}
			}
			if i := describe(t, m, "s"); i.Generation != current || i.State != Idle {
				t.Errorf("after the calls: generation %s, state %q", i.Generation, i.State)
			}
		})
	}
	// Kill and restart with an earlier generation are refused too, and
	// leave the session alone.
	if _, err := m.Restart(context.Background(), "s", api.ControlRequest{Client: alice, Generation: first}); codeOf(err) != "stale" {
		t.Errorf("restart of an earlier generation: %v", err)
	}
	if _, err := m.Kill("s", api.ControlRequest{Client: alice, Generation: first}); codeOf(err) != "stale" {
		t.Errorf("kill of an earlier generation: %v", err)
	}
	if i := describe(t, m, "s"); i.Generation != current || i.State != Idle {
		t.Errorf("after stale kill and restart: generation %s, state %q", i.Generation, i.State)
	}
}

// Calls on a name that never had a session are refused as no-session.
func TestNoSession(t *testing.T) {
	m := newTestManager(t)
	for call, err := range map[string]error{
		"wait":      second(m.Wait(context.Background(), "nope", api.WaitRequest{Client: alice}, nil)),
		"interrupt": second(m.Interrupt(context.Background(), "nope", api.ControlRequest{Client: alice})),
		"kill":      second(m.Kill("nope", api.ControlRequest{Client: alice})),
		"restart":   second(m.Restart(context.Background(), "nope", api.ControlRequest{Client: alice})),
		"describe":  second(m.Describe("nope", api.Client{})),
	} {
		if got := codeOf(err); got != "no-session" {
			t.Errorf("%s: error %v (code %q), want no-session", call, err, got)
		}
	}
	if n := startedIn(m); n != 0 {
		t.Errorf("%d processes started", n)
	}
}

// second drops a call's result, keeping its error.
func second[T any](_ T, err error) error { return err }

// A kill reports its own facts: a kill of a session that died before it
// ended nothing and is refused as dead with that death (its time and its
// cause), never a kill of its own; a kill of a later life reports that
// life's end, not the earlier one's.
func TestKillOfTheDeadSaysItsDeath(t *testing.T) {
	m := newTestManager(t)
	r := execOK(t, m, "s", req("value 0"))
	fakeOf(t, r.Generation).Exit(t, driver.Exit{Code: 3})
	died := describe(t, m, "s").Death
	if died == nil {
		t.Fatal("no death after the runtime's exit")
	}
	for i := range 2 {
		_, err := m.Kill("s", api.ControlRequest{Client: bob})
		if d := wantCode(t, err, "dead").Death; d == nil || d.By != api.ByExit || !d.At.Equal(died.At) {
			t.Errorf("kill %d of a session that exited: death %+v, want its exit at %s", i+1, d, died.At)
		}
	}

	r = execOK(t, m, "s", req("value 1"))
	k, err := m.Kill("s", api.ControlRequest{Client: alice})
	if err != nil {
		t.Fatal(err)
	}
	if d := k.Info.Death; d == nil || d.By != api.ByKill || !d.At.After(died.At) || k.Info.Generation != r.Generation {
		t.Errorf("kill of the next life: %+v (generation %s), want its own kill, after %s", d, k.Info.Generation, died.At)
	}
	_, err = m.Kill("s", api.ControlRequest{Client: alice})
	if d := wantCode(t, err, "dead").Death; d == nil || d.By != api.ByKill || !d.At.Equal(k.Info.Death.At) {
		t.Errorf("kill after a kill: death %+v, want the kill at %s", d, k.Info.Death.At)
	}
}
