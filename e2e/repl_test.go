package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestREPLSemantics checks that a session behaves like a Python REPL run
// as __main__: output of print, subprocesses and C code is captured in
// order, stderr too; the last expression's repr comes back unless the cell
// ends in ';'; tracebacks show the user's frames only (input() asks: see
// TestPythonInput); sys.exit() is caught; functions pickle; Unicode survives; top-level await
// works.
func TestREPLSemantics(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)

	type step struct {
		name         string
		code         string
		status       string // want this status
		output       string // want exactly this output, if set
		contains     []string
		value        string // want exactly this value ("" means none)
		errType      string
		tracebackHas []string
	}
	steps := []step{
		{name: "print", code: `print("hello")`, status: "done", output: "hello\n"},
		{name: "order of print, os.system and subprocess", status: "done",
			code:   "import os, subprocess, sys\nprint('one')\nos.system('echo two')\nprint('three')\nsubprocess.run(['echo', 'four'])\nprint('five')\nos.system('echo six >&2')\nprint('seven')",
			output: "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"},
		{name: "raw fd write", code: "os.write(1, b'raw\\n');", status: "done", output: "raw\n"},
		{name: "C stdio", code: "import ctypes\nctypes.CDLL(None).printf(b'from C\\n');", status: "done", output: "from C\n"},
		{name: "stderr", code: `print("to err", file=sys.stderr)`, status: "done", output: "to err\n"},
		{name: "value", code: "6 * 7", status: "done", value: "42"},
		{name: "semicolon suppresses", code: "6 * 7;", status: "done", output: ""},
		{name: "traceback", code: "def g():\n    return 1/0\n\ng()", status: "error", errType: "ZeroDivisionError",
			tracebackHas: []string{"<cell %d>", "line 2", "line 4"}},
		{name: "syntax error", code: "def (:", status: "error", errType: "SyntaxError"},
		{name: "sys.exit(3)", code: "sys.exit(3)", status: "error", errType: "SystemExit"},
		{name: "alive after sys.exit", code: "1 + 1", status: "done", value: "2"},
		{name: "sys.exit()", code: "sys.exit()", status: "done"},
		{name: "define for pickle", code: "import pickle\ndef f():\n    pass", status: "done"},
		{name: "pickle round trip", code: "pickle.loads(pickle.dumps(f)) is f", status: "done", value: "True"},
		{name: "__main__", code: "__name__", status: "done", value: "'__main__'"},
		{name: "unicode", code: `print("héllo 中文 🎉")` + "\n" + `"中文"`, status: "done", output: "héllo 中文 🎉\n", value: "'中文'"},
		{name: "top-level await", code: "import asyncio\nawait asyncio.sleep(0)\n'ok'", status: "done", value: "'ok'"},
	}
	for i, s := range steps {
		cell := i + 1
		r := e.runJSON("exec", "repl", s.code, "-t", "20")
		where := fmt.Sprintf("cell %d (%s)", cell, s.name)
		if r.Cell != cell {
			t.Errorf("%s: reply says cell %d: %v", where, r.Cell, r)
		}
		if r.Status != s.status {
			t.Errorf("%s: status %q, want %q: %v", where, r.Status, s.status, r)
		}
		wantCode := map[string]int{"done": 0, "error": 1}[s.status]
		if r.code != wantCode {
			t.Errorf("%s: exit %d, want %d: %v", where, r.code, wantCode, r)
		}
		if s.output != "" || s.status == "done" && s.value == "" && s.contains == nil {
			if r.Output != s.output {
				t.Errorf("%s: output %q, want %q", where, r.Output, s.output)
			}
		}
		wantContains(t, where+" output", r.Output, s.contains...)
		if r.Value != s.value {
			t.Errorf("%s: value %q, want %q", where, r.Value, s.value)
		}
		if s.errType != "" {
			if r.Error == nil || r.Error.Type != s.errType {
				t.Errorf("%s: want a %s: %v", where, s.errType, r)
			}
		}
		if r.Error != nil {
			tb := r.Error.Traceback
			for _, h := range s.tracebackHas {
				if strings.Contains(h, "%d") {
					h = fmt.Sprintf(h, cell)
				}
				wantContains(t, where+" traceback", tb, h)
			}
			wantLacks(t, where+" traceback", tb+r.Error.Message, "worker")
		}
	}

	// The same through the text form: Out[N], no Out after ';', and a
	// traceback naming the cell.
	out, _ := e.must(0, "exec", "repl", "'x' * 3")
	if want := fmt.Sprintf("Out[%d]: 'xxx'\n", len(steps)+1); out != want {
		t.Errorf("text value: %q, want %q", out, want)
	}
	out, _ = e.must(0, "exec", "repl", "'x' * 3;")
	if out != "" {
		t.Errorf("text of a cell ending in ';': %q, want nothing", out)
	}
	out, errOut := e.must(1, "exec", "repl", "undefined_name")
	all := out + errOut
	wantContains(t, "text traceback", all, fmt.Sprintf("<cell %d>", len(steps)+3), "NameError: name 'undefined_name' is not defined")
	wantLacks(t, "text traceback", all, "worker")
}
