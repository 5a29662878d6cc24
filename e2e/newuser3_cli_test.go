package e2e

import (
	"strings"
	"testing"
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
