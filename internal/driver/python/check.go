package python

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/plain"
)

// ProbeTimeout bounds the one line of Python an executable of unknown
// kind is asked to run before a session starts on it: a Python answers
// in well under a second (a pyenv shim, IPython's launcher in one or
// two), and a program that is no Python is told so in seconds instead of
// after driver.StartTimeout.
const ProbeTimeout = 20 * time.Second

// probeLimit bounds what is kept of a probe's output.
const probeLimit = 16 << 10

// quoteLimit bounds, in characters, what a refusal quotes of a probe's
// output.
const quoteLimit = 400

// blankLines are runs of empty lines, quoted as one line end. Compiled
// at first use, as every pattern here: every process of the binary runs
// this package's initialisation, a CLI command's too.
var blankLines = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n\s*\n`) })

// probeMark starts the probe's answer line.
const probeMark = "polyrepl-probe:"

// probeCode asks a Python who it is, in words Python 2 also reads (to be
// told it is too old): its version, whether it runs inside IPython (an
// IPython launcher ran it with -c), whether IPython can be imported
// (found, not imported: that costs a second), and its interpreter.
const probeCode = `import sys
v = sys.version_info
h = -1
try:
    import importlib.util
    h = int(importlib.util.find_spec('IPython') is not None)
except Exception:
    pass
sys.stdout.write('\n` + probeMark + ` %d %d %d %d %s\n' % (v[0], v[1], int('IPython' in sys.modules), h, sys.executable))
sys.stdout.flush()
`

// Probe is what a probed executable said of itself.
type Probe struct {
	Major, Minor int
	InIPython    bool   // it ran the line inside IPython: an IPython launcher
	HasIPython   int    // 1: IPython can be imported; 0: not; -1: unknown
	Executable   string // its interpreter, sys.executable
}

// parseProbe finds the probe's answer in what the executable printed.
func parseProbe(out []byte) (Probe, bool) {
	for line := range strings.SplitSeq(string(out), "\n") {
		_, rest, ok := strings.Cut(line, probeMark)
		if !ok {
			continue
		}
		f := strings.SplitN(strings.TrimSpace(rest), " ", 5)
		if len(f) < 5 {
			continue
		}
		var n [4]int
		bad := false
		for i := range n {
			var err error
			if n[i], err = strconv.Atoi(f[i]); err != nil {
				bad = true
			}
		}
		if bad {
			continue
		}
		return Probe{Major: n[0], Minor: n[1], InIPython: n[2] == 1, HasIPython: n[3], Executable: strings.TrimRight(f[4], "\r")}, true
	}
	return Probe{}, false
}

// pythonName matches the names a Python interpreter goes by: python,
// python3, python3.11, python3.13t, pypy3, python3-dbg. An executable so
// named is taken for a Python without asking (a pyenv shim takes most of
// a second to start).
var pythonName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(python|pypy)[0-9.]*(m|t|d|-dbg)?$`) })

// shebang reads the interpreter a script names on its first line, with
// the text of its head, or "" if exe is no script. `#!/usr/bin/env NAME`
// names NAME, found on the session's PATH.
func shebang(head []byte, env []string, cwd string) string {
	if !bytes.HasPrefix(head, []byte("#!")) {
		return ""
	}
	line, _, _ := bytes.Cut(head[2:], []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) == 0 {
		return ""
	}
	interp := f[0]
	if filepath.Base(interp) == "env" {
		rest := f[1:]
		for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
			rest = rest[1:] // env -S, env -i
		}
		if len(rest) == 0 {
			return ""
		}
		p, err := driver.LookPath(rest[0], env, cwd)
		if err != nil {
			return ""
		}
		return p
	}
	return interp
}

// Interpreter is the Python a session asked to run on spec.Exe starts,
// found before it starts so that a program that is not what was asked
// for is told in seconds, in words, instead of hanging until
// driver.StartTimeout: IPython's launcher (ipython3, a script whose
// interpreter is a Python) is replaced by its Python; an executable named
// as a Python is taken as one; anything else is asked to run one line of
// Python (Probe), and refused if it does not, is older than 3.8, or,
// with ipython set, has no IPython. note says a replacement, for the
// creation line.
func Interpreter(ctx context.Context, spec driver.Spec, ipython bool) (exe, note string, err error) {
	path, err := driver.LookPath(spec.Exe, spec.Env, spec.Cwd)
	if err != nil || pythonName().MatchString(filepath.Base(path)) {
		return spec.Exe, "", nil // the launch says what is missing
	}
	head := readHead(path, 4096)
	if interp := shebang(head, spec.Env, spec.Cwd); interp != "" &&
		pythonName().MatchString(filepath.Base(interp)) && bytes.Contains(head, []byte("IPython")) {
		return interp, launcherNote(spec.Exe, interp), nil
	}
	out, ex, timedOut := runProbe(ctx, path, spec)
	pr, ok := parseProbe(out)
	// A program that is not a Python says so at length (R names each
	// word of the line it was given): its first and last lines do.
	text := plain.Text(strings.ToValidUTF8(string(out), "\uFFFD"))
	text = blankLines().ReplaceAllString(text, "\n")
	quoted, _ := bound.HeadTailLines(text, quoteLimit)
	out = []byte(quoted)
	switch {
	case !ok && timedOut:
		return "", "", fmt.Errorf("%s is not a Python, or not one that answers: %s. Asked to run a line of Python, it did not within %s%s",
			spec.Exe, choose(ipython), ProbeTimeout, driver.Printed(out))
	case !ok:
		return "", "", fmt.Errorf("%s is not a Python: %s. Asked to run a line of Python (%s -c …), it %s%s",
			spec.Exe, choose(ipython), filepath.Base(path), ex.Describe(), driver.Printed(out))
	case pr.Major < 3 || pr.Major == 3 && pr.Minor < 8:
		return "", "", fmt.Errorf("%s is Python %d.%d, and polyrepl needs Python 3.8 or newer; %s", spec.Exe, pr.Major, pr.Minor, choose(ipython))
	case ipython && pr.HasIPython == 0:
		return "", "", fmt.Errorf("%s (Python %d.%d) has no IPython: install it there (%s -m pip install ipython), or %s",
			spec.Exe, pr.Major, pr.Minor, pr.Executable, choose(true))
	case pr.InIPython && pr.Executable != "":
		return pr.Executable, launcherNote(spec.Exe, pr.Executable), nil
	}
	return spec.Exe, "", nil
}

// choose says how to name another Python.
func choose(ipython bool) string {
	if ipython {
		return "name a Python 3.8+ that has IPython with --python (or --exe), or set $POLYREPL_IPYTHON or $POLYREPL_PYTHON"
	}
	return "name a Python 3.8+ with --python (or --exe), or set $POLYREPL_PYTHON"
}

func launcherNote(launcher, python string) string {
	return fmt.Sprintf("%s is IPython's launcher: the session runs its Python, %s", launcher, python)
}

// readHead reads up to n bytes from the start of a file.
func readHead(path string, n int) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, n)
	k, _ := f.Read(b)
	return b[:k]
}

// runProbe runs the probe in its own process group with no input, for at
// most ProbeTimeout, and returns what it printed (bounded) and how it
// ended.
func runProbe(ctx context.Context, path string, spec driver.Spec) ([]byte, driver.Exit, bool) {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	var out limitedBuffer
	cmd := exec.CommandContext(ctx, path, "-c", probeCode)
	cmd.Dir = spec.Cwd
	cmd.Env = append(append([]string(nil), spec.Env...), spec.Cookie)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		// Whatever it left in its group goes with it.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return out.b.Bytes(), driver.ExitOf(err), errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// limitedBuffer keeps the first probeLimit bytes written to it.
type limitedBuffer struct{ b bytes.Buffer }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := probeLimit - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
