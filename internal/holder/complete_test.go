package holder

import (
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/driver"
)

// A runtime's completions are bounded where they enter: the first
// CompleteMatches, none longer than CompleteMatch.
func TestBoundMatches(t *testing.T) {
	var m []string
	for range driver.CompleteMatches + 50 {
		m = append(m, "x")
	}
	m[0] = strings.Repeat("y", driver.CompleteMatch+1)
	got := boundMatches(m)
	if len(got) != driver.CompleteMatches || got[0] != "x" {
		t.Errorf("bounded to %d matches, the first %.10q", len(got), got[0])
	}
	if got := boundMatches(nil); got == nil || len(got) != 0 {
		t.Errorf("no matches: %v", got)
	}
}
