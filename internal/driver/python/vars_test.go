package python

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// lookWait is how long a test lets a look take: generous, for a loaded
// machine; the looks themselves take milliseconds.
const lookWait = 30 * time.Second

// look asks p for a look, failing t if it cannot.
func look(t testing.TB, p driver.Process, path string, all bool) driver.Look {
	t.Helper()
	l, err := p.(driver.Inspector).Vars(driver.VarsQuery{Path: path, All: all}, lookWait)
	if err != nil {
		t.Fatalf("look at %q: %v", path, err)
	}
	return l
}

// byName indexes a look's lines.
func byName(l driver.Look) map[string]api.Var {
	m := make(map[string]api.Var, len(l.Vars))
	for _, v := range l.Vars {
		m[v.Name] = v
	}
	return m
}

// varCase is what one line must say: Type and Size exactly, Preview
// exactly or, with Has, as a part; Members as said.
type varCase struct {
	name, typ, size, preview string
	has, members             bool
}

func checkVars(t *testing.T, what string, l driver.Look, cases []varCase) {
	t.Helper()
	got := byName(l)
	for _, c := range cases {
		v, ok := got[c.name]
		if !ok {
			t.Errorf("%s: no line for %s in %+v", what, c.name, l.Vars)
			continue
		}
		if v.Type != c.typ || v.Size != c.size || v.Members != c.members ||
			(c.has && !strings.Contains(v.Preview, c.preview)) || (!c.has && v.Preview != c.preview) {
			t.Errorf("%s: %s = %+v\nwant type %q, size %q, preview %q (part: %v), members %v",
				what, c.name, v, c.typ, c.size, c.preview, c.has, c.members)
		}
		if len([]rune(v.Preview)) > api.VarPreview {
			t.Errorf("%s: %s's preview is %d characters, over %d", what, c.name, len([]rune(v.Preview)), api.VarPreview)
		}
	}
}

const builtinsCell = `import os, json
from math import sqrt
from collections import OrderedDict, deque
import datetime
n = 42
big = 10 ** 5000
x = 2.5
flag = True
nothing = None
s = "hello " * 40
raw = b"\x00\x01ab"
items = [1, "two", 3.0, None, [4, 5], {"k": 6}]
pair = (1, 2)
tags = {"a"}
cfg = {"db": {"host": "h", "port": 5432}, "debug": False}
od = OrderedDict(a=1)
dq = deque([1, 2])
r = range(10)
class Tricky(list):
    def __iter__(self):
        print("ITER RAN")
        return iter([])
    def __len__(self):
        print("LEN RAN")
        return 0
tricky = Tricky([1, 2])
push = items.append
when = datetime.date(2024, 5, 6)
def area(w, h=1, *rest, unit, **more):
    return w * h
sq = lambda v: v * v
class Point:
    def __init__(self):
        self.x, self.y, self._hidden = 1, [2, 3], 0
    @property
    def norm(self):
        print("NORM RAN")
        return 5
pt = Point()
_private = 1
`

// A look at the session's names, without a cell: one line per own name,
// sorted, with the runtime's type words, sizes and previews made from
// structure; imports (modules, imported functions and classes) and
// _names only with all; the same lines come with the cell's result.
func TestVarsBuiltins(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, builtinsCell)
	if r.Status != "done" {
		t.Fatalf("cell: %+v", r)
	}
	cases := []varCase{
		{name: "n", typ: "int", preview: "42"},
		{name: "big", typ: "int", preview: "<int of 16610 bits>"},
		{name: "x", typ: "float", preview: "2.5"},
		{name: "flag", typ: "bool", preview: "True"},
		{name: "nothing", typ: "None", preview: "None"},
		{name: "s", typ: "str", size: "240 characters", preview: "'hello hello ", has: true},
		{name: "raw", typ: "bytes", size: "4 bytes", preview: `b'\x00\x01ab'`},
		{name: "items", typ: "list", size: "6 items", preview: "[1, 'two', 3.0, None, [4, 5], {'k': 6}]", members: true},
		{name: "pair", typ: "tuple", size: "2 items", preview: "(1, 2)", members: true},
		{name: "tags", typ: "set", size: "1 item", preview: "{'a'}", members: true},
		{name: "cfg", typ: "dict", size: "2 keys", preview: "{'db': {'host': 'h', 'port': 5432}, 'debug': False}", members: true},
		{name: "od", typ: "OrderedDict", size: "1 key", preview: "{'a': 1}", members: true},
		{name: "dq", typ: "deque", size: "2 items", preview: "[1, 2]", members: true},
		{name: "r", typ: "range", size: "10 items", preview: "range(0, 10)"},
		{name: "when", typ: "date", preview: "2024-05-06"},
		{name: "tricky", typ: "Tricky", size: "2 items", preview: "[1, 2]", members: true},
		{name: "push", typ: "builtin function", preview: "append(object, /)"},
		{name: "area", typ: "function", preview: "area(w, h=…, *rest, unit, **more)"},
		{name: "sq", typ: "function", preview: "lambda v"},
		{name: "Point", typ: "class", preview: "class Point", members: true},
		{name: "pt", typ: "Point", preview: "<__main__.Point object at", has: true, members: true},
	}
	l := look(t, p, "", false)
	checkVars(t, "a look", l, cases)
	var names []string
	for _, v := range l.Vars {
		names = append(names, v.Name)
	}
	want := "Point Tricky area big cfg dq flag items n nothing od pair pt push r raw s sq tags tricky when x"
	if got := strings.Join(names, " "); got != want || l.Total != len(names) {
		t.Errorf("the names: %s (total %d)\nwant %s: no modules, imported functions or classes, _names", got, l.Total, want)
	}
	// The cell's result carries the same look, from structure only: an
	// object of unknown type has no preview there.
	if r.Vars == nil {
		t.Fatal("the cell's result carries no look")
	}
	cell := byName(*r.Vars)
	for _, c := range cases {
		if c.name == "pt" {
			if v := cell["pt"]; v.Preview != "" || v.Type != "Point" {
				t.Errorf("the cell's look at pt: %+v, want no preview (no repr runs after a cell)", v)
			}
			continue
		}
		if cell[c.name] != byName(l)[c.name] {
			t.Errorf("the cell's look at %s: %+v, the look's %+v", c.name, cell[c.name], byName(l)[c.name])
		}
	}
	if strings.Join(r.Names, " ") != want {
		t.Errorf("the cell's names: %v, want %s", r.Names, want)
	}
	all := byName(look(t, p, "", true))
	for _, name := range []string{"os", "json", "sqrt", "OrderedDict", "_private", "__builtins__", "n"} {
		if _, ok := all[name]; !ok {
			t.Errorf("a look with all lacks %s", name)
		}
	}
	if v := all["os"]; v.Type != "module" || v.Preview != "module os" || !v.Members {
		t.Errorf("all: os = %+v", v)
	}
	if out := rec.TakeOutput(); strings.Contains(out, "RAN") {
		t.Errorf("a look ran a property or a subclass's method: output %q", out)
	}
}

// A path names an object by .attr and [literal], never evaluated: the
// lines are its members (a dict's keys, a list's items in order, an
// object's attributes); a path to a leaf is the leaf's own line; a path
// naming nothing is an error in Python's words, and a property runs only
// through the timed call whose output is thrown away.
func TestVarsPaths(t *testing.T) {
	p, rec := start(t)
	drivertest.Run(t, p, rec, 1, builtinsCell)
	rec.TakeOutput()
	checkVars(t, "cfg", look(t, p, "cfg", false), []varCase{
		{name: "'db'", typ: "dict", size: "2 keys", preview: "{'host': 'h', 'port': 5432}", members: true},
		{name: "'debug'", typ: "bool", preview: "False"},
	})
	checkVars(t, `cfg["db"]`, look(t, p, `cfg["db"]`, false), []varCase{
		{name: "'port'", typ: "int", preview: "5432"},
	})
	l := look(t, p, "items", false)
	if len(l.Vars) != 6 || l.Vars[4].Name != "4" || l.Vars[4].Preview != "[4, 5]" || l.Total != 6 {
		t.Errorf("items: %+v", l)
	}
	checkVars(t, "items[5]['k']", look(t, p, "items[5]['k']", false), []varCase{{name: "items[5]['k']", typ: "int", preview: "6"}})
	checkVars(t, "items[-2]", look(t, p, " items[ -2 ] ", false), []varCase{{name: "0", typ: "int", preview: "4"}})
	l = look(t, p, "pt", false)
	if len(l.Vars) != 2 || l.Vars[0].Name != "x" || l.Vars[1].Name != "y" {
		t.Errorf("pt: %+v, want x and y (no _names)", l.Vars)
	}
	if l := look(t, p, "pt", true); len(l.Vars) != 3 {
		t.Errorf("pt with all: %+v, want _hidden, x, y", l.Vars)
	}
	checkVars(t, "pt.y[1]", look(t, p, "pt.y[1]", false), []varCase{{name: "pt.y[1]", typ: "int", preview: "3"}})
	checkVars(t, "pt.norm", look(t, p, "pt.norm", false), []varCase{{name: "pt.norm", typ: "int", preview: "5"}})
	checkVars(t, "os.sep", look(t, p, "os.sep", false), []varCase{{name: "os.sep", typ: "str", size: "1 character", preview: "'/'"}})
	for path, want := range map[string]string{
		"cfgx":            "name 'cfgx' is not defined",
		"cfg['nope']":     "KeyError: 'nope'",
		"items[99]":       "IndexError: list index out of range",
		"pt.z":            "'Point' object has no attribute 'z'",
		"os.nothing":      "module 'os' has no attribute 'nothing'",
		"area()":          "'(' at character 5 cannot be read",
		"cfg[__import__]": "a string, number, True, False or None was expected",
		"cfg['db":         "not closed",
		"":                "",
	} {
		if path == "" {
			continue
		}
		_, err := p.(driver.Inspector).Vars(driver.VarsQuery{Path: path}, lookWait)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("look at %q: %v, want an error saying %q", path, err, want)
		}
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("looks printed %q into the session's output", out)
	}
	// Nothing changed: the names, _ and the next cell.
	r := drivertest.Run(t, p, rec, 2, "sorted(k for k in globals() if not k.startswith('__')), 'norm' in dir()")
	if r.Status != "done" || strings.Contains(r.Value, "'_'") || !strings.HasSuffix(r.Value, "False)") {
		t.Errorf("after the looks: %+v", r)
	}
}

// An object of unknown type gets a preview only through its repr called
// with a time limit: one that raises or sleeps is said in note, and the
// look still answers in time; what a repr prints reaches no output; a
// look never waits behind a cell (ErrCellRuns).
func TestVarsUnknownRepr(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, `import time, os
class Boom:
    def __repr__(self):
        raise ValueError("no repr for you")
class Slow:
    def __repr__(self):
        time.sleep(30)
        return "slow"
class Loud:
    def __repr__(self):
        print("LOUD")
        os.write(1, b"LOUD-FD\n")
        return "loud"
class Sized:
    def __len__(self):
        return 7
class Catching:
    def __repr__(self):
        try:
            time.sleep(30)
        except BaseException:
            time.sleep(30)
        return "caught"
boom, slow, loud, sized, catching = Boom(), Slow(), Loud(), Sized(), Catching()`)
	if r.Status != "done" {
		t.Fatalf("cell: %+v", r)
	}
	start := time.Now()
	l := look(t, p, "", false)
	took := time.Since(start)
	got := byName(l)
	if v := got["boom"]; v.Type != "Boom" || v.Note != "repr raised ValueError: no repr for you" || v.Preview != "" {
		t.Errorf("boom: %+v", v)
	}
	if v := got["slow"]; v.Type != "Slow" || v.Note != "repr took over 0.2 s" {
		t.Errorf("slow: %+v", v)
	}
	// Six reprs of 30 s: the last is not called, the look's second for
	// calls spent.
	drivertest.Run(t, p, rec, 2, "slow2 = slow3 = slow4 = slow5 = slow6 = Slow()")
	if v := byName(look(t, p, "", false))["slow6"]; v.Note != "repr not called: the look's 1.0 s for calls was spent" {
		t.Errorf("slow6: %+v", v)
	}
	if v := got["catching"]; v.Type != "Catching" || v.Note != "repr took over 0.2 s" {
		t.Errorf("catching (a repr that catches the first timeout): %+v", v)
	}
	if v := got["loud"]; v.Preview != "loud" {
		t.Errorf("loud: %+v", v)
	}
	if v := got["sized"]; v.Size != "7 items" {
		t.Errorf("sized: %+v", v)
	}
	if took > 10*time.Second {
		t.Errorf("the look took %s with a repr sleeping 30 s", took)
	}
	r = drivertest.Run(t, p, rec, 3, "print('next')")
	if out := rec.TakeOutput(); out != "next\n" {
		t.Errorf("output after the look: %q, want only the next cell's", out)
	}
	// A cell runs: the look is refused at once, not queued behind it.
	if err := p.Run(4, "time.sleep(2)"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.(driver.Inspector).Vars(driver.VarsQuery{}, lookWait); err != driver.ErrCellRuns {
		t.Errorf("a look during a cell: %v, want ErrCellRuns", err)
	}
	<-rec.Done
}

// A look at 1,000 names answers in well under 50 ms (measured by
// BenchmarkVars); here, with a generous bound for a loaded machine, it
// lists the first api.VarsLimit and counts them all.
func TestVarsThousandNames(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, thousandNames)
	if r.Status != "done" || r.Vars == nil || r.Vars.Total != 1000 || len(r.Vars.Vars) != api.VarsLimit || len(r.Names) != 500 {
		t.Fatalf("cell: status %s, look %v", r.Status, r.Vars != nil)
	}
	start := time.Now()
	l := look(t, p, "", false)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a look at 1,000 names took %s", took)
	}
	if l.Total != 1000 || len(l.Vars) != api.VarsLimit || l.Vars[0].Name != "v0000" {
		t.Errorf("look: total %d, %d lines, first %+v", l.Total, len(l.Vars), l.Vars[0])
	}
}

// thousandNames defines 1,000 names of mixed kinds.
var thousandNames = func() string {
	var b strings.Builder
	b.WriteString("class K:\n    pass\n")
	for i := range 1000 {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "v%04d = %d\n", i, i)
		case 1:
			fmt.Fprintf(&b, "v%04d = 'text %d' * 3\n", i, i)
		case 2:
			fmt.Fprintf(&b, "v%04d = list(range(%d))\n", i, i)
		case 3:
			fmt.Fprintf(&b, "v%04d = {'k': %d, 'l': [1, 2]}\n", i, i)
		default:
			fmt.Fprintf(&b, "v%04d = K()\n", i)
		}
	}
	b.WriteString("del K\n")
	return b.String()
}()

// BenchmarkVars measures a look at 1,000 names through the worker
// protocol (command, look, event), between cells.
func BenchmarkVars(b *testing.B) {
	p, rec := start(b)
	if r := drivertest.Run(b, p, rec, 1, thousandNames); r.Status != "done" {
		b.Fatalf("cell: %+v", r)
	}
	in := p.(driver.Inspector)
	b.ResetTimer()
	for range b.N {
		if _, err := in.Vars(driver.VarsQuery{}, lookWait); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCellLook measures a trivial cell in a session of 1,000 names:
// the look its result carries is paid on every cell.
func BenchmarkCellLook(b *testing.B) {
	p, rec := start(b)
	if r := drivertest.Run(b, p, rec, 1, thousandNames); r.Status != "done" {
		b.Fatalf("cell: %+v", r)
	}
	drivertest.BenchCell(b, p, rec, "1+1")
}

// numpy and pandas objects are summarised from their structure: shape,
// dtype, memory (nbytes, memory_usage(deep=False)), first values; a
// frame's path lists its columns (dtype, non-null count, memory, first
// values), a column's path its head; the libraries are looked at only
// once the session imported them.
func TestVarsPandasNumpy(t *testing.T) {
	exe := testenv.NeedPythonModule(t, "pandas", "Debian: apt-get install python3-pandas")
	p, rec := drivertest.StartExe(t, worker.Driver{R: Runtime}, exe)
	r := drivertest.Run(t, p, rec, 1, `import sys
loaded = sorted(m for m in ("numpy", "pandas") if m in sys.modules)`)
	if r.Status != "done" {
		t.Fatalf("cell: %+v", r)
	}
	look(t, p, "", true)
	if r := drivertest.Run(t, p, rec, 2, "loaded, sorted(m for m in ('numpy', 'pandas') if m in sys.modules)"); r.Value != "([], [])" {
		t.Errorf("a look imported a library: %s", r.Value)
	}
	r = drivertest.Run(t, p, rec, 3, `import numpy as np, pandas as pd
arr = np.arange(12, dtype=np.int64).reshape(3, 4)
f32 = np.float32(1.5)
df = pd.DataFrame({"a": range(200000), "b": [1.5, None] * 100000, "name": ["x"] * 200000})
col = df["b"]
idx = pd.Index([10, 20, 30])`)
	if r.Status != "done" {
		t.Fatalf("cell: %+v", r)
	}
	cases := []varCase{
		{name: "arr", typ: "ndarray", size: "(3, 4)", preview: "int64 [0, 1, 2, 3, 4, 5, 6, 7, …]", members: true},
		{name: "f32", typ: "float32", preview: "1.5"},
		{name: "df", typ: "DataFrame", size: "200000×3", preview: "a:int64, b:float64, name:object", members: true},
		{name: "col", typ: "Series", size: "200000 rows", preview: "float64 [1.5, nan, 1.5, nan, 1.5, nan, 1.5, nan, …]", members: true},
		{name: "idx", typ: "Int64Index", size: "3 items", preview: "int64 [10, 20, 30]", members: true},
	}
	l := look(t, p, "", false)
	checkVars(t, "a look", l, cases)
	got := byName(l)
	// The frame's three columns of 8-byte values and its index.
	if df, col := got["df"].Memory, got["col"].Memory; got["arr"].Memory != 96 || df < 4_800_000 || df > 4_801_000 || col < 1_600_000 || col > 1_601_000 {
		t.Errorf("memory: arr %d, df %d, col %d", got["arr"].Memory, got["df"].Memory, got["col"].Memory)
	}
	if r.Vars == nil || byName(*r.Vars)["df"] != got["df"] {
		t.Errorf("the cell's look at df differs from the look's")
	}
	checkVars(t, "df", look(t, p, "df", false), []varCase{
		{name: "a", typ: "int64", size: "200000 non-null", preview: "[0, 1, 2, 3, 4, 5, 6, 7, …]", members: true},
		{name: "b", typ: "float64", size: "100000 non-null", preview: "[1.5, nan, ", has: true, members: true},
		{name: "name", typ: "object", size: "200000 non-null", preview: "['x', 'x', ", has: true, members: true},
	})
	if v := byName(look(t, p, "df", false))["b"]; v.Note != "100000 null" || v.Memory != 1600000 {
		t.Errorf("df's column b: %+v", v)
	}
	l = look(t, p, `df["a"]`, false)
	if l.Total != 200000 || len(l.Vars) != api.VarsLimit || l.Vars[99].Name != "99" || l.Vars[99].Preview != "99" {
		t.Errorf(`df["a"]: total %d, %d lines, last %+v`, l.Total, len(l.Vars), l.Vars[len(l.Vars)-1])
	}
	checkVars(t, "df.columns", look(t, p, "df.columns", false), []varCase{{name: "2", typ: "str", size: "4 characters", preview: "'name'"}})
	checkVars(t, "arr[1]", look(t, p, "arr[1]", false), []varCase{{name: "3", typ: "int64", preview: "7"}})
	checkVars(t, "df.shape", look(t, p, "df.shape", false), []varCase{{name: "0", typ: "int", preview: "200000"}})
	if _, err := p.(driver.Inspector).Vars(driver.VarsQuery{Path: `df["zz"]`}, lookWait); err == nil || !strings.Contains(err.Error(), "KeyError") {
		t.Errorf(`df["zz"]: %v, want a KeyError`, err)
	}
}

// torch and polars are not on this machine: stand-ins of their classes
// (same module and class names) show that each is recognised only while
// its library is in sys.modules, and summarised by the attributes the
// real one has.
func TestVarsLibraryStandIns(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, `import sys, types
class _Dev:
    type = "cpu"
class _Flat(list):
    def __getitem__(self, k): return _Flat(list.__getitem__(self, k))
    def tolist(self): return list(self)
class Tensor:
    shape = (2, 3)
    dtype = "torch.float32"
    device = _Dev()
    def element_size(self): return 4
    def nelement(self): return 6
    def detach(self): return self
    def reshape(self, n): return _Flat([0.5, 1.0, 1.5, 2.0, 2.5, 3.0])
    def __repr__(self): return "tensor(…)"
Tensor.__module__ = "torch"
t = Tensor()
torch = types.ModuleType("torch")`)
	if r.Status != "done" {
		t.Fatalf("cell: %+v", r)
	}
	if v := byName(look(t, p, "", false))["t"]; v.Type != "Tensor" || v.Size != "" || v.Preview != "tensor(…)" {
		t.Errorf("a torch.Tensor without torch in sys.modules: %+v, want an unknown type", v)
	}
	drivertest.Run(t, p, rec, 2, "sys.modules['torch'] = torch")
	checkVars(t, "with torch", look(t, p, "", false), []varCase{
		{name: "t", typ: "Tensor", size: "(2, 3)", preview: "float32 [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]", members: true},
	})
	drivertest.Run(t, p, rec, 3, "del sys.modules['torch']")

	// polars: a DataFrame's shape, estimated size, columns and dtypes;
	// its path lists each column's dtype, non-null count and head.
	r = drivertest.Run(t, p, rec, 4, `class Series:
    def __init__(self, name, values, dtype):
        self.name, self.values, self.dtype = name, values, dtype
    def __len__(self): return len(self.values)
    def null_count(self): return sum(v is None for v in self.values)
    def estimated_size(self): return 8 * len(self.values)
    def head(self, n): return Series(self.name, self.values[:n], self.dtype)
    def to_list(self): return list(self.values)
class DataFrame:
    def __init__(self, cols): self.cols = cols
    shape = property(lambda self: (len(self.cols[0]), len(self.cols)))
    columns = property(lambda self: [c.name for c in self.cols])
    dtypes = property(lambda self: [c.dtype for c in self.cols])
    def estimated_size(self): return sum(c.estimated_size() for c in self.cols)
    def get_column(self, name): return [c for c in self.cols if c.name == name][0]
Series.__module__ = DataFrame.__module__ = "polars.dataframe.frame"
pl = types.ModuleType("polars")
sys.modules["polars"] = pl
pdf = DataFrame([Series("id", [1, 2, 3], "Int64"), Series("tag", ["a", None, "c"], "String")])`)
	if r.Status != "done" {
		t.Fatalf("cell: %+v", r)
	}
	checkVars(t, "with polars", look(t, p, "", false), []varCase{
		{name: "pdf", typ: "DataFrame", size: "3×2", preview: "id:Int64, tag:String", members: true},
	})
	checkVars(t, "pdf", look(t, p, "pdf", false), []varCase{
		{name: "id", typ: "Int64", size: "3 non-null", preview: "[1, 2, 3]", members: true},
		{name: "tag", typ: "String", size: "2 non-null", preview: "['a', None, 'c']", members: true},
	})
	if v := byName(look(t, p, "pdf", false))["tag"]; v.Note != "1 null" || v.Memory != 24 {
		t.Errorf("pdf's column tag: %+v", v)
	}
	drivertest.Run(t, p, rec, 5, "del sys.modules['polars']")
}

// A name of 5 MB is cut where it enters, the way the daemon's api.Clip
// says a cut, so that the daemon keeps it as it is and says it once.
func TestVarsHugeName(t *testing.T) {
	p, rec := start(t)
	if r := drivertest.Run(t, p, rec, 1, "globals()['a' * 5_000_000] = 'v' * 5_000_000"); r.Status != "done" {
		t.Fatalf("cell: %+v", r)
	}
	l := look(t, p, "", false)
	want := api.Clip(strings.Repeat("a", 5_000_000), api.VarNameLimit, "name")
	if len(l.Vars) != 1 || l.Vars[0].Name != want || l.Vars[0].Size != "5000000 characters" || len([]rune(l.Vars[0].Preview)) > api.VarPreview {
		t.Errorf("the look: %.400s\nwant the name %q", fmt.Sprint(l.Vars), want)
	}
}

// xarray: a DataArray's dims, dtype and first values (only of data in
// memory), a Dataset's variables; their paths list variables and
// coordinates.
func TestVarsXarray(t *testing.T) {
	exe := testenv.NeedPythonModule(t, "xarray", "Debian: apt-get install python3-xarray")
	p, rec := drivertest.StartExe(t, worker.Driver{R: Runtime}, exe)
	r := drivertest.Run(t, p, rec, 1, `import numpy as np, xarray as xr
da = xr.DataArray(np.arange(12.).reshape(3, 4), dims=("x", "y"), coords={"x": [10, 20, 30]}, name="temp")
ds = xr.Dataset({"temp": da, "rain": ("x", [1, 2, 3])})`)
	if r.Status != "done" {
		t.Fatalf("cell: %+v", r)
	}
	checkVars(t, "a look", look(t, p, "", false), []varCase{
		{name: "da", typ: "DataArray", size: "(3, 4)", preview: "(x, y) float64 [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, …]", members: true},
		{name: "ds", typ: "Dataset", size: "2 variables", preview: "temp (3, 4), rain (3,)", members: true},
	})
	checkVars(t, "ds", look(t, p, "ds", false), []varCase{
		{name: "rain", typ: "DataArray", size: "(3,)", preview: "(x) int64 [1, 2, 3]", members: true},
		{name: "x", typ: "DataArray", size: "(3,)", preview: "(x) int64 [10, 20, 30]", members: true},
	})
	if v := byName(look(t, p, "", false))["ds"]; v.Memory != 144 {
		t.Errorf("ds's memory: %d, want 144 (96 + 24 + 24)", v.Memory)
	}
}

// The look a cell's result carries points the output nowhere while it
// looks: what the cell wrote from C and Python still reaches the output,
// on every cell (the look flushes C's buffers before it points them
// nowhere).
func TestVarsKeepsCellOutput(t *testing.T) {
	p, rec := start(t)
	for i, code := range []string{"import ctypes\nlibc = ctypes.CDLL(None)", "libc.printf(b'one')", "libc.printf(b'two\\n')", "print('three', end='')"} {
		if r := drivertest.Run(t, p, rec, i+1, code); r.Status != "done" {
			t.Fatalf("cell %d: %+v", i+1, r)
		}
	}
	if out := rec.TakeOutput(); out != "onetwo\nthree" {
		t.Errorf("output = %q, want onetwo\\nthree", out)
	}
}

// FuzzVarsPath gives the worker's path grammar any text: the look
// answers (lines, or an error in words) within its time, never runs
// what the text says, and the session goes on.
func FuzzVarsPath(f *testing.F) {
	for _, seed := range []string{"cfg", `cfg["db"]`, "items[-1]", "pt.y[0]", "cfg['a\\'b']", "x[1.5]", "a.b.c",
		"__import__('os').system('echo RAN')", "cfg[", `cfg["\x00"]`, "é", "items[0][0]", "[1]", "cfg[True]", "cfg [ 'db' ] . keys"} {
		f.Add(seed)
	}
	p, rec := start(f)
	drivertest.Run(f, p, rec, 1, "cfg = {'db': {'port': 1}, True: 2}\nitems = [[1], 2]\nclass P:\n    y = [0]\npt = P()")
	in := p.(driver.Inspector)
	f.Fuzz(func(t *testing.T, path string) {
		if len(path) > api.VarPathLimit {
			return
		}
		_, err := in.Vars(driver.VarsQuery{Path: path}, lookWait)
		if err != nil && (strings.Contains(err.Error(), "did not look") || strings.Contains(err.Error(), "ended") || strings.Contains(err.Error(), "the look failed")) {
			t.Fatalf("look at %q: %v", path, err)
		}
		if out := rec.TakeOutput(); out != "" {
			t.Fatalf("look at %q printed %q", path, out)
		}
	})
}
