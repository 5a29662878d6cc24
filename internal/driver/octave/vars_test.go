package octave

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }

func TestParsePath(t *testing.T) {
	for path, want := range map[string]string{
		"":             "[]",
		"x":            "[x]",
		"cfg.db":       "[cfg .db]",
		"c{2}.a(3)":    "[c {2} .a (3)]",
		" s.a_1 ":      "[s .a_1]",
		"x(1:3)":       "error",
		"x.y(end)":     "error",
		"disp(1)":      "[disp (1)]", // walked there only if disp is a variable
		"c{0}":         "error",
		"1x":           "error",
		"s.('a')":      "error",
		"x; system(1)": "error",
	} {
		steps, err := parsePath(path)
		got := "error"
		if err == nil {
			got = "[" + strings.Join(steps, " ") + "]"
		}
		if got != want {
			t.Errorf("parsePath(%q) = %s (%v), want %s", path, got, err, want)
		}
	}
}

func TestParseVars(t *testing.T) {
	l, err := parseVars("total\t3\nx\tdouble\t1x1\t8\t0\t1\nA\tdouble\t3x4\t96\t0\t1 2 3 …\n", driver.VarsQuery{})
	if err != nil || l.Total != 3 || len(l.Vars) != 2 || l.Vars[0].Name != "A" || l.Vars[0].Memory != 96 {
		t.Errorf("%v %+v", err, l)
	}
	if _, err := parseVars("polyrepl_error\t'dfx' undefined\n", driver.VarsQuery{Path: "dfx"}); err == nil || err.Error() != "'dfx' undefined" {
		t.Errorf("bad path: %v", err)
	}
}

// FuzzParseVars: whatever Octave prints, the look is read without a
// panic, and its total is never below its lines.
func FuzzParseVars(f *testing.F) {
	f.Add("total\t1\nx\tdouble\t1x1\t8\t0\t1\n", "")
	f.Add("polyrepl_error\tno\n", "x")
	f.Fuzz(func(t *testing.T, out, path string) {
		l, err := parseVars(out, driver.VarsQuery{Path: path})
		if err == nil && l.Total < len(l.Vars) {
			t.Errorf("total %d below %d lines", l.Total, len(l.Vars))
		}
	})
}

// A live Octave: the look lists the workspace's variables with whos's
// class, size and bytes and previews of Octave's own classes, goes into
// structs and cells, says a path names nothing in Octave's words, and
// leaves ans, lasterr and the output as they were; a cell carries the
// same look.
func TestVars(t *testing.T) {
	exe := drivertest.Exe(t, "POLYREPL_TEST_OCTAVE", "octave-cli", "GNU Octave (Debian: apt-get install octave)")
	p, rec := drivertest.StartExe(t, terminal.Driver{P: Profile}, exe)
	r := drivertest.Run(t, p, rec, 1, "A = reshape(1:12, 3, 4); s = 'hello'; cfg.db.host = 'h'; cfg.db.port = 5432; c = {1, 'two', [3 4]}; f = @(t) t.^2; b = true; z = 3+4i; 6*7")
	if r.Status != "done" || r.Vars == nil {
		t.Fatalf("%+v", r)
	}
	want := `A:double:3x4:96:1 2 3 4 5 6 7 8 …
b:logical:1x1:1:true
c:cell:1x3:27:{double, char, double}
cfg:struct:1x1:9:db
f:function_handle:1x1:0:@(t) t .^ 2
s:char:1x5:5:"hello"
z:double:1x1:16:3+4i`
	got := func(vs []api.Var) string {
		var out []string
		for _, v := range vs {
			out = append(out, strings.Join([]string{v.Name, v.Type, v.Size, fmtInt(v.Memory), v.Preview}, ":"))
		}
		return strings.Join(out, "\n")
	}
	if g := got(r.Vars.Vars); g != want {
		t.Errorf("the cell's look:\n%s\nwant\n%s", g, want)
	}
	if strings.Join(r.Names, " ") != "A b c cfg f s z" {
		t.Errorf("names %v", r.Names)
	}
	rec.TakeOutput()
	in := p.(driver.Inspector)
	l, err := in.Vars(driver.VarsQuery{}, 20*time.Second)
	if err != nil || got(l.Vars) != want {
		t.Errorf("look: %v\n%s", err, got(l.Vars))
	}
	for path, want := range map[string]string{
		"cfg.db": "host:char:1x1:1:\"h\"\nport:double:1x1:8:5432",
		"c":      "{1}:double:1x1:8:1\n{2}:char:1x3:3:\"two\"\n{3}:double:1x2:16:3 4",
	} {
		l, err := in.Vars(driver.VarsQuery{Path: path}, 20*time.Second)
		if err != nil || got(l.Vars) != want {
			t.Errorf("%s: %v\n%s\nwant\n%s", path, err, got(l.Vars), want)
		}
	}
	for path, want := range map[string]string{"dfx": "'dfx' undefined", "cfg.zz": "cfg has no field 'zz'", "A.x": "not a scalar struct", "ans": "'ans' undefined"} {
		if _, err := in.Vars(driver.VarsQuery{Path: path}, 20*time.Second); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	all, err := in.Vars(driver.VarsQuery{All: true}, 20*time.Second)
	if err != nil || all.Total != l.Total+1 {
		t.Errorf("all: %d lines (%v), want ans too", all.Total, err)
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("the looks printed %q", out)
	}
	drivertest.Run(t, p, rec, 2, "ans, lasterr")
	if out := rec.TakeOutput(); out != "ans = 42\nans = \n" {
		t.Errorf("after the looks: %q, want ans 42 and no error", out)
	}
}
