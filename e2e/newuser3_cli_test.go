package e2e

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/testenv"
)

// What a new user tripped on, round three (issue 35): the command line's
// part. Items 2 (polyrepl's words on standard error), 3 (exec on a
// terminal shows the cell as it prints), the log part of 7 (figures in
// the log) and parts of 13 (-t5, -v, log --follow of a session to come).

// mustSeen runs a command that must exit want and returns what a person
// at a terminal sees of it: standard output, then standard error.
func (e *env) mustSeen(want int, args ...string) string {
	e.t.Helper()
	out, errOut := e.must(want, args...)
	return out + errOut
}

// TestNewUserStdoutIsTheCell: standard output carries the cell's output
// and value and nothing else, so that x=$(polyrepl exec …) captures what
// the cell printed; the creation line, what other clients did, a cut,
// a figure's file, the error and every other note go to standard error.
// --json keeps the whole result on standard output.
func TestNewUserStdoutIsTheCell(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)

	out, errOut := e.must(0, "exec", "new", "print(1)")
	if out != "1\n" {
		t.Errorf("x=$(polyrepl exec new 'print(1)') captures %q, want exactly \"1\\n\"", out)
	}
	wantContains(t, "the creation line, on standard error", errOut, "[Created session 'new' (python ")

	// Another client's first exec under its own label: the session so
	// far is told on standard error, ahead of nothing on standard output.
	e.must(0, "exec", "new", "print('from alice' * 30)")
	out, errOut = e.must(0, "--label", "bob", "exec", "new", "print(2); 40 + 2")
	if out != "2\nOut[3]: 42\n" {
		t.Errorf("bob's first exec printed %q on standard output, want the cell's output and value alone", out)
	}
	wantContains(t, "bob's first contact, on standard error", errOut, "Session 'new' so far, before you joined", "from alice")
	wantLacks(t, "bob's standard output", out, "before you joined", "Created", "from alice")

	// An error: nothing on standard output but what the cell printed.
	out, errOut = e.must(1, "exec", "new", "print('before'); 1/0")
	if out != "before\n" {
		t.Errorf("a raising cell printed %q on standard output, want its output alone", out)
	}
	wantContains(t, "the traceback, on standard error", errOut, "ZeroDivisionError: division by zero")

	// A cut: the cut's words go to standard error, the text kept to
	// standard output.
	out, errOut = e.must(0, "exec", "new", "for i in range(20000): print('row', i)")
	wantContains(t, "a long output", out, "row 0\n", "row 19999\n")
	wantLacks(t, "a long output's standard output", out, "output cut")
	wantContains(t, "the cut, on standard error", errOut, "[output cut: ")

	// Still running: the note says how to collect it, on standard error;
	// wait's reply is the rest of the output and the value.
	out, errOut = e.must(124, "exec", "new", "import time; print('early', flush=True); time.sleep(1.5); print('late'); 7", "-t", "0.5")
	if out != "early\n" {
		t.Errorf("a cell past its timeout printed %q on standard output, want \"early\\n\"", out)
	}
	wantContains(t, "the running note, on standard error", errOut, "still running", "polyrepl wait new")
	out, _ = e.must(0, "wait", "new", "-t", "30")
	if out != "late\nOut[6]: 7\n" {
		t.Errorf("wait printed %q on standard output, want the rest and the value", out)
	}

	// A question: the note is on standard error; the answer's reply is
	// what the cell printed after it.
	out, errOut = e.must(3, "exec", "new", "print('asking'); name = input('name? '); print('hi', name)")
	if out != "asking\n" {
		t.Errorf("a cell asking printed %q on standard output, want what it printed", out)
	}
	wantContains(t, "the question's note, on standard error", errOut, "name? ", "polyrepl input new")
	out, errOut = e.must(0, "input", "new", "Bob")
	if !strings.HasSuffix(out, "hi Bob\n") || strings.Contains(out, "[") {
		t.Errorf("input printed %q on standard output (and %q on standard error), want the cell's output alone", out, errOut)
	}

	// --json: one document on standard output, nothing on standard error.
	r := e.runJSON("--label", "carol", "exec", "new", "print(3)")
	if r.code != 0 || r.Output != "3\n" || r.raw["activity"] == nil {
		t.Errorf("--json: %s; want the output and carol's first contact in one document", clip(r.String()))
	}
	if _, errOut, _ := e.run("--label", "dave", "exec", "new", "print(4)", "--json"); errOut != "" {
		t.Errorf("--json printed %q on standard error, want nothing", errOut)
	}
}

// TestNewUserExecStreamsOnATerminal: exec on a terminal shows the cell's
// output as it prints (the creation line first), draws a progress bar
// in place, and on Ctrl-C shows what came so far and says the cell goes
// on and how to collect or stop it; wait then collects only the rest.
func TestNewUserExecStreamsOnATerminal(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	mark := e.home + "/go-on"

	// The cell prints a line, then waits for the test to let it go on:
	// the line must be on the screen while the cell still runs.
	con := e.onTerminal("exec", "tty", "import os, time\nprint('first line', flush=True)\nwhile not os.path.exists("+strconv.Quote(mark)+"):\n    time.sleep(0.05)\nprint('second line')\n6 * 7")
	con.expect("the first line while the cell runs", "[Created session 'tty'", "first line")
	if s := e.session("tty"); s.Running == nil {
		t.Errorf("the first line showed, yet the cell is not running: %+v", s)
	}
	if scr := con.scr.String(); strings.Contains(scr, "second line") || strings.Contains(scr, "Out[") {
		t.Errorf("the screen shows what the cell has not printed yet:\n%s", scr)
	}
	if i, j := strings.Index(con.scr.String(), "Created session"), strings.Index(con.scr.String(), "first line"); i > j {
		t.Errorf("the creation line comes after the cell's output:\n%s", con.scr.String())
	}
	os.WriteFile(mark, nil, 0o600)
	con.expect("the rest and the value", "second line", "Out[1]: 42")
	if err := con.exit("a finished cell"); err != nil {
		t.Errorf("exec on a terminal: %v, want exit 0", err)
	}
	if n := strings.Count(con.scr.String(), "first line"); n != 1 {
		t.Errorf("the first line shows %d times, want once:\n%s", n, con.scr.String())
	}

	// A progress bar redraws its line in place; its final form stays.
	con = e.onTerminal("exec", "tty", "import sys, time\nfor i in range(5):\n    sys.stdout.write('\\rprogress %d%%' % (i * 25)); sys.stdout.flush(); time.sleep(0.3)\nprint(' done')")
	con.expect("the progress bar's end", "progress 100% done")
	if err := con.exit("the progress bar"); err != nil {
		t.Errorf("a progress bar: %v", err)
	}
	if scr := con.scr.String(); !regexp.MustCompile(`progress (0|25|50|75)%\r\x1b\[K`).MatchString(scr) {
		t.Errorf("the progress bar was not drawn in place as it went:\n%q", scr)
	}

	// Ctrl-C: what came so far stays, and the note says the cell goes on.
	con = e.onTerminal("exec", "tty", "import time\nfor i in range(40):\n    print('tick', i, flush=True); time.sleep(0.25)")
	con.expect("ticks as they come", "tick 0", "tick 2")
	con.send("\x03")
	con.expect("Ctrl-C", "still running", "it goes on", "polyrepl wait tty", "polyrepl interrupt tty")
	var ee *exec.ExitError
	if err := con.exit("Ctrl-C"); !errors.As(err, &ee) || ee.ExitCode() != 124 {
		t.Errorf("exec after Ctrl-C: %v, want exit status 124 (the cell runs on)", err)
	}
	scr := con.scr.String()
	if !strings.Contains(scr, "tick 2") || strings.Index(scr, "tick 2") > strings.Index(scr, "still running") {
		t.Errorf("Ctrl-C: the lines shown so far are not kept above the note:\n%s", scr)
	}
	if s := e.session("tty"); s.Running == nil {
		t.Errorf("Ctrl-C stopped the cell: %+v", s)
	}
	out, _ := e.must(0, "wait", "tty", "-t", "60")
	wantContains(t, "wait after Ctrl-C", out, "tick 39\n")
	wantLacks(t, "wait after Ctrl-C (what was shown is not told again)", out, "tick 0\n")

	// On a pipe, as before: the whole reply at the end.
	out, _ = e.must(0, "exec", "tty", "print('piped')")
	if out != "piped\n" {
		t.Errorf("exec on a pipe printed %q", out)
	}
}

// TestNewUserLogShowsFigures: log, and log --follow, give each figure a
// cell made a line that says so and where its file is.
func TestNewUserLogShowsFigures(t *testing.T) {
	needPython(t)
	if err := exec.Command(python, "-c", "import matplotlib").Run(); err != nil {
		t.Skipf("%s has no matplotlib (Debian: python3-matplotlib)", python)
	}
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "fig", "import matplotlib.pyplot as plt")
	follow := exec.Command(e.bin, "log", "fig", "--follow", "--since", "2")
	follow.Env = e.vars
	followed := &testenv.Buffer{}
	follow.Stdout, follow.Stderr = followed, followed
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { follow.Process.Kill(); follow.Wait() }()

	e.must(0, "exec", "fig", "plt.plot([1, 4, 9]); plt.show()")
	line := regexp.MustCompile(`\[image 1: 640×480 PNG, \d+ KB → (\S+\.png)\]\n\[fig#3 done\]`)
	out, _ := e.must(0, "log", "fig")
	m := line.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("log shows no line for the figure:\n%s", out)
	}
	if _, err := os.Stat(m[1]); err != nil {
		t.Errorf("the figure's file: %v", err)
	}
	if !waitFor(20*time.Second, func() bool { return line.MatchString(followed.String()) }) {
		t.Errorf("log --follow shows no line for the figure:\n%s", followed.String())
	}
}

// TestNewUserHabits: -t5 is -t 5, polyrepl -v is its version, and log
// --follow of a session not created yet waits for it, says so, and shows
// it from its start.
func TestNewUserHabits(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)

	if out, _ := e.must(124, "exec", "h", "import time; time.sleep(3)", "-t0.5"); out != "" {
		t.Errorf("-t0.5: %q", out)
	}
	r := e.runJSON("wait", "h", "-t10")
	if r.code != 0 || r.Status != "done" {
		t.Errorf("wait -t10: %s", clip(r.String()))
	}
	if _, errOut, code := e.run("exec", "h", "1", "-t601"); code != 2 || !strings.Contains(errOut, "bad value for -t") {
		t.Errorf("-t601: exit %d, %q; want it refused as -t 601 is", code, errOut)
	}
	want, _ := e.must(0, "--version")
	for _, v := range []string{"-v", "-V"} {
		if out, _ := e.must(0, v); out != want || !strings.HasPrefix(out, "polyrepl ") {
			t.Errorf("polyrepl %s printed %q, want the version, %q", v, out, want)
		}
	}

	follow := exec.Command(e.bin, "log", "later", "--follow")
	follow.Env = e.vars
	var out, errOut testenv.Buffer
	follow.Stdout, follow.Stderr = &out, &errOut
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { follow.Process.Kill(); follow.Wait() }()
	if !waitFor(20*time.Second, func() bool {
		return strings.Contains(errOut.String(), "waiting for session 'later' to be created; Ctrl-C to stop")
	}) {
		t.Fatalf("log --follow of a session to come: %q, %q", out.String(), errOut.String())
	}
	e.must(0, "exec", "later", "print('made at last')")
	if !waitFor(20*time.Second, func() bool {
		return strings.Contains(out.String(), "Created session 'later'") && strings.Contains(out.String(), "made at last\n[later#2 done]")
	}) {
		t.Errorf("log --follow did not show the new session from its start:\n%s", out.String())
	}
}
