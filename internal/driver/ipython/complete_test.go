package ipython

import (
	"strings"
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
	for _, tc := range []struct {
		word string
		want string // the matches, joined by spaces; "" for none
		has  bool   // want is one match among others
	}{
		{"total_", "total_count total_sum", false},
		{"word.upp", "word.upper", false},
		{"%tim", "%timeit", true},
		{"d['co", "d['colour'] d['count_']", false},
		{"boom().up", "", false}, // a call: not run
		{"", "", false},
	} {
		got, err := c.Complete(tc.word, 30*time.Second)
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
