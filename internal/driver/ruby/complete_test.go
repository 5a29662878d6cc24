package ruby

import (
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
)

// The worker completes a word between cells from the session's binding: a
// local variable, a method a cell defined, a keyword, a named object's
// methods after a dot and a module's constants after ::; an expression
// before the dot is not evaluated, nothing reaches the output, and the
// session goes on.
func TestComplete(t *testing.T) {
	p, rec := start(t)
	if r := drivertest.Run(t, p, rec, 1, "total_count = 41; total_sum = 2; greeting = 'hi'; def boom; puts 'RAN'; 'x'; end; module Shapes; Circle = 1; Cube = 2; end"); r.Status != "done" {
		t.Fatalf("the first cell: %+v", r)
	}
	rec.TakeOutput()
	c, ok := p.(driver.Completer)
	if !ok {
		t.Fatal("the Ruby process completes nothing")
	}
	drivertest.CheckCompletions(t, c, []drivertest.CompleteCase{
		{Word: "total_", Want: "total_count total_sum"},
		{Word: "greeting.upc", Want: "greeting.upcase greeting.upcase!"},
		{Word: "Shapes::C", Want: "Shapes::Circle Shapes::Cube"},
		{Word: "boo", Want: "boom", Has: true},
		{Word: "unles", Want: "unless"},
		{Word: "boom.up", Want: ""},   // a method call: not run
		{Word: "boom().up", Want: ""}, // an expression: not evaluated
		{Word: "nothing_here.", Want: ""},
		{Word: "", Want: ""},
	}, 20*time.Second)
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("a completion printed %q", out)
	}
	r := drivertest.Run(t, p, rec, 2, "total_count + 1")
	if r.Value != "42" {
		t.Errorf("the next cell: %+v", r)
	}
}
