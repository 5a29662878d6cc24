package ghci

import (
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// varLines is a look's lines as "name:type:size:preview:note", one a line.
func varLines(vars []api.Var) string {
	var out []string
	for _, v := range vars {
		out = append(out, v.Name+":"+v.Type+":"+v.Size+":"+v.Preview+":"+v.Note)
	}
	return strings.Join(out, "\n")
}

// What GHCi's :show bindings prints becomes a look's lines: wrapped
// entries joined, types and classes named, kind signatures and
// instances left out, `it` only with all, thunks said.
func TestParseVars(t *testing.T) {
	out := `x :: String = _
longer ::
  (Int, String, [Int]) = (1,_,[1,2,3])
g ::
  (Show a, Num b) =>
  a -> b -> String = _
type N :: *
newtype N = ...
type C :: * -> Constraint
class C a
  ...
type Syn :: *
type Syn = Int
ys :: [Int] = [1,2,3]
it :: () = ()
(+++) :: [a] -> [a] -> [a] = _
instance [safe] Show R
`
	want := `(+++):[a] -> [a] -> [a]:::
C:class:::
N:newtype:::
Syn:type:::
g:(Show a, Num b) => a -> b -> String:::
longer:(Int, String, [Int])::(1,_,[1,2,3]):
x:String:::not evaluated (a look never forces it)
ys:[Int]:3 items:[1,2,3]:`
	l, err := parseVars(out, driver.VarsQuery{})
	if err != nil || varLines(l.Vars) != want || l.Total != 8 {
		t.Errorf("%v %d:\n%s\nwant\n%s", err, l.Total, varLines(l.Vars), want)
	}
	l, _ = parseVars(out, driver.VarsQuery{All: true})
	if l.Total != 9 {
		t.Errorf("all: %d lines, want it too", l.Total)
	}
	l, err = parseVars("xs :: [Integer]\nxs = [1,2,\n  3]\n", driver.VarsQuery{Path: "xs"})
	if err != nil || varLines(l.Vars) != "xs:[Integer]:3 items:[1,2, 3]:" {
		t.Errorf("path: %v %s", err, varLines(l.Vars))
	}
	_, err = parseVars("\n<interactive>:1:1: error: Variable not in scope: dfx\n\n<interactive>:1:1: error: Not in scope: ‘dfx’\n", driver.VarsQuery{Path: "dfx"})
	if err == nil || err.Error() != "Variable not in scope: dfx" {
		t.Errorf("bad path: %v", err)
	}
	for _, p := range []string{"x", "M.x", "(+++)", "x'"} {
		if _, err := vars(driver.VarsQuery{Path: p}); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, p := range []string{"x y", "print 1", "x\n:!rm", "T", "(x)"} {
		if _, err := vars(driver.VarsQuery{Path: p}); err == nil {
			t.Errorf("%q taken as a path", p)
		}
	}
}

func TestListItems(t *testing.T) {
	for val, want := range map[string]int{"[]": 0, "[1,2,3]": 3, `["a,b","c"]`: 2, "[(1,2),(3,4)]": 2, "[1,_,3]": 3, "[',']": 1, "1 : _": -1, "(1,2)": -1} {
		n, ok := listItems(val)
		if !ok {
			n = -1
		}
		if n != want {
			t.Errorf("listItems(%q) = %d, want %d", val, n, want)
		}
	}
}

// FuzzParseVars: whatever GHCi prints, the look is read without a panic,
// its lines named and sorted.
func FuzzParseVars(f *testing.F) {
	f.Add("x :: Int = 1\nf ::\n  a -> a = _\ndata T = ...\n", "")
	f.Add("xs :: [Integer]\nxs = [1,2]\n", "xs")
	f.Fuzz(func(t *testing.T, out, path string) {
		l, err := parseVars(out, driver.VarsQuery{Path: path})
		if err != nil {
			return
		}
		for i, v := range l.Vars {
			if v.Name == "" && path == "" {
				t.Errorf("a line without a name from %q", out)
			}
			if path == "" && i > 0 && l.Vars[i-1].Name > v.Name {
				t.Errorf("not sorted: %q", out)
			}
		}
	})
}

// A live GHCi: the look lists the session's bindings with their types
// and what is evaluated, forces no thunk (:sprint after it still shows
// _), leaves `it` as it was, prints nothing into the output; a cell that
// binds carries the same look; a path shows one name.
func TestVars(t *testing.T) {
	t.Parallel()
	exe := drivertest.Exe(t, "POLYREPL_TEST_GHCI", "ghci", "GHC (Debian: apt-get install ghc)")
	p, rec := drivertest.StartExe(t, terminal.Driver{P: Profile}, exe)
	r := drivertest.Run(t, p, rec, 1, "x = 1 :: Int\nxs = [1..10] :: [Integer]\nys = [1,2,3] :: [Int]\nlength ys\nf a = a + 1\ndata T = A | B Int deriving Show\n42")
	if r.Status != "done" || r.Vars == nil {
		t.Fatalf("%+v", r)
	}
	want := "T:data:::\nf:Num a => a -> a:::\nx:Int::1:\nxs:[Integer]:::not evaluated (a look never forces it)\nys:[Int]:3 items:[1,2,3]:"
	if got := varLines(r.Vars.Vars); got != want {
		t.Errorf("the cell's look:\n%s\nwant\n%s", got, want)
	}
	if strings.Join(r.Names, " ") != "T f x xs ys" {
		t.Errorf("names %v", r.Names)
	}
	rec.TakeOutput()
	in := p.(driver.Inspector)
	l, err := in.Vars(driver.VarsQuery{}, 20*time.Second)
	if err != nil || varLines(l.Vars) != want {
		t.Errorf("look: %v\n%s", err, varLines(l.Vars))
	}
	l, err = in.Vars(driver.VarsQuery{Path: "ys"}, 20*time.Second)
	if err != nil || varLines(l.Vars) != "ys:[Int]:3 items:[1,2,3]:" {
		t.Errorf("path: %v\n%s", err, varLines(l.Vars))
	}
	if _, err = in.Vars(driver.VarsQuery{Path: "dfx"}, 20*time.Second); err == nil || !strings.Contains(err.Error(), "not in scope: dfx") {
		t.Errorf("bad path: %v", err)
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("the looks printed %q", out)
	}
	drivertest.Run(t, p, rec, 2, ":sprint xs\nit")
	if out := rec.TakeOutput(); out != "xs = _\n42\n" {
		t.Errorf("after the looks: %q, want xs unforced and it still 42", out)
	}
}
