package gnuplot

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

func TestGnuplot(t *testing.T) {
	exe := drivertest.Exe(t, "POLYREPL_TEST_GNUPLOT", "gnuplot", "gnuplot (Debian: apt-get install gnuplot-nox)")
	p, rec := drivertest.StartExe(t, terminal.Driver{P: Profile}, exe)
	if v := p.Version(); !strings.Contains(v, ".") || strings.ContainsAny(v, " \n") {
		t.Errorf("version %q, want gnuplot's version and patch level", v)
	}
	svg := filepath.Join(t.TempDir(), "plot.svg")
	drivertest.Cells(t, p, rec, []drivertest.Cell{
		{Code: "print 6*7", Output: "42\n"},
		{Code: "f(x) = x * 2\nprint f(21)", Output: "42\n"},
		{Code: "foo bar", Status: "error", OutputHas: "foo bar", ErrorHas: "invalid command"},
		{Code: `print "héllo 中文 🎉"`, Output: "héllo 中文 🎉\n"},
		{Code: "set terminal svg\nset output '" + svg + "'\nplot sin(x)\nunset output"},
	})
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("the plot was not written: %v", err)
	}
	if r := drivertest.Run(t, p, rec, 6, "x = 1"); !slices.Equal(r.Names, []string{"f", "x"}) {
		t.Errorf("names %q, want [f x] (gnuplot's own left out)", r.Names)
	}
	if r := drivertest.InterruptAt(t, p, rec, 7, "print \"looping\"\npause 100", "looping", 500*time.Millisecond); r.Status != "interrupted" {
		t.Errorf("interrupt: %s", r.Status)
	}
	rec.TakeOutput()
	drivertest.Run(t, p, rec, 8, "print x")
	if out := rec.TakeOutput(); out != "1\n" {
		t.Errorf("after the interrupt: %q", out)
	}
}
