// Package testenv holds what the tests of many packages need from the
// machine they run on: the Python interpreter sessions are started with,
// directories short enough for unix sockets, and a buffer that many
// goroutines write to. It is imported only by tests, never by the binary,
// and imports nothing of polyrepl, so that any package's tests can use it.
package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// PythonVar names the variable that chooses the tests' Python.
const PythonVar = "POLYREPL_TEST_PYTHON"

// debianPython is the interpreter Debian's python3-* packages (ipython3,
// ipykernel, nbformat, matplotlib) are installed for. The python3 first
// on PATH may be another build (pyenv's) that lacks them.
const debianPython = "/usr/bin/python3"

// Python returns the interpreter tests run Python sessions with:
// $POLYREPL_TEST_PYTHON, else /usr/bin/python3. When there is none it
// returns "" and why, in words a skipped test can say.
func Python() (exe, why string) {
	if p := os.Getenv(PythonVar); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("%s=%s is not usable: %v", PythonVar, p, err)
		}
		return p, ""
	}
	if _, err := os.Stat(debianPython); err == nil {
		return debianPython, ""
	}
	return "", fmt.Sprintf("no Python: install %s (Debian: apt-get install python3) or set %s", debianPython, PythonVar)
}

// NeedPython returns Python's interpreter, or skips t saying why there is
// none.
func NeedPython(t testing.TB) string {
	t.Helper()
	exe, why := Python()
	if exe == "" {
		t.Skip(why)
	}
	return exe
}

// imports remembers which modules an interpreter could import, so that
// many tests asking cost one run of Python each.
var imports sync.Map // exe + "\x00" + module -> error

// NeedPythonModule returns Python's interpreter if it imports module, or
// skips t saying what is missing and what to install (such as "Debian:
// apt-get install python3-nbformat").
func NeedPythonModule(t testing.TB, module, install string) string {
	t.Helper()
	exe := NeedPython(t)
	key := exe + "\x00" + module
	v, ok := imports.Load(key)
	if !ok {
		v, _ = imports.LoadOrStore(key, importErr(exe, module))
	}
	if err, _ := v.(error); err != nil {
		t.Skipf("%s has no %s (%v): %s, or set %s to a Python that has it", exe, module, err, install, PythonVar)
	}
	return exe
}

// importErr runs exe to import module, returning why it could not.
func importErr(exe, module string) error {
	out, err := exec.Command(exe, "-c", "import "+module).CombinedOutput()
	if err != nil {
		if line := lastLine(string(out)); line != "" {
			return fmt.Errorf("%w: %s", err, line)
		}
		return err
	}
	return nil
}

// lastLine is the last non-empty line of s: a Python traceback's
// message.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// MkdirShort makes a private directory whose path is short enough for the
// unix sockets made in it: a socket's path is limited to 108 bytes (104
// on macOS), and $TMPDIR (a test's, macOS's /var/folders/...) may be long
// already. It is under $TMPDIR when that is short, else under /tmp. The
// caller removes it; tests use ShortDir.
func MkdirShort() (string, error) {
	base := ""
	if len(os.TempDir()) > 40 {
		base = "/tmp"
	}
	d, err := os.MkdirTemp(base, "pr")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(d, 0o700); err != nil {
		os.RemoveAll(d)
		return "", err
	}
	return d, nil
}

// ShortDir is MkdirShort for a test: it fails t if the directory cannot
// be made, and removes it when t and its cleanups registered later have
// ended.
func ShortDir(t testing.TB) string {
	t.Helper()
	d, err := MkdirShort()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// Buffer is a bytes.Buffer that many goroutines may write to and read
// from: a process's output copied in the background, a daemon's log.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
