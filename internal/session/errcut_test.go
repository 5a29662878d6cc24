package session

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
)

// An error is held to its bound, message and traceback together, each
// keeping its head and tail and saying the cut; the whole is given back
// to save only when something was cut.
func TestBoundError(t *testing.T) {
	big := strings.Repeat("x", 3_000_000)
	tb := "Traceback (most recent call last):\n  File \"<cell 1>\", line 1, in <module>\nValueError: " + big + "\n"
	for _, c := range []struct {
		name      string
		e         *api.CellError
		cut       bool
		wholeHas  string
		keepsMsg  bool // the message is short and kept whole
		keepsTail string
	}{
		{"nil", nil, false, "", false, ""},
		{"small", &api.CellError{Type: "ValueError", Message: "bad", Traceback: "Traceback\nValueError: bad\n"}, false, "", true, ""},
		{"exactly the limit", &api.CellError{Type: "E", Message: strings.Repeat("m", 4000), Traceback: strings.Repeat("t", 6000)}, false, "", true, ""},
		{"huge message in both", &api.CellError{Type: "ValueError", Message: big, Traceback: tb}, true, tb, false, "xxx\n"},
		{"short message, huge traceback", &api.CellError{Type: "RecursionError", Message: "maximum recursion depth exceeded",
			Traceback: strings.Repeat("  File \"<cell 1>\", line 1, in f\n", 100_000) + "RecursionError: maximum recursion depth exceeded\n"},
			true, "RecursionError: maximum", true, "RecursionError: maximum recursion depth exceeded\n"},
		{"no traceback", &api.CellError{Type: "error", Message: "é" + big}, true, "error: é", false, ""},
		{"huge type", &api.CellError{Type: strings.Repeat("T", 1_000_000), Message: "m"}, true, "", true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, whole := boundError(c.e, api.ErrorLimit)
			if c.e == nil {
				if got != nil || whole != "" {
					t.Fatalf("boundError(nil) = %v, %q", got, whole)
				}
				return
			}
			if (whole != "") != c.cut {
				t.Fatalf("whole given = %v, want %v", whole != "", c.cut)
			}
			if !c.cut {
				if got != c.e {
					t.Errorf("an error within the bound was changed: %+v", got)
				}
				return
			}
			if !strings.Contains(whole, c.wholeHas) || !strings.Contains(whole, c.e.Message) {
				t.Errorf("the whole error (%d bytes) lacks the message or %q", len(whole), c.wholeHas)
			}
			kept := utf8.RuneCountInString(got.Message) + utf8.RuneCountInString(got.Traceback)
			if kept > api.ErrorLimit+200 || utf8.RuneCountInString(got.Type) > typeLimit+100 {
				t.Errorf("kept %d characters (type %d), over the bound %d", kept, utf8.RuneCountInString(got.Type), api.ErrorLimit)
			}
			if c.keepsMsg && got.Message != c.e.Message {
				t.Errorf("a short message was cut to %q", got.Message)
			}
			if c.keepsMsg != (got.MessageCut == nil) {
				t.Errorf("MessageCut = %+v", got.MessageCut)
			}
			if c.e.Traceback != "" {
				if got.TracebackCut == nil || !strings.Contains(got.Traceback, " characters cut …]") {
					t.Errorf("the traceback's cut is not said: %+v", got.TracebackCut)
				}
				if !strings.HasPrefix(got.Traceback, "Traceback") && !strings.HasPrefix(got.Traceback, "  File") {
					t.Errorf("the traceback lost its head: %.80q", got.Traceback)
				}
				if !strings.HasSuffix(got.Traceback, c.keepsTail) {
					t.Errorf("the traceback lost its tail: %q", got.Traceback[len(got.Traceback)-80:])
				}
			}
			if got.MessageCut != nil && got.MessageCut.Total != utf8.RuneCountInString(c.e.Message) {
				t.Errorf("MessageCut.Total = %d, want %d", got.MessageCut.Total, utf8.RuneCountInString(c.e.Message))
			}
		})
	}
}
