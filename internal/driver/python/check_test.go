package python

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/driver"
)

func TestParseProbe(t *testing.T) {
	for _, c := range []struct {
		name, out string
		ok        bool
		want      Probe
	}{
		{"python", "\npolyrepl-probe: 3 11 0 1 /usr/bin/python3\n", true, Probe{3, 11, false, 1, "/usr/bin/python3"}},
		{"ipython launcher, title escape first", "\x1b]0;IPython: /tmp\a\npolyrepl-probe: 3 11 1 1 /usr/bin/python3\r\n", true, Probe{3, 11, true, 1, "/usr/bin/python3"}},
		{"path with a space", "polyrepl-probe: 3 12 0 0 /opt/my py/bin/python3\n", true, Probe{3, 12, false, 0, "/opt/my py/bin/python3"}},
		{"python 2", "polyrepl-probe: 2 7 0 -1 /usr/bin/python2\n", true, Probe{2, 7, false, -1, "/usr/bin/python2"}},
		{"not a python", "cat: invalid option -- 'c'\n", false, Probe{}},
		{"the probe's code echoed", "ARGUMENT 'polyrepl-probe: %d %d %d %d %s' __ignored__\n", false, Probe{}},
		{"too few fields", "polyrepl-probe: 3 11\n", false, Probe{}},
	} {
		got, ok := parseProbe([]byte(c.out))
		if ok != c.ok || got != c.want {
			t.Errorf("%s: parseProbe = %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestPythonName(t *testing.T) {
	for name, want := range map[string]bool{
		"python": true, "python3": true, "python3.11": true, "python3.13t": true, "pypy3": true, "python3-dbg": true,
		"ipython3": false, "ipython": false, "R": false, "bash": false, "python-config": false, "jupyter": false,
	} {
		if got := pythonName().MatchString(name); got != want {
			t.Errorf("pythonName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestShebang(t *testing.T) {
	dir := t.TempDir()
	py := filepath.Join(dir, "python3")
	if err := os.WriteFile(py, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + dir}
	for _, c := range []struct{ head, want string }{
		{"#!/usr/bin/python3\nimport re\n", "/usr/bin/python3"},
		{"#! /usr/bin/python3 -E\n", "/usr/bin/python3"},
		{"#!/usr/bin/env python3\n", py},
		{"#!/usr/bin/env -S python3 -u\n", py},
		{"#!/usr/bin/env nosuchpython\n", ""},
		{"\x7fELF\x02\x01", ""},
		{"", ""},
	} {
		if got := shebang([]byte(c.head), env, dir); got != c.want {
			t.Errorf("shebang(%q) = %q, want %q", c.head, got, c.want)
		}
	}
}

// An executable that is not what the runtime needs is refused at once
// with what to do, and IPython's launcher is taken for its Python.
func TestInterpreter(t *testing.T) {
	dir := t.TempDir()
	script := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	launcher := script("ipython3", "#!/usr/bin/python3\nfrom IPython import start_ipython\nstart_ipython()\n")
	notPython := script("notpy", "#!/bin/sh\nprintf '\\033[31mwhat is -c?\\033[0m\\n'; exit 2\n")
	old := script("oldpy", "#!/bin/sh\necho 'polyrepl-probe: 2 7 0 -1 /usr/bin/python2.7'\n")
	noIPython := script("venvpy", "#!/bin/sh\necho 'polyrepl-probe: 3 11 0 0 /venv/bin/python3'\n")
	shim := script("ipython", "#!/bin/sh\necho 'polyrepl-probe: 3 11 1 1 /opt/py/bin/python3.11'\n")
	other := script("mypython", "#!/bin/sh\necho 'polyrepl-probe: 3 12 0 1 /opt/py/bin/python3.12'\n")
	spec := func(exe string) driver.Spec {
		return driver.Spec{Exe: exe, Cwd: dir, Env: []string{"PATH=/usr/bin:/bin"}, Cookie: "POLYREPL_TEST=1"}
	}
	for _, c := range []struct {
		name, exe string
		ipython   bool
		want      string // the executable started; "" for a refusal
		note      string // in the note, or in the refusal
	}{
		{"a python by name", "python3", false, "python3", ""},
		{"the ipython launcher", launcher, true, "/usr/bin/python3", "IPython's launcher"},
		{"a launcher through a shim", shim, true, "/opt/py/bin/python3.11", "IPython's launcher"},
		{"a python by another name", other, false, other, ""},
		{"not a python", notPython, false, "", "is not a Python: name a Python 3.8+"},
		{"too old", old, true, "", "is Python 2.7, and polyrepl needs Python 3.8 or newer"},
		{"no ipython", noIPython, true, "", "has no IPython: install it there (/venv/bin/python3 -m pip install ipython)"},
		{"no ipython, for python", noIPython, false, noIPython, ""},
	} {
		exe, note, err := Interpreter(context.Background(), spec(c.exe), c.ipython)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%s: Interpreter = %q, %q; want a refusal", c.name, exe, note)
		case c.want == "" && !strings.Contains(err.Error(), c.note):
			t.Errorf("%s: refusal %q does not say %q", c.name, err, c.note)
		case c.want == "" && strings.ContainsRune(err.Error(), 0x1b):
			t.Errorf("%s: refusal %q quotes an escape sequence", c.name, err)
		case c.want != "" && err != nil:
			t.Errorf("%s: Interpreter: %v", c.name, err)
		case c.want != "" && (exe != c.want || !strings.Contains(note, c.note)):
			t.Errorf("%s: Interpreter = %q, %q; want %q and a note saying %q", c.name, exe, note, c.want, c.note)
		}
	}
}

// FuzzParseProbe: whatever a program prints, the probe's answer is read
// or refused, never a panic, and an answer read is one line.
func FuzzParseProbe(f *testing.F) {
	f.Add([]byte("\npolyrepl-probe: 3 11 0 1 /usr/bin/python3\n"))
	f.Add([]byte("\x1b]0;IPython\a\npolyrepl-probe: 3 11 1 1 /usr/bin/python3\r\n"))
	f.Add([]byte("polyrepl-probe: 99999999999999999999 1 1 1 x\n"))
	f.Add([]byte("polyrepl-probe: -1 -1 -1 -1 \n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		p, ok := parseProbe(out)
		if ok && strings.ContainsAny(p.Executable, "\n") {
			t.Errorf("parseProbe(%q) = %+v: the executable spans lines", out, p)
		}
	})
}
