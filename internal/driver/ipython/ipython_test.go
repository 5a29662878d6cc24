package ipython

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// recorder records the worker's events (shared by every runtime's tests).
type recorder = drivertest.Recorder

// testPython is an interpreter with IPython: Debian's ipython3 is installed
// for /usr/bin/python3, which need not be the python3 first on PATH.
func testPython(t testing.TB) string {
	t.Helper()
	return testenv.NeedPythonModule(t, "IPython", "install ipython3 (Debian)")
}

func start(t testing.TB) (driver.Process, *recorder) {
	return startWith(t, testPython(t), 10000)
}

func startWith(t testing.TB, exe string, valueLimit int) (driver.Process, *recorder) {
	t.Helper()
	return drivertest.Start(t, worker.Driver{R: Runtime}, spec(t, exe, valueLimit, nil))
}

// spec starts IPython without LANG/LC_*: output must be UTF-8 whatever
// the locale. HOME is the test's own, so IPython's profile directory
// lands there.
func spec(t testing.TB, exe string, valueLimit int, extraEnv []string) driver.Spec {
	dir := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LANG=") && !strings.HasPrefix(kv, "LC_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "PYTHON") {
			env = append(env, kv)
		}
	}
	env = append(append(env, "HOME="+dir), extraEnv...)
	return driver.Spec{
		Exe: exe, Cwd: dir, Env: env, Cookie: drivertest.Cookie("ipython"),
		RuntimeDir: dir, ValueLimit: valueLimit,
	}
}

// The worker greets with IPython's version and the interpreter's path; the
// namespace is IPython's __main__ with none of the worker's names.
func TestStartAndCleanNamespace(t *testing.T) {
	p, rec := start(t)
	want, err := exec.Command(testPython(t), "-c", "import IPython, sys; sys.stdout.write(IPython.__version__)").Output()
	if err != nil {
		t.Fatal(err)
	}
	if p.Version() != string(want) {
		t.Errorf("version = %q, want %q", p.Version(), want)
	}
	if !filepath.IsAbs(p.Exe()) {
		t.Errorf("executable = %q, want an absolute path", p.Exe())
	}
	if !strings.HasPrefix(p.Note(), "IPython ") {
		t.Errorf("note = %q", p.Note())
	}
	r := drivertest.Run(t, p, rec, 1, "sorted(k for k in dir() if not k.startswith('_') and k not in ('In', 'Out', 'exit', 'quit', 'get_ipython'))")
	if r.Status != "done" || r.Value != "[]" || len(r.Names) != 0 {
		t.Errorf("fresh session: %+v", r)
	}
	for i, c := range []struct{ code, want string }{
		{"__name__", "'__main__'"},
		{"import sys; sys.modules['__main__'] is get_ipython().user_module", "True"},
		{"sys.argv", "['']"},
		{"type(get_ipython()).__name__", "'InteractiveShell'"},
	} {
		if got := drivertest.MustValue(t, p, rec, 2+i, c.code); got != c.want {
			t.Errorf("%s = %q, want %q", c.code, got, c.want)
		}
	}
	// User names that match the worker's helpers do not break it.
	r = drivertest.Run(t, p, rec, 10, "def run_cell(*a): pass\ndef names(*a): pass\ndef dumps(*a): pass\nsend = flush_all = None")
	if r.Status != "done" {
		t.Fatalf("clobbering: %+v", r.Error)
	}
	if got := drivertest.MustValue(t, p, rec, 11, "1+1"); got != "2" {
		t.Errorf("after clobbering: %q", got)
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("output = %q", out)
	}
}

// The value is IPython's text/plain display, not printed; ';' hides it;
// Out and _ still follow it; printed output goes to the output in order.
func TestValueDisplay(t *testing.T) {
	p, rec := start(t)
	if got := drivertest.MustValue(t, p, rec, 1, "6*7"); got != "42" {
		t.Errorf("6*7 = %q", got)
	}
	d := drivertest.MustValue(t, p, rec, 2, "{i: 'x' * 20 for i in range(5)}")
	want := "{0: 'xxxxxxxxxxxxxxxxxxxx',\n 1: 'xxxxxxxxxxxxxxxxxxxx',\n 2: 'xxxxxxxxxxxxxxxxxxxx',\n 3: 'xxxxxxxxxxxxxxxxxxxx',\n 4: 'xxxxxxxxxxxxxxxxxxxx'}"
	if d != want {
		t.Errorf("dict = %q, want %q", d, want)
	}
	if got := drivertest.MustValue(t, p, rec, 3, "{'b': 1, 'a': 2}"); got != "{'b': 1, 'a': 2}" {
		t.Errorf("small dict = %q", got)
	}
	r := drivertest.Run(t, p, rec, 4, "x = 5\nx * 2;")
	if r.Status != "done" || r.Value != "" {
		t.Errorf("trailing ';': %+v", r)
	}
	// The suppressed value did not become _.
	if got := drivertest.MustValue(t, p, rec, 5, "_ == {'b': 1, 'a': 2}"); got != "True" {
		t.Errorf("_ after a suppressed value: %q", got)
	}
	if got := drivertest.MustValue(t, p, rec, 6, "Out[max(Out)]"); got == "" {
		t.Errorf("Out is empty")
	}
	if got := drivertest.MustValue(t, p, rec, 7, "None"); got != "" {
		t.Errorf("None = %q", got)
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("values were printed: %q", out)
	}
	r = drivertest.Run(t, p, rec, 8, "import sys, os\nprint('a', end='')\nsys.stderr.write('b\\n')\nos.system('echo c')\nprint('d')\n7")
	if r.Status != "done" || r.Value != "7" {
		t.Errorf("printing cell: %+v", r)
	}
	if out := rec.TakeOutput(); out != "ab\nc\nd\n" {
		t.Errorf("output = %q", out)
	}
	if rec.LastEvent() != "done" {
		t.Errorf("last event = %q, want done after the output", rec.LastEvent())
	}
}

// Magics and shell commands run as in IPython, their output captured.
func TestMagics(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, "%timeit -n 10 -r 2 sum(range(100))")
	if out := rec.TakeOutput(); r.Status != "done" || !strings.Contains(out, "per loop") {
		t.Errorf("%%timeit: %+v, output %q", r, out)
	}
	r = drivertest.Run(t, p, rec, 2, "%time y = sum(range(10))")
	if out := rec.TakeOutput(); r.Status != "done" || !strings.Contains(out, "Wall time") {
		t.Errorf("%%time: %+v, output %q", r, out)
	}
	if got := drivertest.MustValue(t, p, rec, 3, "y"); got != "45" {
		t.Errorf("y = %q", got)
	}
	r = drivertest.Run(t, p, rec, 4, "!echo hi")
	if out := rec.TakeOutput(); r.Status != "done" || out != "hi\n" {
		t.Errorf("!echo hi: %+v, output %q", r, out)
	}
	if got := drivertest.MustValue(t, p, rec, 5, "files = !echo one; echo two\nfiles"); got != "['one', 'two']" {
		t.Errorf("captured shell output = %q", got)
	}
	r = drivertest.Run(t, p, rec, 6, "%nosuchmagic")
	if r.Status != "error" || r.Error == nil || !strings.Contains(r.Error.Traceback, "UsageError") {
		t.Errorf("unknown magic: %+v", r)
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("unknown magic printed %q", out)
	}
}

// An error reports IPython's plain traceback without printing it, and the
// session goes on.
func TestErrorThenRecovery(t *testing.T) {
	p, rec := start(t)
	drivertest.MustValue(t, p, rec, 1, "def f(x):\n    return 1 / x")
	r := drivertest.Run(t, p, rec, 2, "a = 1\nf(0)")
	if r.Status != "error" || r.Error == nil || r.Error.Type != "ZeroDivisionError" || r.Error.Message != "division by zero" {
		t.Fatalf("1/0: %+v", r)
	}
	tb := r.Error.Traceback
	if !strings.Contains(tb, "ZeroDivisionError") || !strings.Contains(tb, "return 1 / x") ||
		strings.Contains(tb, "worker") || strings.Contains(tb, "\x1b[") || strings.Contains(tb, "interactiveshell") {
		t.Errorf("traceback = %q", tb)
	}
	r = drivertest.Run(t, p, rec, 3, "def g(:\n  pass")
	if r.Status != "error" || r.Error == nil || r.Error.Type != "SyntaxError" || !strings.Contains(r.Error.Traceback, "SyntaxError") {
		t.Errorf("syntax error: %+v", r)
	}
	r = drivertest.Run(t, p, rec, 4, "import json\njson.loads('{')")
	if r.Status != "error" || r.Error == nil || r.Error.Type != "json.decoder.JSONDecodeError" {
		t.Errorf("module error: %+v", r)
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("errors were printed: %q", out)
	}
	r = drivertest.Run(t, p, rec, 5, "import sys; sys.exit()")
	if r.Status != "done" || r.Note == "" {
		t.Errorf("sys.exit(): %+v", r)
	}
	rec.TakeOutput()
	if got := drivertest.MustValue(t, p, rec, 6, "a + f(1)"); got != "2.0" {
		t.Errorf("after errors: %q", got)
	}
}

// interruptCell interrupts as the session does, 250 ms apart.
func interruptCell(t *testing.T, p driver.Process, rec *recorder, n int, code string) driver.Result {
	t.Helper()
	return drivertest.Interrupt(t, p, rec, n, code, 250*time.Millisecond)
}

// TestInterruptStorm interrupts a deep cell every 30 ms: the attempts after
// the first land while IPython makes the traceback, where IPython would
// print "KeyboardInterrupt" into the output itself were they not held off.
func TestInterruptStorm(t *testing.T) {
	p, rec := start(t)
	code := "def f(n):\n    return f(n+1) if n < 400 else g()\ndef g():\n    while True: pass\nf(0)"
	for i := 0; i < 5; i++ {
		if err := p.Run(i+1, code); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		// Interrupt every 30 ms until the cell ends: IPython may take a
		// while (on a loaded machine, over a second) to make the
		// traceback of 400 frames, and every attempt lands meanwhile.
		var r driver.Result
		deadline := time.Now().Add(20 * time.Second)
	storm:
		for attempt := 0; ; attempt++ {
			if time.Now().After(deadline) {
				t.Fatalf("run %d: the cell did not end in 20 s of interrupts", i)
			}
			if err := p.Interrupt(attempt); err != nil {
				t.Fatal(err)
			}
			select {
			case r = <-rec.Done:
				break storm
			case <-time.After(30 * time.Millisecond):
			}
		}
		if out := rec.TakeOutput(); r.Status != "interrupted" || out != "" {
			t.Errorf("run %d: %s, output %q; want interrupted and no output", i, r.Status, out)
		}
	}
	if got := drivertest.MustValue(t, p, rec, 6, "1 + 1"); got != "2" {
		t.Errorf("after the storm: %q", got)
	}
}

// SIGINT stops a busy or sleeping cell and keeps the names; between cells
// it is ignored.
func TestInterrupt(t *testing.T) {
	p, rec := start(t)
	drivertest.MustValue(t, p, rec, 1, "kept = 42")
	for i, code := range []string{"while True: pass", "import time\ntime.sleep(100)"} {
		r := interruptCell(t, p, rec, 2+i, code)
		if r.Status != "interrupted" || r.Error == nil || r.Error.Type != "KeyboardInterrupt" {
			t.Errorf("%q: %+v", code, r)
			continue
		}
		if !strings.Contains(r.Error.Traceback, "KeyboardInterrupt") || strings.Contains(r.Error.Traceback, "worker") {
			t.Errorf("%q: traceback = %q", code, r.Error.Traceback)
		}
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("output = %q", out)
	}
	drivertest.IdleSignals(t, p)
	r := drivertest.Run(t, p, rec, 10, "kept")
	if r.Status != "done" || r.Value != "42" || !reflect.DeepEqual(r.Names, []string{"kept"}) {
		t.Errorf("after interrupts: %+v", r)
	}
}

// names are the user's, sorted, from the look the cell's result carries:
// IPython's own are hidden unless the user rebinds them, and so are
// imports (modules; functions and classes from elsewhere).
func TestNames(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, "zeta = 1\nalpha = 2\n_hidden = 3\ndef fn(): pass\nclass K: pass\nimport os\n6")
	if want := []string{"K", "alpha", "fn", "zeta"}; !reflect.DeepEqual(r.Names, want) {
		t.Errorf("names = %q, want %q", r.Names, want)
	}
	r = drivertest.Run(t, p, rec, 2, "In = 'mine'\ndel zeta")
	if want := []string{"In", "K", "alpha", "fn"}; !reflect.DeepEqual(r.Names, want) {
		t.Errorf("names = %q, want %q", r.Names, want)
	}
	r = drivertest.Run(t, p, rec, 3, "for i in range(600): globals()[f'v{i:03d}'] = i")
	if len(r.Names) != 500 {
		t.Errorf("%d names, want at most 500", len(r.Names))
	}
}

// Unicode in code, values and output round-trips without a UTF-8 locale;
// long cells work and long values are cut.
func TestUnicodeAndSizes(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, "s = 'héllo wörld ✓ 日本 🎉'\nprint(s)\ns")
	if r.Status != "done" || r.Value != "'héllo wörld ✓ 日本 🎉'" {
		t.Errorf("unicode value: %+v", r)
	}
	if out := rec.TakeOutput(); out != "héllo wörld ✓ 日本 🎉\n" {
		t.Errorf("unicode output = %q", out)
	}
	var long strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&long, "v%d = %d  # a comment to make the cell longer\n", i, i)
	}
	long.WriteString("v299 + v1")
	if got := drivertest.MustValue(t, p, rec, 2, long.String()); got != "300" {
		t.Errorf("long cell = %q", got)
	}
	p2, rec2 := startWith(t, testPython(t), 100)
	r = drivertest.Run(t, p2, rec2, 1, "'a' * 50 + 'b' * 500 + 'c' * 50")
	if r.ValueTotal != 602 || r.ValueCut == nil || !strings.HasPrefix(r.Value, "'"+strings.Repeat("a", 49)+"\n[… 502 characters cut …]\n") ||
		!strings.HasSuffix(r.Value, strings.Repeat("c", 49)+"'") {
		t.Errorf("long value: total %d cut %v value %q", r.ValueTotal, r.ValueCut, r.Value)
	}
}

// Functions defined in a cell pickle by reference to a real __main__.
func TestPickle(t *testing.T) {
	p, rec := start(t)
	drivertest.MustValue(t, p, rec, 1, "def double(x):\n    return 2 * x")
	if got := drivertest.MustValue(t, p, rec, 2, "import pickle\npickle.loads(pickle.dumps(double))(21)"); got != "42" {
		t.Errorf("pickled function = %q", got)
	}
}

// A Python without IPython fails to start with a message that says so.
func TestNoIPython(t *testing.T) {
	exe := testPython(t)
	// A package named IPython that cannot be imported hides the real one.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "IPython"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "IPython", "__init__.py"), []byte("raise ImportError('hidden by the test')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := worker.Driver{R: Runtime}.Start(context.Background(), spec(t, exe, 100, []string{"PYTHONPATH=" + dir}), drivertest.NewRecorder())
	if err == nil || !strings.Contains(err.Error(), exe+" has no IPython") || !strings.Contains(err.Error(), "--python") {
		t.Errorf("start without IPython: %v", err)
	}
}

// BenchmarkCell measures one trivial cell through the worker protocol and
// IPython's run_cell, without the daemon.
func BenchmarkCell(b *testing.B) {
	p, rec := start(b)
	drivertest.BenchCell(b, p, rec, "1+1")
}
