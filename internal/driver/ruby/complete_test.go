package ruby

import (
	"strings"
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
	for _, tc := range []struct {
		word string
		want string // the matches, joined by spaces; "" for none
		has  bool   // want is one match among others
	}{
		{"total_", "total_count total_sum", false},
		{"greeting.upc", "greeting.upcase greeting.upcase!", false},
		{"Shapes::C", "Shapes::Circle Shapes::Cube", false},
		{"boo", "boom", true},
		{"unles", "unless", false},
		{"boom.up", "", false},   // a method call: not run
		{"boom().up", "", false}, // an expression: not evaluated
		{"nothing_here.", "", false},
		{"", "", false},
	} {
		got, err := c.Complete(tc.word, 20*time.Second)
		if err != nil {
			t.Fatalf("complete %q: %v", tc.word, err)
		}
		joined := strings.Join(got, " ")
		if tc.has && !strings.Contains(" "+joined+" ", " "+tc.want+" ") || !tc.has && joined != tc.want {
			t.Errorf("complete %q = %q, want %q", tc.word, got, tc.want)
		}
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("a completion printed %q", out)
	}
	r := drivertest.Run(t, p, rec, 2, "total_count + 1")
	if r.Value != "42" {
		t.Errorf("the next cell: %+v", r)
	}
}
