package e2e

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestBasic checks the first steps a user takes: the first exec creates a
// session and says so (on standard error), values come back as Out[N], code can come from
// standard input, names persist between calls, `sessions` describes the
// session, --json has the documented shape, and --version and help work.
func TestBasic(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	work := filepath.Join(e.home, "work")
	if err := mkdir(work); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := e.runAt(work, "exec", "chirp", "x = 41")
	if code != 0 {
		t.Fatalf("first exec: exit %d: %s%s", code, out, errOut)
	}
	created := regexp.MustCompile(`^\[Created session 'chirp' \(python 3\.\d+\.\d+, cwd ` + regexp.QuoteMeta(work) + `\)\.\]\n$`)
	if out != "" || !created.MatchString(errOut) {
		t.Errorf("first exec printed %q and, on standard error, %q; want nothing, and the creation line %s", out, errOut, created)
	}

	out, _ = e.must(0, "exec", "chirp", "x + 1")
	if out != "Out[2]: 42\n" {
		t.Errorf("exec 'x + 1' printed %q, want %q", out, "Out[2]: 42\n")
	}

	out, _, code = e.runIn("y = x * 10\nprint(y)\n", "exec", "chirp", "-")
	if code != 0 || out != "410\n" {
		t.Errorf("code from stdin: exit %d, printed %q, want 410", code, out)
	}

	e.must(0, "exec", "chirp", "def f():\n    return x + y")
	out, _ = e.must(0, "exec", "chirp", "f()")
	if out != "Out[5]: 451\n" {
		t.Errorf("names across calls: printed %q, want %q", out, "Out[5]: 451\n")
	}

	// sessions and sessions NAME: one line, then the names.
	line := regexp.MustCompile(`^chirp  pid \d+  python 3\.\d+\.\d+  up \d+[smhd]  idle \d+[smhd]  5 cells  \d+ MB  cwd ` + regexp.QuoteMeta(work) + `$`)
	for _, args := range [][]string{{"sessions"}, {"sessions", "chirp"}} {
		out, _ := e.must(0, args...)
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if len(lines) != 2 {
			t.Errorf("%s: want 2 lines, got:\n%s", args, out)
			continue
		}
		if !line.MatchString(lines[0]) {
			t.Errorf("%s: first line %q does not match %s", args, lines[0], line)
		}
		names, ok := strings.CutPrefix(lines[1], "    names: ")
		if !ok {
			t.Errorf("%s: second line %q is not the names line", args, lines[1])
			continue
		}
		got := strings.Split(names, ", ")
		for _, n := range []string{"f", "x", "y"} {
			if !slices.Contains(got, n) {
				t.Errorf("%s: names line %q lacks %s", args, lines[1], n)
			}
		}
	}

	// --json of a value, of an error, of a creation.
	r := e.runJSON("exec", "chirp", "x + 1")
	if r.code != 0 || r.Session != "chirp" || r.Cell != 6 || r.Status != "done" || r.Value != "42" || r.Output != "" || r.Generation == "" || r.Error != nil {
		t.Errorf("exec --json of a value: %v", r)
	}
	for _, k := range []string{"session", "generation", "cell", "status", "output", "elapsed"} {
		if _, ok := r.raw[k]; !ok {
			t.Errorf("exec --json lacks %q: %v", k, r)
		}
	}
	r = e.runJSON("exec", "chirp", "print('before')\n1/0")
	if r.code != 1 || r.Status != "error" || r.Output != "before\n" || r.Error == nil ||
		r.Error.Type != "ZeroDivisionError" || r.Error.Message != "division by zero" || !strings.Contains(r.Error.Traceback, "<cell 7>") {
		t.Errorf("exec --json of an error: %v", r)
	}
	r = e.runJSON("exec", "other", "print('hi')")
	if r.code != 0 || r.Status != "done" || r.Cell != 1 || r.Output != "hi\n" || len(r.notesOf("created")) != 1 {
		t.Errorf("exec --json creating a session: want status done, cell 1, output hi and one created note: %v", r)
	}

	out, _ = e.must(0, "sessions", "--json")
	var list struct {
		Sessions []map[string]json.RawMessage `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Sessions) != 2 {
		t.Fatalf("sessions --json: want 2 sessions, got %q (%v)", out, err)
	}
	for _, k := range []string{"name", "generation", "runtime", "version", "exe", "pid", "state", "created", "last_active", "cells", "memory", "cwd", "names", "unread", "transcript"} {
		if _, ok := list.Sessions[0][k]; !ok {
			t.Errorf("sessions --json entry lacks %q: %s", k, out)
		}
	}
	s := e.session("chirp")
	if s.Runtime != "python" || !strings.HasPrefix(s.Version, "3.") || s.PID <= 0 || s.State != "idle" ||
		s.Cells != 7 || s.Memory == 0 || s.Cwd != work || s.Exe == "" ||
		s.Transcript != filepath.Join(e.stateDir(), "chirp.py") || !slices.Contains(s.Names, "x") {
		t.Errorf("sessions --json entry for chirp: %+v", s)
	}

	out, _ = e.must(0, "--version")
	if !regexp.MustCompile(`^polyrepl \S+\n$`).MatchString(out) {
		t.Errorf("--version printed %q", out)
	}
	out, _ = e.must(0, "help")
	for _, c := range []string{"exec", "wait", "interrupt", "restart", "kill", "sessions", "start", "stop", "status", "daemon", "help", "--version"} {
		if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(c) + `\b`).MatchString(out) {
			t.Errorf("help does not list %s:\n%s", c, out)
		}
	}
	out, _ = e.must(0, "help", "exec")
	wantContains(t, "help exec", out, "polyrepl exec NAME CODE|- [-t SECS] [--runtime R] [--exe PATH] [--python PATH] [--cwd DIR] [--project DIR] [--memory SIZE] [--kernel NAME] [--gateway URL] [--gateway-http] [--sandbox POLICY] [--network on|off] [--readable DIR] [--writable DIR] [--sandbox-best-effort] [--json]", "wait")
}
