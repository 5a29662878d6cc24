package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// What a new user tripped on in issue 35 (items 4 and 13), in the
// runtimes' drivers: IPython's launcher, --python and $POLYREPL_PYTHON for
// IPython, a program that is not what was asked for, runtime names as
// people type them, Ruby's names, and an interrupt of R's system().

// needIPython skips a test when the harness's Python has no IPython.
func needIPython(t *testing.T) {
	t.Helper()
	needPython(t)
	if err := exec.Command(python, "-c", "import IPython").Run(); err != nil {
		t.Skipf("%s has no IPython (Debian: ipython3): %v", python, err)
	}
}

// ipythonLauncher is an ipython3 (or ipython) launcher whose Python has
// IPython, or the test is skipped.
func ipythonLauncher(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"ipython3", "ipython"} {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if err := exec.Command(p, "-c", "1").Run(); err == nil {
			return p
		}
	}
	t.Skip("no working ipython3 launcher on PATH (Debian: ipython3)")
	return ""
}

// `--exe /usr/bin/ipython3` hung 60 s at IPython's own prompt and then
// printed an error full of escape codes: now the launcher's Python runs
// the session, and the creation line says so.
func TestNewUserIPythonLauncher(t *testing.T) {
	t.Parallel()
	launcher := ipythonLauncher(t)
	e := newEnv(t)
	e.unsetenv("POLYREPL_IPYTHON")
	e.unsetenv("POLYREPL_PYTHON")
	start := time.Now()
	stdout, stderr, code := e.run("exec", "i", "--runtime", "ipython", "--exe", launcher, "6*7")
	took := time.Since(start)
	if code != 0 || !strings.Contains(stdout, "Out[1]: 42") {
		t.Fatalf("exec --exe %s: exit %d after %s, stdout %q, stderr %q", launcher, code, took, stdout, stderr)
	}
	wantContains(t, "the creation line", stdout+stderr, "is IPython's launcher")
	if took > 45*time.Second {
		t.Errorf("the session took %s to start (it hung a minute at IPython's prompt before)", took)
	}
	r := e.runJSON("exec", "i", "%time x = 1\nx + 1")
	if r.Status != "done" || r.Value != "2" {
		t.Errorf("a magic in the launcher's session: %v", r)
	}
	if s := e.session("i"); s.Runtime != "ipython" || strings.Contains(filepath.Base(s.Exe), "ipython") {
		t.Errorf("sessions: runtime %q exe %q, want ipython run by a Python", s.Runtime, s.Exe)
	}
}

// --python was refused for IPython ("use --exe"); $POLYREPL_PYTHON was
// ignored by IPython, which took another Python from PATH. Both now name
// the Python IPython runs in.
func TestNewUserIPythonPython(t *testing.T) {
	needIPython(t)
	t.Parallel()
	e := newEnv(t)
	e.unsetenv("POLYREPL_IPYTHON")
	e.unsetenv("POLYREPL_PYTHON")
	// A python3 first on PATH that is not the one asked for.
	decoy := t.TempDir()
	if err := os.WriteFile(filepath.Join(decoy, "python3"), []byte("#!/bin/sh\necho 'the decoy python3 on PATH' >&2\nexit 9\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.setenv("PATH", decoy+string(os.PathListSeparator)+os.Getenv("PATH"))

	r := e.runJSON("exec", "byflag", "--runtime", "ipython", "--python", python, "import sys; sys.executable")
	if r.Status != "done" || r.Value != "'"+python+"'" {
		t.Errorf("--python %s for ipython: %v", python, r)
	}
	r = e.runJSONWith(runOpts{extra: []string{"POLYREPL_PYTHON=" + python}}, "exec", "byenv", "--runtime", "ipython", "import sys; sys.executable")
	if r.Status != "done" || r.Value != "'"+python+"'" {
		t.Errorf("$POLYREPL_PYTHON=%s for ipython: %v", python, r)
	}
	// --python stays Python's: for R it is refused, saying what to use.
	_, stderr, code := e.run("exec", "rr", "--runtime", "r", "--python", python, "1")
	if code == 0 || !strings.Contains(stderr, "--exe") {
		t.Errorf("--python for R: exit %d, stderr %q", code, stderr)
	}
}

// A program that is not what was asked for — not a Python, a Python
// without IPython — is refused in seconds, in plain words that say what
// to do, with nothing of the program's escape codes.
func TestNewUserIPythonNotWhatWasAsked(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	// A terminal program that sets the window title and shows a prompt,
	// as IPython's launcher did.
	notPython := filepath.Join(dir, "fancy-repl")
	if err := os.WriteFile(notPython, []byte("#!/bin/sh\nprintf '\\033]0;fancy: /tmp\\007\\033[32mIn [1]:\\033[0m '\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(dir, "venv")
	if out, err := exec.Command(python, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Skipf("cannot make a venv with %s: %v: %s", python, err, out)
	}
	for _, c := range []struct {
		name, runtime, exe string
		says               []string
	}{
		{"not a Python, for ipython", "ipython", notPython, []string{"is not a Python", "--python", "In [1]:"}},
		{"not a Python, for python", "python", notPython, []string{"is not a Python", "--python"}},
		{"a Python without IPython", "ipython", filepath.Join(venv, "bin", "python3"), []string{"has no IPython", "pip install ipython", "--python"}},
	} {
		start := time.Now()
		stdout, stderr, code := e.run("exec", "x", "--runtime", c.runtime, "--exe", c.exe, "1")
		took := time.Since(start)
		if code == 0 {
			t.Errorf("%s: exit 0, stdout %q", c.name, stdout)
			continue
		}
		wantContains(t, c.name, stderr, c.says...)
		if strings.ContainsRune(stderr, 0x1b) || strings.ContainsRune(stderr, 0x07) {
			t.Errorf("%s: the error carries the program's escape codes: %q", c.name, stderr)
		}
		if took > 30*time.Second {
			t.Errorf("%s: refused after %s (it hung a minute before)", c.name, took)
		}
	}
}

// `--runtime R`, `Python` and `nodejs` were refused with no "did you
// mean": names are taken in any case and by their common aliases, and a
// slip of the keys is answered with the name meant.
func TestNewUserRuntimeNames(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	r := e.runJSON("exec", "py", "--runtime", "Python", "1+1")
	if r.Status != "done" || r.Value != "2" {
		t.Errorf("--runtime Python: %v", r)
	}
	if s := e.session("py"); s.Runtime != "python" {
		t.Errorf("--runtime Python made a %q session", s.Runtime)
	}
	// The name is used again with another spelling of its runtime.
	if r := e.runJSON("exec", "py", "--runtime", "python3", "2+2"); r.Status != "done" || r.Value != "4" {
		t.Errorf("--runtime python3 on a python session: %v", r)
	}
	if found, _ := runtimeFound(e, "r"); found {
		if r := e.runJSON("exec", "rr", "--runtime", "R", "1+1"); r.Status != "done" || r.Value != "[1] 2" {
			t.Errorf("--runtime R: %v", r)
		}
		if s := e.session("rr"); s.Runtime != "r" {
			t.Errorf("--runtime R made a %q session", s.Runtime)
		}
	}
	if found, _ := runtimeFound(e, "node"); found {
		if r := e.runJSON("exec", "js", "--runtime", "nodejs", "1+1"); r.Status != "done" || r.Value != "2" {
			t.Errorf("--runtime nodejs: %v", r)
		}
	}
	_, stderr, code := e.run("exec", "typo", "--runtime", "pyton", "1")
	if code == 0 {
		t.Errorf("--runtime pyton: exit 0")
	}
	wantContains(t, "--runtime pyton", stderr, "did you mean python?")
	_, stderr, _ = e.run("exec", "typo", "--runtime", "cobol", "1")
	wantContains(t, "--runtime cobol", stderr, "unknown runtime", "known runtimes are")
	wantLacks(t, "--runtime cobol", stderr, "did you mean")
}

// Ruby's names listed the constants a library added (CSV, Date,
// Forwardable after require "csv"): now only the session's own.
func TestNewUserRubyNamesAreTheSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "ruby", "ruby")
	r := e.runJSON("exec", "rb", "--runtime", "ruby", "require \"csv\"\nrows = CSV.parse(\"a,b\\n1,2\\n\")\nPoint = Struct.new(:x)\ndef total; end\nrows.size")
	if r.Status != "done" || r.Value != "2" {
		t.Fatalf("require \"csv\": %v", r)
	}
	if got, want := e.session("rb").Names, []string{"Point", "rows", "total"}; !reflect.DeepEqual(got, want) {
		t.Errorf("names after require \"csv\" = %q, want %q", got, want)
	}
}

// Interrupting R's system("sleep 30") printed nothing: the cell is
// reported interrupted, and the session lives on with its names.
func TestNewUserRInterruptSystem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "r", "r-base-core")
	e.must(0, "exec", "rs", "--runtime", "r", "x <- 1")
	if _, stderr, code := e.run("exec", "rs", "-t", "1", `system("sleep 30")`); code != 124 {
		t.Fatalf("system(\"sleep 30\") with -t 1: exit %d, stderr %q", code, stderr)
	}
	r := e.runJSON("interrupt", "rs")
	if r.Status != "interrupted" || r.Error == nil || !strings.Contains(r.Error.Traceback, "Interrupted") ||
		!strings.Contains(r.Error.Traceback, "system()") {
		t.Errorf("the interrupt's reply: %v", r)
	}
	r = e.runJSON("exec", "rs", "x")
	if r.Status != "done" || r.Value != "[1] 1" {
		t.Errorf("after the interrupt: %v", r)
	}
}
