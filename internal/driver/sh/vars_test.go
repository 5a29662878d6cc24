package sh

import (
	"errors"
	"fmt"
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

func TestAssignments(t *testing.T) {
	got := assignments("HOME='/tmp'\nq='it'\"'\"'s'\ny='two\nlines'\nz=''\nd=\"a\\\"b\"\nb=a\\ b\nnot a line\nw='x=y'\n")
	want := map[string]string{"HOME": "/tmp", "q": "it's", "y": "two\nlines", "z": "", "d": `a"b`, "b": "a b", "w": "x=y"}
	if len(got) != len(want) {
		t.Errorf("%q", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestParseVars(t *testing.T) {
	out := "HOME='/tmp'\nPS1=''\n__polyrepl_base=' HOME PS1 '\nx='hello'\ny='two\nlines'\nE='1'\n" + exportsMark + "\nexport E='1'\nexport HOME='/tmp'\n"
	l, err := parseVars(out, driver.VarsQuery{})
	if want := "E:string, exported:1 character:\"1\"\nx:string:5 characters:\"hello\"\ny:string:9 characters, 2 lines:\"two\\nlines\""; err != nil || varLines(l.Vars) != want {
		t.Errorf("%v\n%s\nwant\n%s", err, varLines(l.Vars), want)
	}
	if l, _ := parseVars(out, driver.VarsQuery{All: true}); l.Total != 6 {
		t.Errorf("all: %d", l.Total)
	}
	l, err = parseVars(out, driver.VarsQuery{Path: "y"})
	if want := "1:string:3 characters:\"two\"\n2:string:5 characters:\"lines\""; err != nil || varLines(l.Vars) != want {
		t.Errorf("y: %v\n%s", err, varLines(l.Vars))
	}
	if _, err := parseVars(out, driver.VarsQuery{Path: "dfx"}); err == nil || err.Error() != "dfx: parameter not set" {
		t.Errorf("dfx: %v", err)
	}
	if _, err := vars(driver.VarsQuery{Path: "$(rm x)"}); err == nil {
		t.Errorf("a command taken as a path")
	}
}

// FuzzParseVars: whatever the shell prints, the look is read without a
// panic, sorted by name.
func FuzzParseVars(f *testing.F) {
	f.Add("x='a'\ny='b\nc'\n"+exportsMark+"\nexport x='a'\n", "")
	f.Add("q='it'\"'\"'s'\n", "q")
	f.Fuzz(func(t *testing.T, out, path string) {
		l, err := parseVars(out, driver.VarsQuery{Path: path})
		if err != nil || path != "" {
			return
		}
		for i := 1; i < len(l.Vars); i++ {
			if l.Vars[i-1].Name >= l.Vars[i].Name {
				t.Errorf("not sorted: %q", out)
			}
		}
	})
}

// A live sh on its terminal: the look lists the variables the session
// set, not the environment it started with nor polyrepl's own, exported
// ones said; a path gives a value's lines; nothing reaches the output.
func TestVars(t *testing.T) {
	p, rec := drivertest.StartExe(t, terminal.Driver{P: Profile}, "dash")
	r := drivertest.Run(t, p, rec, 1, "x=hello; y='two\nlines'; export E=1; HOME=/elsewhere")
	want := "E:string, exported:1 character:\"1\"\nx:string:5 characters:\"hello\"\ny:string:9 characters, 2 lines:\"two\\nlines\""
	if r.Status != "done" || r.Vars == nil || varLines(r.Vars.Vars) != want {
		t.Fatalf("%+v\n%s", r, varLines(r.Vars.Vars))
	}
	if strings.Join(r.Names, " ") != "E x y" {
		t.Errorf("names %v", r.Names)
	}
	rec.TakeOutput()
	in := p.(driver.Inspector)
	l, err := in.Vars(driver.VarsQuery{}, 20*time.Second)
	if err != nil || varLines(l.Vars) != want {
		t.Errorf("look: %v\n%s", err, varLines(l.Vars))
	}
	if l, err := in.Vars(driver.VarsQuery{Path: "y"}, 20*time.Second); err != nil || len(l.Vars) != 2 {
		t.Errorf("y: %v %+v", err, l)
	}
	if _, err := in.Vars(driver.VarsQuery{Path: "dfx"}, 20*time.Second); err == nil || err.Error() != "dfx: parameter not set" {
		t.Errorf("dfx: %v", err)
	}
	if all, err := in.Vars(driver.VarsQuery{All: true}, 20*time.Second); err != nil || all.Total <= l.Total+2 {
		t.Errorf("all: %d (%v)", all.Total, err)
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("the looks printed %q", out)
	}
	drivertest.Run(t, p, rec, 2, "echo $x")
	if out := rec.TakeOutput(); out != "hello\n" {
		t.Errorf("after the looks: %q", out)
	}

	// PS1 holds no mark whole: set prints none, in a cell or a look,
	// and a person attached raw sees no prompt from a look.
	drivertest.Run(t, p, rec, 3, "set | grep -A1 '^PS1='; echo after")
	if out := rec.TakeOutput(); out != "PS1='${__polyrepl_ph}${__polyrepl_pt}\n'\nafter\n" {
		t.Errorf("set in a cell: %q", out)
	}
	_, raw, detach, err := p.(driver.RawTerminal).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if b := <-raw; string(b) != "$ " {
		t.Errorf("attached raw: %q", b)
	}
	if _, err := in.Vars(driver.VarsQuery{}, 20*time.Second); err != nil {
		t.Error(err)
	}
	select {
	case b := <-raw:
		t.Errorf("a look showed %q to the person attached raw", b)
	case <-time.After(300 * time.Millisecond):
	}
	detach()

	// A look during a cell is refused: the runtime looks between cells.
	if err := p.Run(4, "sleep 1; echo slept"); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Vars(driver.VarsQuery{}, 20*time.Second); !errors.Is(err, driver.ErrCellRuns) {
		t.Errorf("a look during a cell: %v", err)
	}
	if r := <-rec.Done; r.Status != "done" || rec.TakeOutput() != "slept\n" {
		t.Errorf("the cell: %+v", r)
	}

	// A cell sent as a look is under way runs after it, whole, and
	// neither's output reaches the other; looks asked together are
	// refused but one, never mixed.
	looks := make(chan error, 3)
	for range 3 {
		go func() {
			l, err := in.Vars(driver.VarsQuery{}, 20*time.Second)
			if err == nil && varLines(l.Vars) != want {
				err = fmt.Errorf("a look beside a cell: %s", varLines(l.Vars))
			}
			looks <- err
		}()
	}
	r = drivertest.Run(t, p, rec, 5, "echo after")
	if out := rec.TakeOutput(); r.Status != "done" || out != "after\n" {
		t.Errorf("a cell beside looks: %s %q", r.Status, out)
	}
	for range 3 {
		if err := <-looks; err != nil && !errors.Is(err, driver.ErrCellRuns) && !strings.Contains(err.Error(), "another look") {
			t.Error(err)
		}
	}
}
