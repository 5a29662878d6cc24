package ipython

import (
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
)

// IPython's look is the Python worker's over the shell's user_ns:
// IPython's own names (In, Out, _, __, _i1, _oh, _dh, exit, quit,
// get_ipython) are hidden unless all or the user rebinds them; a path
// reads what the user's names hold; the look changes no counter, no Out,
// no _ and no history, and prints nothing.
func TestVars(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, "import os\ncfg = {'db': {'port': 5432}}\ndef area(w, h=2): return w * h\nclass Boom:\n    def __repr__(self): raise ValueError('nope')\nboom = Boom()\n41")
	if r.Status != "done" || r.Value != "41" {
		t.Fatalf("the first cell: %+v", r)
	}
	in := p.(driver.Inspector)
	l, err := in.Vars(driver.VarsQuery{}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range l.Vars {
		names = append(names, v.Name)
	}
	if got := strings.Join(names, " "); got != "Boom area boom cfg" || l.Total != 4 {
		t.Errorf("the names: %s (total %d), want Boom area boom cfg", got, l.Total)
	}
	got := map[string]string{}
	for _, v := range l.Vars {
		got[v.Name] = v.Type + "|" + v.Size + "|" + v.Preview + "|" + v.Note
	}
	for name, want := range map[string]string{
		"cfg":  "dict|1 key|{'db': {'port': 5432}}|",
		"area": "function||area(w, h=…)|",
		"boom": "Boom|||repr raised ValueError: nope",
	} {
		if got[name] != want {
			t.Errorf("%s: %s, want %s", name, got[name], want)
		}
	}
	if r.Vars == nil || r.Vars.Total != 4 || strings.Join(r.Names, " ") != "Boom area boom cfg" {
		t.Errorf("the cell's look: %+v, names %v", r.Vars, r.Names)
	}
	all, err := in.Vars(driver.VarsQuery{All: true}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, v := range all.Vars {
		seen[v.Name] = true
	}
	for _, name := range []string{"In", "Out", "_", "_i1", "get_ipython", "exit", "os"} {
		if !seen[name] {
			t.Errorf("a look with all lacks %s (total %d)", name, all.Total)
		}
	}
	l, err = in.Vars(driver.VarsQuery{Path: `cfg["db"]`}, 30*time.Second)
	if err != nil || len(l.Vars) != 1 || l.Vars[0].Name != "'port'" || l.Vars[0].Preview != "5432" {
		t.Errorf(`cfg["db"]: %+v, %v`, l, err)
	}
	if l, err = in.Vars(driver.VarsQuery{Path: "Out[1]"}, 30*time.Second); err != nil || len(l.Vars) != 1 || l.Vars[0].Preview != "41" {
		t.Errorf("Out[1]: %+v, %v", l, err)
	}
	if _, err = in.Vars(driver.VarsQuery{Path: "nope.x"}, 30*time.Second); err == nil || err.Error() != "name 'nope' is not defined" {
		t.Errorf("nope.x: %v", err)
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("the looks printed %q", out)
	}
	r = drivertest.Run(t, p, rec, 2, "_, len(In), len(Out), get_ipython().execution_count")
	if r.Value != "(41, 3, 1, 2)" { // In holds "", cell 1 and this one
		t.Errorf("after the looks: %s, want (41, 3, 1, 2): no Out, _, history entry or count from a look", r.Value)
	}
}

// BenchmarkVars measures a look at 1,000 names in an IPython session.
func BenchmarkVars(b *testing.B) {
	p, rec := start(b)
	if r := drivertest.Run(b, p, rec, 1, "class K: pass\nfor i in range(1000): globals()['v%04d' % i] = [i, 'text', {'k': i}, K()][i % 4]"); r.Status != "done" {
		b.Fatalf("cell: %+v", r)
	}
	in := p.(driver.Inspector)
	b.ResetTimer()
	for range b.N {
		if _, err := in.Vars(driver.VarsQuery{}, 30*time.Second); err != nil {
			b.Fatal(err)
		}
	}
}
