package driver

import (
	"strings"
	"testing"
)

// TestForkedBounded: what a fork's event says is held to its bounds where
// it enters, the totals never below the names kept.
func TestForkedBounded(t *testing.T) {
	var many []string
	for range 20 {
		many = append(many, strings.Repeat("t", 500))
	}
	f := Forked{PID: 7, Threads: many, ThreadsTotal: 3, Shared: []string{"socket (fd 5)"}, Children: []string{}}.Bounded()
	if len(f.Threads) != ForkList || f.ThreadsTotal != 20 {
		t.Errorf("threads: %d kept, total %d; want %d and 20", len(f.Threads), f.ThreadsTotal, ForkList)
	}
	for _, n := range f.Threads {
		if len([]rune(n)) > ForkWords+60 || !strings.Contains(n, "cut") {
			t.Errorf("a thread's name not cut to %d with the cut said: %d runes", ForkWords, len([]rune(n)))
		}
	}
	if f.SharedTotal != 1 || f.Shared[0] != "socket (fd 5)" || f.Children != nil || f.ChildrenTotal != 0 {
		t.Errorf("shared %v/%d, children %v/%d", f.Shared, f.SharedTotal, f.Children, f.ChildrenTotal)
	}
}
