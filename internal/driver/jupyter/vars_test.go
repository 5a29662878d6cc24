package jupyter

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
)

// lookWait is how long a test lets a look take: generous, for a loaded
// machine; the looks themselves take milliseconds.
const lookWait = 30 * time.Second

// look asks p for a look, failing t if it cannot.
func look(t *testing.T, p driver.Process, path string, all bool) driver.Look {
	t.Helper()
	l, err := p.(driver.Inspector).Vars(driver.VarsQuery{Path: path, All: all}, lookWait)
	if err != nil {
		t.Fatalf("look at %q: %v", path, err)
	}
	return l
}

// varWant is what one line must say: Type and Size exactly, Preview as
// a part, Note exactly.
type varWant struct {
	name, typ, size, preview, note string
	members                        bool
}

func checkLines(t *testing.T, what string, l driver.Look, want []varWant) {
	t.Helper()
	got := map[string]api.Var{}
	for i, v := range l.Vars {
		got[v.Name] = v
		if i > 0 && l.Vars[i-1].Name >= v.Name && what != "ordered" {
			t.Errorf("%s: not sorted by name: %s before %s", what, l.Vars[i-1].Name, v.Name)
		}
		if len([]rune(v.Preview)) > api.VarPreview {
			t.Errorf("%s: %s's preview is %d characters", what, v.Name, len([]rune(v.Preview)))
		}
	}
	for _, w := range want {
		v, ok := got[w.name]
		if !ok {
			t.Errorf("%s: no line for %s in %s", what, w.name, drivertest.VarLines(l.Vars))
			continue
		}
		if v.Type != w.typ || v.Size != w.size || !strings.Contains(v.Preview, w.preview) || v.Note != w.note || v.Members != w.members {
			t.Errorf("%s: %s = %+v\nwant type %q, size %q, preview with %q, note %q, members %v", what, w.name, v, w.typ, w.size, w.preview, w.note, w.members)
		}
	}
}

// TestVarsIPyKernel: ipykernel looks by its own user_expressions on a
// silent request: the session's own names (IPython's hidden), from their
// structure — a frame, an array, a nested dict, a function — an object
// whose repr raises or sleeps said in note within the look's time, a
// path's members, a path naming nothing in Python's words; and no look
// adds a name, bumps the execution count, enters the history or prints.
func TestVarsIPyKernel(t *testing.T) {
	p, rec := ipykernel(t)
	frame := exec.Command("/usr/bin/python3", "-c", "import pandas, numpy").Run() == nil
	setup := `import time
cfg = {'db': {'host': 'h', 'port': 5432}, 'tags': ['x', 'y']}
def area(w, h=2): return w * h
class Boom:
    def __repr__(self): raise ValueError('nope')
class Slow:
    def __repr__(self):
        time.sleep(5)
        return 'slow'
boom, slow = Boom(), Slow()
s = 'hello'
odd = {'<é>"': {'k': 1}}
41`
	if frame {
		setup = "import numpy as np, pandas as pd\narr = np.arange(12).reshape(3, 4)\ndf = pd.DataFrame({'a': range(150), 'b': ['x'] * 150})\n" + setup
	}
	r := drivertest.Run(t, p, rec, 1, setup)
	if r.Status != api.StatusDone || r.Value != "41" {
		t.Fatalf("the first cell: %+v %+v", r, r.Error)
	}
	rec.TakeOutput()
	own := "Boom Slow area boom cfg odd s slow"
	if frame {
		own = "Boom Slow area arr boom cfg df odd s slow"
	}
	if r.Vars == nil || varNames(r.Vars.Vars) != own || strings.Join(r.Names, " ") != own {
		t.Errorf("the cell's look: %+v, names %v; want %s", r.Vars, r.Names, own)
	} else {
		// The look a cell carries calls no repr.
		checkLines(t, "the cell's look", *r.Vars, []varWant{{name: "boom", typ: "Boom"}, {name: "slow", typ: "Slow"}})
	}

	start := time.Now()
	l := look(t, p, "", false)
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("the look took %s", d)
	}
	if varNames(l.Vars) != own || l.Total != len(l.Vars) {
		t.Errorf("the names: %s (total %d), want %s", varNames(l.Vars), l.Total, own)
	}
	want := []varWant{
		{"cfg", "dict", "2 keys", "{'db': {'host': 'h', 'port': 5432}", "", true},
		{"area", "function", "", "area(w, h=…)", "", false},
		{"boom", "Boom", "", "", "repr raised ValueError: nope", false},
		{"slow", "Slow", "", "", "repr took over 0.2 s", false},
		{"s", "str", "5 characters", "'hello'", "", false},
	}
	if frame {
		want = append(want, varWant{"df", "DataFrame", "150×2", "a:int64, b:object", "", true},
			varWant{"arr", "ndarray", "(3, 4)", "int64 [0, 1, 2", "", true})
	}
	checkLines(t, "the look", l, want)

	in := look(t, p, `cfg["db"]`, false)
	if varNames(in.Vars) != "'host' 'port'" {
		t.Errorf(`cfg["db"]: %s`, drivertest.VarLines(in.Vars))
	}
	if in := look(t, p, `odd['<é>"']`, false); varNames(in.Vars) != "'k'" {
		t.Errorf("a key the query's JSON escapes: %s", drivertest.VarLines(in.Vars))
	}
	if frame {
		cols := look(t, p, "df", false)
		if varNames(cols.Vars) != "a b" || cols.Vars[0].Type != "int64" {
			t.Errorf("df's columns: %s", drivertest.VarLines(cols.Vars))
		}
	}
	_, err := p.(driver.Inspector).Vars(driver.VarsQuery{Path: "nope.x"}, lookWait)
	var pe *driver.PathError
	if !errors.As(err, &pe) || pe.Msg != "name 'nope' is not defined" {
		t.Errorf("nope.x: %v, want a PathError in Python's words", err)
	}
	all := look(t, p, "", true)
	seen := map[string]bool{}
	for _, v := range all.Vars {
		seen[v.Name] = true
	}
	for _, name := range []string{"In", "Out", "get_ipython", "exit", "time"} {
		if !seen[name] {
			t.Errorf("a look with all lacks %s (total %d)", name, all.Total)
		}
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("the looks printed %q", out)
	}
	r = drivertest.Run(t, p, rec, 2, "'%s|%s|%d|%d|%d' % (' '.join(sorted(k for k in globals() if not k.startswith('_') and k not in ('In', 'Out', 'get_ipython', 'exit', 'quit', 'open'))), _, len(In), len(Out), get_ipython().execution_count)")
	wantNames := "Boom Slow area boom cfg odd s slow time"
	if frame {
		wantNames = "Boom Slow area arr boom cfg df np odd pd s slow time"
	}
	if want := "'" + wantNames + "|41|3|1|2'"; r.Value != want {
		t.Errorf("after the looks: %s\nwant %s: no name, Out, _, history entry or count from a look", r.Value, want)
	}

	// A failed cell's names come from a look after it (ipykernel
	// evaluates no user_expressions for it).
	r = drivertest.Run(t, p, rec, 3, "late = 1\n1/0")
	if r.Status != api.StatusError || !strings.Contains(strings.Join(r.Names, " "), "late") || r.Vars == nil {
		t.Errorf("a failed cell's names: %v (%+v)", r.Names, r.Vars)
	}

	// The module removed: the next look installs it again.
	drivertest.Run(t, p, rec, 4, "import sys as _s; del _s.modules['_polyrepl_look']")
	if l := look(t, p, "", false); !strings.Contains(varNames(l.Vars), "late") {
		t.Errorf("after the module was removed: %s", varNames(l.Vars))
	}
}

// TestVarsDuringCell: a look while a cell runs is refused (the holder
// answers from the last look); a kernel that dies mid-look ends it with
// an error.
func TestVarsDuringCell(t *testing.T) {
	p, rec := ipykernel(t)
	if err := p.Run(1, "import time\nprint('run-mark', flush=True)\ntime.sleep(30)"); err != nil {
		t.Fatal(err)
	}
	drivertest.WaitOutput(t, rec, "run-mark", "the cell's mark")
	if _, err := p.(driver.Inspector).Vars(driver.VarsQuery{}, lookWait); !errors.Is(err, driver.ErrCellRuns) {
		t.Errorf("a look during a cell: %v, want ErrCellRuns", err)
	}
	p.Interrupt(0)
	select {
	case <-rec.Done:
	case <-time.After(20 * time.Second):
		t.Fatal("the interrupt did not end the cell")
	}
	// A cell sent while a look runs waits for it in the kernel's queue:
	// the look (a repr that sleeps, stopped after 0.2 s) answers, and
	// then the cell runs, each taking only its own messages.
	drivertest.Run(t, p, rec, 2, "import time\nclass Slow:\n    def __repr__(self):\n        time.sleep(5)\n        return 'slow'\nslow = Slow()")
	looked := make(chan error, 1)
	var during driver.Look
	go func() {
		var err error
		during, err = p.(driver.Inspector).Vars(driver.VarsQuery{}, lookWait)
		looked <- err
	}()
	k := p.(*kernel)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		k.mu.Lock()
		asked := k.look != nil
		k.mu.Unlock()
		if asked {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the look was never sent")
		}
	}
	if err := p.Run(3, "print('cell-mark')\n6 * 7"); err != nil {
		t.Fatalf("a cell sent during a look: %v", err)
	}
	if err := <-looked; err != nil || varNames(during.Vars) != "Slow slow" || during.Vars[1].Note != "repr took over 0.2 s" {
		t.Errorf("the look a cell was sent behind: %+v, %v", during, err)
	}
	select {
	case r := <-rec.Done:
		if r.Value != "42" || r.Cell != 3 {
			t.Errorf("the cell sent during a look: %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the cell sent during a look did not end")
	}
	if out := rec.TakeOutput(); out != "cell-mark\n" {
		t.Errorf("output %q, want the cell's alone", out)
	}

	drivertest.Run(t, p, rec, 4, "class Hang:\n    def __repr__(self):\n        import os; os._exit(3)\nh = Hang()")
	_, err := p.(driver.Inspector).Vars(driver.VarsQuery{}, lookWait)
	if err == nil || !strings.Contains(err.Error(), "the kernel ended during the look") {
		t.Errorf("a look whose repr ends the kernel: %v, want the look ended with it", err)
	}
}

// TestVarsOtherKernel: a kernel that is neither ipykernel nor IRkernel
// says it cannot look, naming itself.
func TestVarsOtherKernel(t *testing.T) {
	k := &kernel{name: "jupyter:julia-1.9", impl: "IJulia", language: "julia"}
	_, err := k.Vars(driver.VarsQuery{}, time.Second)
	if err == nil || !strings.Contains(err.Error(), "the jupyter:julia-1.9 kernel (IJulia julia) cannot look") {
		t.Errorf("%v", err)
	}
}

// irkernel starts the ir kernel, or skips saying what to install.
func irkernel(t *testing.T) (driver.Process, *drivertest.Recorder) {
	t.Helper()
	if _, err := FindSpec("ir", os.Environ(), "/"); err != nil {
		t.Skipf("no Jupyter kernel ir (Debian: apt-get install r-cran-irkernel): %v", err)
	}
	d, err := driver.Lookup("jupyter:ir")
	if err != nil {
		t.Fatal(err)
	}
	return drivertest.StartWith(t, d, "", drivertest.Options{})
}

// TestVarsIRkernel: IRkernel, which ignores user_expressions, looks by
// the R worker's look in a silent request, answered as a display of
// polyrepl's own type: a data.frame, a list, a function, the path
// cfg$db; nothing enters .GlobalEnv, .Last.value stays, the execution
// count is not bumped, nothing is printed; each cell's names come from a
// look after it.
func TestVarsIRkernel(t *testing.T) {
	p, rec := irkernel(t)
	r := drivertest.Run(t, p, rec, 1, `df <- data.frame(a = 1:150, b = letters[(0:149 %% 26) + 1])
cfg <- list(db = list(host = "h", port = 5432), tags = c("x", "y"))
f <- function(x, y = 2) x + y
boom <- structure(list(), class = "boom"); print.boom <- function(x, ...) stop("no printing")
odd <- list("<é>\"" = list(k = 1))
41`)
	if r.Status != api.StatusDone {
		t.Fatalf("the first cell: %+v %+v", r, r.Error)
	}
	rec.TakeOutput()
	own := "boom cfg df f odd print.boom"
	if r.Vars == nil || varNames(r.Vars.Vars) != own || strings.Join(r.Names, " ") != own {
		t.Errorf("the cell's look: %+v, names %v; want %s", r.Vars, r.Names, own)
	}
	l := look(t, p, "", false)
	checkLines(t, "the look", l, []varWant{
		{"df", "data.frame", "150×2", "a int, b chr", "", true},
		{"cfg", "list", "2 items", "db: list, tags: chr", "", true},
		{"f", "function", "", "function(x, y = 2)", "", false},
		{"boom", "boom", "0 items", "", "print raised: no printing", false},
	})
	in := look(t, p, "cfg$db", false)
	if varNames(in.Vars) != "host port" {
		t.Errorf("cfg$db: %s", drivertest.VarLines(in.Vars))
	}
	if in := look(t, p, `odd[["<é>\""]]`, false); varNames(in.Vars) != "k" {
		t.Errorf("a name the query's JSON escapes: %s", drivertest.VarLines(in.Vars))
	}
	_, err := p.(driver.Inspector).Vars(driver.VarsQuery{Path: "dfx"}, lookWait)
	var pe *driver.PathError
	if !errors.As(err, &pe) || pe.Msg != "object 'dfx' not found" {
		t.Errorf("dfx: %v, want a PathError in R's words", err)
	}
	if all := look(t, p, "", true); all.Total <= l.Total {
		t.Errorf("all: %d names, without: %d", all.Total, l.Total)
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("the looks printed %q", out)
	}
	r = drivertest.Run(t, p, rec, 2, `c(paste(ls(), collapse = " "), format(.Last.value))`)
	if out := rec.TakeOutput(); !strings.Contains(out, `"boom cfg df f odd print.boom" "41"`) {
		t.Errorf("after the looks: %q %+v; want the same names and .Last.value 41", out, r)
	}
}

// varNames is a look's names, in its order.
func varNames(vars []api.Var) string {
	names := make([]string, len(vars))
	for i, v := range vars {
		names[i] = v.Name
	}
	return strings.Join(names, " ")
}

// TestLookKind: which kernels look, and how.
func TestLookKind(t *testing.T) {
	for _, c := range []struct {
		impl, language string
		want           int
	}{
		{"ipython", "python", lookIPython},
		{"IRkernel", "R", lookIR},
		{"xeus-python", "python", lookNone},
		{"ipython", "julia", lookNone},
		{"IJulia", "julia", lookNone},
		{"", "", lookNone},
	} {
		if got := lookKindOf(c.impl, c.language); got != c.want {
			t.Errorf("%s %s: %d, want %d", c.impl, c.language, got, c.want)
		}
	}
}

// TestLookAnswers: what a kernel's look says, read and bounded.
func TestLookAnswers(t *testing.T) {
	a := decodeAnswer(`{"vars":[{"name":"x","type":"int","memory":1.5e3,"members":false},{"name":"` + strings.Repeat("n", 5000) + `","type":"t","preview":"` + strings.Repeat("p", 500) + `"}],"total":7,"names":["x"]}`)
	l := a.look()
	if a.Error != "" || len(l.Vars) != 2 || l.Total != 7 || l.Vars[0].Memory != 1500 || len([]rune(l.Vars[1].Preview)) > api.VarPreview+100 || len(l.Vars[1].Name) > api.VarNameLimit+100 {
		t.Errorf("decoded %+v (%v)", l, a.Error)
	}
	if a := decodeAnswer(`{"error":"name 'x' is not defined"}`); a.Error != "name 'x' is not defined" || a.Failed {
		t.Errorf("a path's error: %+v", a)
	}
	if a := decodeAnswer(`<html>`); a.Error == "" || !a.Failed {
		t.Errorf("not JSON: %+v", a)
	}
	if a := decodeAnswer(`{"vars":[],"total":0}`); a.look().Vars == nil {
		t.Error("an empty look has nil lines")
	}
}

// FuzzLookAnswer: no answer a kernel sends makes a look of more lines or
// longer fields than a reply carries.
func FuzzLookAnswer(f *testing.F) {
	f.Add(`{"vars":[{"name":"x","type":"int"}],"total":1,"names":["x"]}`)
	f.Add(`{"error":"e","failed":true}`)
	f.Add(`{"vars":[{"memory":-1e300}],"total":-5}`)
	f.Fuzz(func(t *testing.T, text string) {
		a := decodeAnswer(text)
		l := a.look()
		if len(l.Vars) > api.VarsLimit || l.Total < len(l.Vars) {
			t.Fatalf("%d lines, total %d", len(l.Vars), l.Total)
		}
		for _, v := range l.Vars {
			if v.Memory < 0 || len([]rune(v.Preview)) > api.VarPreview+100 {
				t.Fatalf("line %+v", v)
			}
		}
		if len(a.names()) > maxNames {
			t.Fatalf("%d names", len(a.names()))
		}
	})
}

// TestRString: the R look's source travels as one R string literal,
// read back by R whole.
func TestRString(t *testing.T) {
	rscript, err := exec.LookPath("Rscript")
	if err != nil {
		t.Skip("no Rscript (Debian: r-base-core)")
	}
	s := "a \"quoted\" \\ back\nline\ttab\x01\x7f é × 🎉 `tick` 'single'"
	code := "x <- " + rString(s) + "; cat(nchar(x), utf8ToInt(x), sep = ' ')"
	out, err := exec.Command(rscript, "-e", code).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := []string{fmt.Sprint(len([]rune(s)))}
	for _, c := range s {
		want = append(want, fmt.Sprint(c))
	}
	if got := strings.TrimSpace(string(out)); got != strings.Join(want, " ") {
		t.Errorf("R read %s\nwant %s", got, strings.Join(want, " "))
	}
}

// BenchmarkVarsIPyKernel measures a look at 1,000 names in ipykernel.
func BenchmarkVarsIPyKernel(b *testing.B) {
	p, rec := ipykernel(b)
	if r := drivertest.Run(b, p, rec, 1, "class K: pass\nfor i in range(1000): globals()['v%04d' % i] = [i, 'text', {'k': i}, K()][i % 4]"); r.Status != "done" {
		b.Fatalf("cell: %+v", r)
	}
	in := p.(driver.Inspector)
	b.ResetTimer()
	for range b.N {
		if l, err := in.Vars(driver.VarsQuery{}, lookWait); err != nil || l.Total < 1000 {
			b.Fatal(l.Total, err)
		}
	}
}
