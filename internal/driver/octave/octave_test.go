package octave

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

func TestOctave(t *testing.T) {
	exe := drivertest.Exe(t, "POLYREPL_TEST_OCTAVE", "octave-cli", "GNU Octave (Debian: apt-get install octave)")
	p, rec := drivertest.StartExe(t, terminal.Driver{P: Profile}, exe)
	if v := p.Version(); v == "" || strings.ContainsAny(v, " \n") {
		t.Errorf("version %q, want Octave's version number", v)
	}
	drivertest.Cells(t, p, rec, []drivertest.Cell{
		{Code: "6*7", Output: "ans = 42\n"},
		{Code: `printf("no-newline")`, Output: "no-newline"},
		{Code: "function y = twice(x)\n  y = x * 2;\nend"},
		{Code: "twice(21)", Output: "ans = 42\n"},
		{Code: `error("boom")`, Status: "error", Output: "error: boom\n", ErrorHas: "boom"},
		{Code: `disp("héllo 中文 🎉")`, Output: "héllo 中文 🎉\n"},
		{Code: "s = '" + strings.Repeat("a", 5000) + "';\nlength(s)", Output: "ans = 5000\n"},
	})
	if r := drivertest.Run(t, p, rec, 8, "x = 1;"); !slices.Contains(r.Names, "x") || !slices.Contains(r.Names, "s") {
		t.Errorf("names %q, want x and s among them", r.Names)
	}
	if r := drivertest.Interrupt(t, p, rec, 9, "while true; end", 500*time.Millisecond); r.Status != "interrupted" {
		t.Errorf("interrupt: %s", r.Status)
	}
	rec.TakeOutput()
	drivertest.Run(t, p, rec, 10, "x")
	if out := rec.TakeOutput(); out != "x = 1\n" {
		t.Errorf("after the interrupt: %q", out)
	}
}
