package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

func mkdir(dir string) error { return os.MkdirAll(dir, 0o755) }

// TestTimeoutThenWait checks that a caller giving up never stops the cell:
// exec returns 124 with what was printed so far, wait returns the rest and
// the result, nothing is lost or repeated, a second wait says there is
// nothing new, and wait itself times out with 124 on a running cell.
func TestTimeoutThenWait(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)

	code := "import time\nprint('alpha-mark', flush=True)\ntime.sleep(2)\nprint('beta-mark')\n42"
	out, errOut, status := e.run("exec", "tw", code, "-t", "1")
	if status != 124 {
		t.Fatalf("exec -t 1 of a 2 s cell: exit %d, want 124\n%s%s", status, out, errOut)
	}
	wantContains(t, "exec output", out, "alpha-mark")
	wantContains(t, "exec's note, on standard error", errOut, "wait")
	wantLacks(t, "exec output", out+errOut, "beta-mark", "Out[")

	out, errOut, status = e.run("wait", "tw")
	if status != 0 {
		t.Fatalf("wait: exit %d, want 0\n%s%s", status, out, errOut)
	}
	wantContains(t, "wait output", out, "beta-mark\n", "Out[1]: 42\n")
	wantLacks(t, "wait output", out, "alpha-mark")

	out = e.mustSeen(0, "wait", "tw")
	wantContains(t, "second wait", out, "Nothing new")
	wantLacks(t, "second wait", out, "beta-mark", "Out[1]")

	// Output printed across the timeout is split between exec and wait,
	// exactly once each.
	r1 := e.runJSON("exec", "tw", "for i in range(30):\n    print(i, flush=True)\n    time.sleep(0.05)\n'end'", "-t", "0.5")
	if r1.code != 124 || r1.Status != "running" || len(r1.notesOf("running")) == 0 {
		t.Fatalf("exec -t 0.5 of a 1.5 s cell: want exit 124, status running and a running note: %v", r1)
	}
	r2 := e.runJSON("wait", "tw")
	if r2.code != 0 || r2.Status != "done" || r2.Value != "'end'" || r2.Cell != 2 {
		t.Fatalf("wait: want status done, value 'end', cell 2: %v", r2)
	}
	var want strings.Builder
	for i := range 30 {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if got := r1.Output + r2.Output; got != want.String() {
		t.Errorf("exec output + wait output = %q, want 0..29 once each", got)
	}

	// wait -t on a cell that still runs.
	e.must(124, "exec", "tw", "time.sleep(3)", "-t", "0.3")
	out, _, status = e.run("wait", "tw", "-t", "1")
	if status != 124 {
		t.Errorf("wait -t 1 on a running cell: exit %d, want 124: %s", status, out)
	}
	r := e.runJSON("wait", "tw")
	if r.code != 0 || r.Status != "done" || r.Cell != 3 {
		t.Errorf("final wait: %v", r)
	}
}

// TestUncollectedComesWithNextCell checks that moving on without wait
// loses nothing: what a timed-out cell printed afterwards, and its value,
// come with the next cell's reply.
func TestUncollectedComesWithNextCell(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(124, "exec", "mv", "import time\nprint('first-mark', flush=True)\ntime.sleep(1)\nprint('late-mark')\n41", "-t", "0.3")
	if !waitFor(30*time.Second, func() bool { return e.session("mv").State == "idle" }) {
		t.Fatalf("cell 1 did not finish within 30 s: %+v", e.session("mv"))
	}
	r := e.runJSON("exec", "mv", "6*7")
	if r.code != 0 || r.Value != "42" {
		t.Fatalf("next exec: %v", r)
	}
	notes := r.notesOf("uncollected")
	if len(notes) != 1 {
		t.Fatalf("want one uncollected note, got %v", r)
	}
	wantContains(t, "uncollected note", notes[0], "Cell 1", "late-mark", "Out[1]: 41")
	wantLacks(t, "uncollected note", notes[0], "first-mark")
}

// TestBusyRefusal checks that an exec on a session that is running a cell
// is refused at once, naming the running cell, how long it has run and who
// sent it, and pointing at wait and interrupt; the refused code does not run.
func TestBusyRefusal(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "busy", "import time\nn = 0")
	e.must(124, "exec", "busy", "time.sleep(4)", "-t", "0.5")
	out, errOut, code := e.run("exec", "busy", "n = 1")
	if code != 2 {
		t.Fatalf("exec on a busy session: exit %d, want 2\n%s%s", code, out, errOut)
	}
	wantContains(t, "busy refusal", errOut, "cell 2", "running for", "sent by", "wait", "interrupt")
	e.must(0, "wait", "busy")
	out, _ = e.must(0, "exec", "busy", "n")
	if out != "Out[3]: 0\n" {
		t.Errorf("after the refusal: %q, want %q (the refused cell must not run or count)", out, "Out[3]: 0\n")
	}
}

// TestInterrupt checks that interrupt raises KeyboardInterrupt in a cell
// sleeping, spinning in Python or waiting on a subprocess, that the
// session keeps its names, and that interrupting an idle session says so.
func TestInterrupt(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "intr", "import os, time\nkeep = 7")

	cases := []struct {
		name string
		code string
	}{
		{"time.sleep", "time.sleep(100)"},
		{"busy loop", "while True:\n    pass"},
		{"os.system", "os.system('sleep 100')"},
	}
	for _, c := range cases {
		before := e.session("intr")
		out, errOut, code := e.run("exec", "intr", c.code, "-t", "0.5")
		if code != 124 {
			t.Errorf("%s: exec -t 0.5: exit %d, want 124\n%s%s", c.name, code, out, errOut)
			continue
		}
		out, errOut, code = e.run("interrupt", "intr")
		if code != 0 {
			t.Errorf("%s: interrupt: exit %d, want 0\n%s%s", c.name, code, out, errOut)
		}
		out += errOut // the traceback is on standard error
		if c.name != "os.system" {
			wantContains(t, c.name+": interrupt", out, "KeyboardInterrupt")
		}
		wantLacks(t, c.name+": interrupt", out, "worker")
		s := e.session("intr")
		if s.State != "idle" || s.Generation != before.Generation {
			t.Errorf("%s: after interrupt the session is %q, generation %s (was %s); want the same session, idle", c.name, s.State, s.Generation, before.Generation)
		}
		if out, _ := e.must(0, "exec", "intr", "keep"); !regexp.MustCompile(`^Out\[\d+\]: 7\n$`).MatchString(out) {
			t.Errorf("%s: names after interrupt: %q", c.name, out)
		}
		if c.name == "os.system" {
			left := func() []proctest.Process {
				var ps []proctest.Process
				for _, p := range e.generation(s.Generation) {
					if p.Cmdline == "sleep 100" {
						ps = append(ps, p)
					}
				}
				return ps
			}
			if !waitFor(5*time.Second, func() bool { return len(left()) == 0 }) {
				t.Errorf("os.system: the interrupted `sleep 100` still runs:%s", proctest.Describe(left()))
			}
		}
	}

	r := e.runJSON("interrupt", "intr")
	if r.code != 0 {
		t.Errorf("interrupt on an idle session: %v", r)
	}
	out := e.mustSeen(0, "interrupt", "intr")
	wantContains(t, "interrupt on an idle session", out, "Nothing to interrupt")
}

// TestInterruptWhileItsSenderWaits: a person interrupts a cell while the
// exec that sent it still waits. Both replies have the cell's output and
// error, each read from its own position; the interrupt's says whose
// cell it was.
func TestInterruptWhileItsSenderWaits(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "w", "import time")
	sent := make(chan string, 1)
	go func() {
		out, _, _ := e.run("exec", "w", "print('started', flush=True)\nwhile True: time.sleep(0.01)", "-t", "60", "--json")
		sent <- out
	}()
	if !waitFor(10*time.Second, func() bool { return e.session("w").State == "running" }) {
		t.Fatal("the cell never ran")
	}
	r := e.runJSONWith(runOpts{extra: []string{"POLYREPL_LABEL=dana"}}, "interrupt", "w")
	var text string
	for _, n := range r.Notes {
		if n.Kind == "sent-by" {
			text = n.Text
		}
	}
	if r.Status != "interrupted" || r.Output != "started\n" || !strings.Contains(text, "was sent by") {
		t.Errorf("dana's interrupt: status %s, output %q, notes %+v; want interrupted, the cell's output, whose cell it is", r.Status, r.Output, r.Notes)
	}
	var s cellResult
	select {
	case out := <-sent:
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("the sender's exec: %v: %q", err, out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the sender's exec did not return")
	}
	if s.Status != "interrupted" || s.Output != "started\n" || s.Error == nil || s.Error.Type != "KeyboardInterrupt" {
		t.Errorf("the sender's exec: status %s, output %q, error %+v; want its output and the KeyboardInterrupt", s.Status, s.Output, s.Error)
	}
}

// TestOtherSessionsNoted checks that replies mention other sessions with
// a cell running or with output nobody has read: to each client once,
// when that begins, not on every call while it lasts.
func TestOtherSessionsNoted(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(124, "exec", "busybee", "import time\ntime.sleep(10)", "-t", "0.3")
	out := e.mustSeen(124, "exec", "chatty", "import time\ntime.sleep(0.5)\nprint('unread-mark')", "-t", "0.2")
	wantContains(t, "exec on another session while busybee runs", out, "Other sessions", "busybee")
	if !waitFor(20*time.Second, func() bool { return e.session("chatty").State == "idle" }) {
		t.Fatalf("chatty never finished its cell")
	}
	if s := e.session("chatty"); !s.Unread {
		t.Errorf("sessions --json: chatty's uncollected output is not marked unread: %+v", s)
	}
	out = e.mustSeen(0, "exec", "quiet", "1")
	wantContains(t, "exec after chatty's cell ended uncollected", out, "Other sessions", "chatty")
	wantLacks(t, "exec after busybee was told", out, "busybee")
	r := e.runJSON("exec", "quiet", "2")
	if others := r.notesOf("others"); len(others) != 0 {
		t.Errorf("nothing changed, yet the others were told again: %q", others)
	}
	// Another client hears of both for itself.
	r = e.runJSON("--label", "bob", "exec", "quiet", "3")
	others := strings.Join(r.notesOf("others"), "\n")
	wantContains(t, "the others note to another client", others, "busybee", "chatty")
	wantLacks(t, "the others note", others, "quiet")
	e.must(0, "interrupt", "busybee")
}
