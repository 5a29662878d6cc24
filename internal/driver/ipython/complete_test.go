package ipython

import (
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
)

// The worker completes a word between cells by IPython's own completer on
// the session: a name, a method after a dot, a magic, a dict's keys; a
// call before the dot is not run, nothing reaches the output, and the
// session goes on.
func TestComplete(t *testing.T) {
	p, rec := start(t)
	if r := drivertest.Run(t, p, rec, 1, "total_count = 41; total_sum = 2; word = 'abc'; d = {'colour': 1, 'count_': 2}\ndef boom():\n    print('RAN')\n    return word"); r.Status != "done" {
		t.Fatalf("the first cell: %+v", r)
	}
	rec.TakeOutput()
	c, ok := p.(driver.Completer)
	if !ok {
		t.Fatal("the IPython process completes nothing")
	}
	drivertest.CheckCompletions(t, c, []drivertest.CompleteCase{
		{Word: "total_", Want: "total_count total_sum"},
		{Word: "word.upp", Want: "word.upper"},
		{Word: "%tim", Want: "%timeit", Has: true},
		{Word: "d['co", Want: "d['colour'] d['count_']"},
		{Word: "boom().up", Want: ""}, // a call: not run
		{Word: "", Want: ""},
	}, 30*time.Second)
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("a completion printed %q", out)
	}
	r := drivertest.Run(t, p, rec, 2, "total_count + 1")
	if r.Value != "42" {
		t.Errorf("the next cell: %+v", r)
	}
}
