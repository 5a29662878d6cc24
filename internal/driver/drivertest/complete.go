package drivertest

import (
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
)

// CompleteCase is one word a test completes, and what it must give.
type CompleteCase struct {
	Word string
	Want string // the matches, joined by spaces; "" for none
	Has  bool   // Want is one match among others
}

// CheckCompletions completes each case's word with c, waiting at most
// wait for each, and says every one that gave other matches.
func CheckCompletions(t testing.TB, c driver.Completer, cases []CompleteCase, wait time.Duration) {
	t.Helper()
	for _, tc := range cases {
		got, err := c.Complete(tc.Word, wait)
		if err != nil {
			t.Fatalf("complete %q: %v", tc.Word, err)
		}
		joined := strings.Join(got, " ")
		if tc.Has && !strings.Contains(" "+joined+" ", " "+tc.Want+" ") || !tc.Has && joined != tc.Want {
			t.Errorf("complete %q = %q, want %q", tc.Word, got, tc.Want)
		}
	}
}
