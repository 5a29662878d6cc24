package gnuplot

import (
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// varLines is a look's lines as "name:type:size:preview", one a line.
func varLines(vars []api.Var) string {
	var out []string
	for _, v := range vars {
		out = append(out, v.Name+":"+v.Type+":"+v.Size+":"+v.Preview)
	}
	return strings.Join(out, "\n")
}

const shown = `
	User and default variables:
	pi = 3.14159265358979
	I = {0.0, 1.0}
	NaN = NaN
	VoxelDistance = 0.0
	ARGC = 0
	ARG0 = ""
	ARGV = <0 element array>
	s = "a\nb"
	c = {1.0, 2.0}
	big = 12345678901
	y = 2.5
	B = <2 element array>

	User-Defined Functions:
	f(t)=t**2
`

func TestParseVars(t *testing.T) {
	want := `B:array:2 items:
big:integer::12345678901
c:complex::{1.0, 2.0}
f:function::f(t)=t**2
s:string:3 characters:"a\nb"
y:real::2.5`
	l, err := parseVars(shown, driver.VarsQuery{})
	if err != nil || varLines(l.Vars) != want || l.Total != 6 {
		t.Errorf("%v %d:\n%s\nwant\n%s", err, l.Total, varLines(l.Vars), want)
	}
	if l, _ := parseVars(shown, driver.VarsQuery{All: true}); l.Total != 13 {
		t.Errorf("all: %d lines", l.Total)
	}
	l, err = parseVars(shown+"[{1.0, 2.0},\"x,\\\"y\",]\n", driver.VarsQuery{Path: "B"})
	if want := "[1]:complex::{1.0, 2.0}\n[2]:string:4 characters:\"x,\\\"y\"\n[3]:undefined::"; err != nil || varLines(l.Vars) != want {
		t.Errorf("path: %v\n%s\nwant\n%s", err, varLines(l.Vars), want)
	}
	for path, want := range map[string]string{"dfx": "undefined variable: dfx", "y": "y is a real, not an array"} {
		if _, err := parseVars(shown, driver.VarsQuery{Path: path}); err == nil || err.Error() != want && !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v", path, err)
		}
	}
	for _, p := range []string{"B[1]", "x; system('rm')", "1x", ""} {
		if _, err := vars(driver.VarsQuery{Path: p}); (err == nil) != (p == "") {
			t.Errorf("path %q: %v", p, err)
		}
	}
}

// FuzzParseVars: whatever gnuplot prints, the look is read without a
// panic, its lines named.
func FuzzParseVars(f *testing.F) {
	f.Add(shown, "")
	f.Add(shown+"[1,\"a\",]\n", "B")
	f.Fuzz(func(t *testing.T, out, path string) {
		l, err := parseVars(out, driver.VarsQuery{Path: path})
		if err != nil {
			return
		}
		for _, v := range l.Vars {
			if v.Name == "" {
				t.Errorf("a line without a name from %q", out)
			}
		}
	})
}

// A live gnuplot: the look lists the session's variables and functions
// (gnuplot's own only with all), an array's items, says a name that is
// not defined in gnuplot's words, and sets nothing: GPVAL_ERRNO stays 0
// and nothing reaches the output.
func TestVars(t *testing.T) {
	exe := drivertest.Exe(t, "POLYREPL_TEST_GNUPLOT", "gnuplot", "gnuplot (Debian: apt-get install gnuplot-nox)")
	p, rec := drivertest.StartExe(t, terminal.Driver{P: Profile}, exe)
	r := drivertest.Run(t, p, rec, 1, "x = 1\ns = \"hello\"\narray A[3]\nA[1] = 2.5\nA[2] = \"two\"\nf(t) = t**2")
	want := "A:array:3 items:\nf:function::f(t) = t**2\ns:string:5 characters:\"hello\"\nx:integer::1"
	if r.Status != "done" || r.Vars == nil || varLines(r.Vars.Vars) != want {
		t.Fatalf("%+v\n%s", r, varLines(r.Vars.Vars))
	}
	in := p.(driver.Inspector)
	l, err := in.Vars(driver.VarsQuery{}, 20*time.Second)
	if err != nil || varLines(l.Vars) != want {
		t.Errorf("look: %v\n%s", err, varLines(l.Vars))
	}
	l, err = in.Vars(driver.VarsQuery{Path: "A"}, 20*time.Second)
	if want := "[1]:real::2.5\n[2]:string:3 characters:\"two\"\n[3]:undefined::"; err != nil || varLines(l.Vars) != want {
		t.Errorf("A: %v\n%s", err, varLines(l.Vars))
	}
	if _, err := in.Vars(driver.VarsQuery{Path: "dfx"}, 20*time.Second); err == nil || err.Error() != "undefined variable: dfx" {
		t.Errorf("dfx: %v", err)
	}
	all, err := in.Vars(driver.VarsQuery{All: true}, 20*time.Second)
	if err != nil || all.Total < l.Total+10 {
		t.Errorf("all: %d (%v)", all.Total, err)
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("the looks printed %q", out)
	}
	drivertest.Run(t, p, rec, 2, "print GPVAL_ERRNO")
	if out := rec.TakeOutput(); out != "0\n" {
		t.Errorf("GPVAL_ERRNO after the looks: %q", out)
	}
}
