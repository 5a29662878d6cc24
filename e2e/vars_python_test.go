package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// varsSection is where the looks' scenarios report.
const varsSection = "14 Looking at a session: vars"

// varsJSON runs `polyrepl vars ARGS --json` and decodes its reply.
func (e *env) varsJSON(args ...string) api.VarsReply {
	e.t.Helper()
	out, errOut, code := e.run(append(append([]string{"vars"}, args...), "--json")...)
	if code != 0 {
		e.t.Fatalf("vars %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	var r api.VarsReply
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		e.t.Fatalf("vars %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return r
}

// varsByName indexes a reply's lines.
func varsByName(r api.VarsReply) map[string]api.Var {
	m := make(map[string]api.Var, len(r.Vars))
	for _, v := range r.Vars {
		m[v.Name] = v
	}
	return m
}

// pythonVarsCell defines what a person looks at: a frame and an array
// (when the Python has pandas), a nested dict, a list, a function, and
// objects whose repr raises, sleeps or prints.
const pythonVarsCell = `import os, time
cfg = {"db": {"host": "db1", "port": 5432}, "debug": False}
rows = [[1, 2], [3, 4]]
def area(w, h=1):
    return w * h
class Boom:
    def __repr__(self):
        raise ValueError("no repr")
class Slow:
    def __repr__(self):
        time.sleep(30)
        return "slow"
class Loud:
    def __repr__(self):
        print("LOUD" + " REPR")
        return "loud"
boom, slow, loud = Boom(), Slow(), Loud()
try:
    import numpy as np, pandas as pd
    df = pd.DataFrame({"a": range(200000), "b": [1.5] * 200000})
    arr = np.arange(12).reshape(3, 4)
except ImportError:
    pass
`

// `polyrepl vars` on a Python session: its own names, one line each,
// without imports unless --all; a path's members; an object whose repr
// raises or sleeps said in note, in time; nothing printed into the
// session's output and no cell recorded.
func TestVarsPython(t *testing.T) {
	needPython(t)
	t.Parallel()
	for _, runtime := range []string{"python", "ipython"} {
		t.Run(runtime, func(t *testing.T) {
			if runtime == "ipython" && ipythonMissing() != "" {
				t.Skip(ipythonMissing())
			}
			t.Parallel()
			e := newEnv(t)
			if r := e.runJSON("exec", "s", "--runtime", runtime, pythonVarsCell); r.Status != "done" {
				t.Fatalf("the cell: %v", r)
			}
			start := time.Now()
			r := e.varsJSON("s")
			took := time.Since(start)
			got := varsByName(r)
			if r.Look != api.LookLive || r.Session != "s" {
				t.Errorf("look %q session %q, want live, s", r.Look, r.Session)
			}
			if _, ok := got["os"]; ok {
				t.Errorf("an import is listed without --all: %+v", got["os"])
			}
			if v := got["cfg"]; v.Type != "dict" || v.Size != "2 keys" || !v.Members || !strings.HasPrefix(v.Preview, "{'db': {'host': 'db1'") {
				t.Errorf("cfg: %+v", v)
			}
			if v := got["area"]; v.Type != "function" || v.Preview != "area(w, h=…)" {
				t.Errorf("area: %+v", v)
			}
			if v := got["boom"]; v.Note != "repr raised ValueError: no repr" {
				t.Errorf("boom: %+v", v)
			}
			if v := got["slow"]; v.Note != "repr took over 0.2 s" {
				t.Errorf("slow: %+v", v)
			}
			if took > 15*time.Second {
				t.Errorf("the look took %s beside a repr of 30 s", took)
			}
			if _, ok := got["df"]; ok {
				if v := got["df"]; v.Type != "DataFrame" || v.Size != "200000×2" || v.Preview != "a:int64, b:float64" || v.Memory < 3_200_000 {
					t.Errorf("df: %+v", v)
				}
				if v := got["arr"]; v.Type != "ndarray" || v.Size != "(3, 4)" || v.Memory != 96 {
					t.Errorf("arr: %+v", v)
				}
				cols := varsByName(e.varsJSON("s", "df"))
				if v := cols["b"]; v.Type != "float64" || v.Size != "200000 non-null" || v.Memory != 1_600_000 {
					t.Errorf("df's column b: %+v", v)
				}
			}
			db := e.varsJSON("s", `cfg["db"]`)
			if v := varsByName(db)["'port'"]; db.Path != `cfg["db"]` || db.Total != 2 || v.Preview != "5432" {
				t.Errorf(`cfg["db"]: %+v`, db)
			}
			if rows := e.varsJSON("s", "rows[1]"); rows.Total != 2 || rows.Vars[1].Name != "1" || rows.Vars[1].Preview != "4" {
				t.Errorf("rows[1]: %+v", rows)
			}
			all := e.varsJSON("s", "--all")
			if _, ok := varsByName(all)["os"]; !ok || all.Total <= r.Total || !all.All {
				t.Errorf("--all: %d names (without: %d), os among them: %v", all.Total, r.Total, ok)
			}
			_, errOut, code := e.run("vars", "s", "dfx")
			if code == 0 || !strings.Contains(errOut, "name 'dfx' is not defined") {
				t.Errorf("vars s dfx: exit %d, %q", code, errOut)
			}
			_, errOut, code = e.run("vars", "s", "area()")
			if code == 0 || !strings.Contains(errOut, "cannot be read") {
				t.Errorf("vars s 'area()': exit %d, %q", code, errOut)
			}
			// The looks recorded no cell and printed nothing.
			next := e.runJSON("exec", "s", "print('next')")
			if next.Cell != 2 || strings.Contains(next.Output, "LOUD REPR") {
				t.Errorf("the cell after the looks: cell %d, output %q", next.Cell, next.Output)
			}
			log, _, _ := e.run("log", "s")
			if strings.Contains(log, "LOUD REPR") {
				t.Errorf("a repr's print reached the record:\n%s", log)
			}
			report(t, varsSection, runtime+": `polyrepl vars` beside a repr that raises and one that sleeps 30 s",
				"%d names in %s; the raise and the timeout said in note; nothing printed, no cell recorded", r.Total, took.Round(time.Millisecond))
		})
	}
}

// While a cell runs, vars answers at once from the look the last cell's
// result carried, and says so with its cell number.
func TestVarsPythonDuringCell(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "s", "total = 41\ncfg = {'a': 1}")
	if r := e.runJSON("exec", "s", "-t", "0.5", "import time\ntime.sleep(8)\nlate = 1"); r.Status != "running" {
		t.Fatalf("the sleeping cell: %v", r)
	}
	start := time.Now()
	r := e.varsJSON("s")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("vars during a cell took %s: it waited behind the cell", took)
	}
	got := varsByName(r)
	if r.Look != api.LookLast || r.Cell != 1 || got["total"].Preview != "41" || got["cfg"].Size != "1 key" {
		t.Errorf("vars during a cell: %+v, want the look after cell 1 (last)", r)
	}
	if _, ok := got["late"]; ok {
		t.Errorf("a name of the running cell is listed: %+v", got["late"])
	}
	e.must(0, "wait", "s")
	if r := e.varsJSON("s"); r.Look != api.LookLive || varsByName(r)["late"].Preview != "1" {
		t.Errorf("vars after the cell: %+v", r)
	}
	report(t, varsSection, "python: `polyrepl vars` while a cell sleeps 8 s",
		"answered from the look after cell %d (look %s), at once", r.Cell, r.Look)
}
