package console

import (
	"strings"
	"testing"
)

// TestTail: the last line of what a cell printed, its end kept when it
// is long, and the cut said.
func TestTail(t *testing.T) {
	for _, c := range []struct {
		name string
		adds []string
		want string
	}{
		{"a prompt", []string{"hello\nName? "}, "Name? "},
		{"in pieces", []string{"Na", "me", "? "}, "Name? "},
		{"a new line after a long one", []string{strings.Repeat("x", 5000), "\nok? "}, "ok? "},
		{"a long line", []string{strings.Repeat("x", 5000) + "end? "}, tailCut + strings.Repeat("x", maxTail-5) + "end? "},
		{"a long line of characters", []string{strings.Repeat("é", 1000)}, tailCut + strings.Repeat("é", maxTail/2)},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tl Tail
			for _, a := range c.adds {
				tl.Add([]byte(a))
			}
			if got := tl.String(); got != c.want {
				t.Errorf("String = %.80q…, want %.80q…", got, c.want)
			}
			tl.Reset()
			if tl.String() != "" {
				t.Errorf("after Reset: %q", tl.String())
			}
		})
	}
}
