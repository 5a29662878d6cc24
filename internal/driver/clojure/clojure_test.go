package clojure

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

func TestClojure(t *testing.T) {
	exe := drivertest.Exe(t, "POLYREPL_TEST_CLOJURE", "clojure", "Clojure (Debian: apt-get install clojure)")
	p, rec := drivertest.StartExe(t, terminal.Driver{P: Profile}, exe)
	if v := p.Version(); !strings.HasPrefix(v, "1.") {
		t.Errorf("version %q, want Clojure's", v)
	}
	drivertest.Cells(t, p, rec, []drivertest.Cell{
		{Code: "(* 6 7)", Value: "42"},
		{Code: `(print "no-newline")`, Value: "nil", Output: "no-newline"},
		{Code: "(/ 1 0)", Status: "error", OutputHas: "Execution error (ArithmeticException)", ErrorHas: "Divide by zero"},
		{Code: "(defn twice [x]\n  (let [y (* x 2)]\n    y))", Value: "#'user/twice"},
		{Code: "(twice 21)", Value: "42"},
		{Code: "*1", Value: "42"},
		{Code: `(println "héllo 中文 🎉")`, Value: "nil", Output: "héllo 中文 🎉\n"},
		{Code: `{:a "x"}`, Value: `{:a "x"}`},
	})
	if r := drivertest.Run(t, p, rec, 9, "(def x 1)"); !slices.Contains(r.Names, "x") || !slices.Contains(r.Names, "twice") {
		t.Errorf("names %q, want twice and x", r.Names)
	}
	if r := drivertest.Interrupt(t, p, rec, 10, "(loop [] (recur))", 500*time.Millisecond); r.Status != "interrupted" {
		t.Errorf("interrupt: %s", r.Status)
	}
	rec.TakeOutput()
	if r := drivertest.Run(t, p, rec, 11, "x"); r.Value != "1" {
		t.Errorf("after the interrupt: %s %q", r.Status, r.Value)
	}
}
