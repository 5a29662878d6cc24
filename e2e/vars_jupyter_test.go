package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// varsKernels are the Jupyter kernels that look (ipykernel by its
// user_expressions, IRkernel by a silent request answered as a display
// of polyrepl's own type), as their users check them.
var varsKernels = []varsCase{
	{
		runtime: "jupyter:python3", install: "python3-ipykernel",
		setup: `import time
import numpy as np, pandas as pd
df = pd.DataFrame({'a': range(150), 'b': ['x'] * 150}); arr = np.arange(12).reshape(3, 4)
cfg = {'db': {'host': 'h', 'port': 5432}, 'tags': ['x', 'y']}
def area(w, h=2): return w * h
class Boom:
    def __repr__(self): raise ValueError('no repr')
class Slow:
    def __repr__(self):
        time.sleep(5)
        return 'slept'
boom, slow = Boom(), Slow()`,
		names: []wantVar{
			{"df", "DataFrame", "150×2", "a:int64, b:object", ""},
			{"arr", "ndarray", "(3, 4)", "int64 [0, 1, 2", ""},
			{"cfg", "dict", "2 keys", "{'db': {'host': 'h', 'port': 5432}", ""},
			{"area", "function", "", "area(w, h=…)", ""},
			{"boom", "Boom", "", "", "repr raised ValueError: no repr"},
			{"slow", "Slow", "", "", "repr took over 0.2 s"},
		},
		path: `cfg["db"]`, members: []string{"'host'", "'port'"},
		badPath: "dfx", badWords: "name 'dfx' is not defined",
		running: "print('run-mark', flush=True)\ntime.sleep(30)",
	},
	{
		runtime: "jupyter:ir", install: "r-cran-irkernel",
		setup: `df <- data.frame(a = 1:150, b = letters[(0:149 %% 26) + 1])
m <- matrix(1:12, 3); cfg <- list(db = list(host = "h", port = 5432), tags = c("x", "y"))
f <- function(x, y = 2) x + y
boom <- structure(list(), class = "boom"); print.boom <- function(x, ...) stop("no printing")
slow <- structure(list(), class = "slow"); print.slow <- function(x, ...) Sys.sleep(5)`,
		names: []wantVar{
			{"df", "data.frame", "150×2", "a int, b chr", ""},
			{"m", "matrix", "3×4", "integer 1 2 3", ""},
			{"cfg", "list", "2 items", "db: list, tags: chr", ""},
			{"f", "function", "", "function(x, y = 2)", ""},
			{"boom", "boom", "", "", "print raised: no printing"},
			{"slow", "slow", "", "", "print took over 0.2 s"},
		},
		path: `cfg$db`, members: []string{"host", "port"},
		badPath: "dfx", badWords: "object 'dfx' not found",
		running: `cat("run-mark\n"); Sys.sleep(30)`,
	},
}

// TestVarsJupyter: a session of ipykernel or IRkernel answers polyrepl
// vars with its own names from their structure — a frame's shape and
// columns, an array's shape, a nested dict's or list's keys, a
// function's arguments — an object whose repr or print raises or sleeps
// said in note within the look's time, what a path names, a path naming
// nothing in the kernel's words, more with --all; while a cell runs it
// answers from the look taken as the last cell ended; no look is in the
// record, prints into the output, or bumps the kernel's execution count;
// sessions lists the names the cell's look found. Then the same through
// a Jupyter Server, as a gateway.
func TestVarsJupyter(t *testing.T) {
	t.Parallel()
	for _, c := range varsKernels {
		t.Run(strings.TrimPrefix(c.runtime, "jupyter:"), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			needRuntime(t, e, c.runtime, c.install)
			kernelLooks(t, e, c, "vk")
		})
	}
	t.Run("gateway", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		needRuntime(t, e, "jupyter:python3", "python3-ipykernel")
		url, token, _, _ := jupyterServer(t, e)
		e.setenv("POLYREPL_GATEWAY_TOKEN", token)
		for _, c := range varsKernels {
			if found, _ := runtimeFound(e, c.runtime); found {
				kernelLooks(t, e, c, "gw", "--gateway", url)
			}
		}
	})
}

// kernelLooks checks the looks at a new session of c's kernel; args go
// with its first exec (a gateway's).
func kernelLooks(t *testing.T, e *env, c varsCase, prefix string, args ...string) {
	t.Helper()
	name := prefix + "-" + strings.TrimPrefix(c.runtime, "jupyter:")
	r := e.runJSON(append([]string{"exec", name, c.setup, "--runtime", c.runtime}, args...)...)
	if r.Status != "done" {
		t.Fatalf("%s: setup: %s", name, clip(r.String()))
	}
	start := time.Now()
	look := e.look(name)
	took := time.Since(start)
	if took > 8*time.Second {
		t.Errorf("%s: the look took %s", name, took)
	}
	if look.Look != api.LookLive || look.Total != len(look.Vars) || look.Total < len(c.names) {
		t.Errorf("%s: look %s, %d lines of %d, want at least %d", name, look.Look, len(look.Vars), look.Total, len(c.names))
	}
	got := map[string]api.Var{}
	var own []string
	for i, v := range look.Vars {
		got[v.Name] = v
		own = append(own, v.Name)
		if i > 0 && look.Vars[i-1].Name >= v.Name {
			t.Errorf("%s: not sorted by name: %s before %s", name, look.Vars[i-1].Name, v.Name)
		}
	}
	for _, w := range c.names {
		v, ok := got[w.name]
		if !ok {
			t.Errorf("%s: no line for %s in %+v", name, w.name, look.Vars)
			continue
		}
		if v.Type != w.typ || !strings.Contains(v.Size, w.size) || !strings.Contains(v.Preview, w.preview) || v.Note != w.note {
			t.Errorf("%s: %s: %+v, want type %q, size %q, preview %q, note %q", name, w.name, v, w.typ, w.size, w.preview, w.note)
		}
	}
	if s := e.session(name); strings.Join(s.Names, " ") != strings.Join(own, " ") {
		t.Errorf("%s: sessions lists %v, the look %v: want the same source", name, s.Names, own)
	}

	e.lookBeyond(name, c.path, c.members, c.badPath, c.badWords, look, c.names[0])

	// While a cell runs: the look taken as cell 1 ended.
	e.must(124, "exec", name, c.running, "-t", "1")
	during := e.look(name)
	if during.Look != api.LookLast || during.Cell != 1 || during.Total != look.Total {
		t.Errorf("%s: during cell 2: look %q after cell %d, %d names; want last after 1, %d", name, during.Look, during.Cell, during.Total, look.Total)
	}
	where := c.runtime
	if len(args) > 0 {
		where += " on a Jupyter Server"
	}
	report(t, varsSection, where+": `polyrepl vars` beside a display that raises and one that sleeps 5 s, then during a running cell",
		"%d names in %s (the CLI's whole call); the raise and the timeout said in note; during the cell: the look after cell %d (look %s)", look.Total, took.Round(time.Millisecond), during.Cell, during.Look)
	e.must(0, "interrupt", name)
	if !waitFor(30*time.Second, func() bool { return e.session(name).State == "idle" }) {
		t.Fatalf("%s: the running cell did not end: %+v", name, e.session(name))
	}

	hist, _ := e.must(0, "history", name, "--json")
	wantLacks(t, name+": the record after the looks", hist, `"cell":3`)
	out, _ := e.must(0, "log", name)
	wantLacks(t, name+": the output after the looks", out, "_polyrepl_look", "base::local", "cell_answer")
	after := e.look(name)
	if after.Total != look.Total {
		t.Errorf("%s: %d names after the looks and the cells, %d before", name, after.Total, look.Total)
	}
	if c.runtime == "jupyter:python3" {
		// Cells 1 and 2 counted; no look did.
		if r := e.runJSON("exec", name, "get_ipython().execution_count, len(In), len(Out)"); r.Value != "(3, 4, 0)" {
			t.Errorf("%s: after the looks: %s, want (3, 4, 0)", name, clip(r.String()))
		}
	}
}
