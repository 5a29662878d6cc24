package driver

import "testing"

// TestDisplay: a value shown as its REPL would, each placeholder put in
// once, a value's own braces left as they are.
func TestDisplay(t *testing.T) {
	for _, c := range []struct{ format, name, v, want string }{
		{"", "", "42", "42"},
		{"Out[{n}]: {v}", "", "42", "Out[7]: 42"},
		{"{name} ==> {v}", "$1", "42", "$1 ==> 42"},
		{"Out[{n}]: {v}", "", "{n} {name} {v}", "Out[7]: {n} {name} {v}"},
		{"{x} {n", "", "1", "{x} {n"},
	} {
		if got := (Info{ValueFormat: c.format}).Display(7, c.name, c.v); got != c.want {
			t.Errorf("%q with %q: %q, want %q", c.format, c.v, got, c.want)
		}
	}
}

func BenchmarkDisplay(b *testing.B) {
	i := Info{ValueFormat: "Out[{n}]: {v}"}
	for b.Loop() {
		i.Display(12, "", "2")
	}
}
