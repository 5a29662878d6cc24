package terminal

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
)

// A profile without Vars says it cannot look; with Vars, a look between
// cells sends the command and reads its output, which never reaches
// the session's; a cell that binds ends with the same look (its names
// from it); a look during a cell is refused.
func TestVars(t *testing.T) {
	p, rec := drivertest.StartExe(t, Driver{P: onTerminal}, "bash")
	if _, err := p.(driver.Inspector).Vars(driver.VarsQuery{}, time.Second); err == nil || !strings.Contains(err.Error(), "cannot look at its names without a cell") {
		t.Errorf("a profile without Vars: %v", err)
	}

	pr := *onTerminal
	pr.Vars = func(q driver.VarsQuery) (string, error) {
		if q.Path == "bad" {
			return "", &driver.PathError{Msg: "bad: not a path"}
		}
		return `printf 'x\t%s\n' "$x"`, nil
	}
	pr.ParseVars = func(out string, q driver.VarsQuery) (driver.Look, error) {
		var l driver.Look
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if name, val, ok := strings.Cut(line, "\t"); ok {
				l.Vars = append(l.Vars, api.Var{Name: name, Type: "string", Preview: val})
			}
		}
		l.Total = len(l.Vars)
		return l, nil
	}
	p, rec = drivertest.StartExe(t, Driver{P: &pr}, "bash")
	r := drivertest.Run(t, p, rec, 1, "x=hello; echo done")
	if r.Vars == nil || len(r.Vars.Vars) != 1 || r.Vars.Vars[0].Preview != "hello" || strings.Join(r.Names, " ") != "x" {
		t.Errorf("the cell's look: %+v, names %v", r.Vars, r.Names)
	}
	if out := rec.TakeOutput(); out != "done\n" {
		t.Errorf("the cell's output: %q", out)
	}
	in := p.(driver.Inspector)
	l, err := in.Vars(driver.VarsQuery{}, 20*time.Second)
	if err != nil || len(l.Vars) != 1 || l.Vars[0].Preview != "hello" {
		t.Errorf("look: %+v %v", l, err)
	}
	var pe *driver.PathError
	if _, err := in.Vars(driver.VarsQuery{Path: "bad"}, 20*time.Second); !errors.As(err, &pe) {
		t.Errorf("a bad path: %v", err)
	}
	if _, err := in.Vars(driver.VarsQuery{Path: strings.Repeat("a", api.VarPathLimit+1)}, 20*time.Second); err == nil {
		t.Errorf("a path over the limit was taken")
	}
	if err := p.Run(2, "sleep 1; echo slept"); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Vars(driver.VarsQuery{}, 20*time.Second); !errors.Is(err, driver.ErrCellRuns) {
		t.Errorf("a look during a cell: %v", err)
	}
	<-rec.Done
	if out := rec.TakeOutput(); out != "slept\n" {
		t.Errorf("output %q: a look's reached it?", out)
	}
}
