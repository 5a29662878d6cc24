package r

import (
	"reflect"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
)

// The worker completes a word between cells by R's own completion on the
// session: a name, a data frame's columns after $, a package's function
// after ::, and no call is evaluated; nothing reaches the output and the
// session goes on.
func TestComplete(t *testing.T) {
	p, rec := start(t)
	drivertest.Run(t, p, rec, 1, "total_count <- 41; total_sum <- 2; df <- data.frame(colour = 1, count_ = 2); boom <- function() { cat('RAN\\n'); list(x = 1) }")
	rec.TakeOutput()
	c, ok := p.(driver.Completer)
	if !ok {
		t.Fatal("the R process completes nothing")
	}
	for _, tc := range []struct {
		word string
		want []string
	}{
		{"total_", []string{"total_count", "total_sum"}},
		{"df$co", []string{"df$colour", "df$count_"}},
		{"utils::head", []string{"utils::head", "utils::head.matrix"}},
		{"boom()$", nil}, // a call: not evaluated
		{"no_such_name_", nil},
		{"", nil},
	} {
		got, err := c.Complete(tc.word, 20*time.Second)
		if err != nil {
			t.Fatalf("complete %q: %v", tc.word, err)
		}
		if tc.word == "utils::head" {
			if len(got) < 1 || got[0] != "utils::head" {
				t.Errorf("complete %q = %q", tc.word, got)
			}
			continue
		}
		if len(got) == 0 && tc.want == nil {
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("complete %q = %q, want %q", tc.word, got, tc.want)
		}
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("a completion printed %q", out)
	}
	r := drivertest.Run(t, p, rec, 2, "total_count + 1")
	if r.Value != "[1] 42" {
		t.Errorf("the next cell: %+v", r)
	}
}
