package view

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
)

// A cell printing 10 MB reaches the page as its first 64 KB whole, a cut
// event, then at most every half second the latest 64 KB: a page gets a
// few hundred KB of it, and the chunks' offsets and skipped counts still
// place every character it got.
func TestCutterBoundsAFlood(t *testing.T) {
	c := newCutter()
	now := time.Unix(1000, 0)
	var sent []any
	at := 0
	line := strings.Repeat("é", 50) + "\n" // 101 bytes, 51 characters
	var whole strings.Builder
	for i := 0; i < 100000; i++ { // about 10 MB, in chunks of 64 KB as the record sends them
		var b strings.Builder
		for b.Len() < 64<<10-len(line) {
			b.WriteString(line)
		}
		text := b.String()
		whole.WriteString(text)
		sent = append(sent, c.pass(api.RecordEvent{Event: api.EventOutput, Output: &api.OutputChunk{ID: "s#3", Seq: 3, Offset: at, Text: text}}, now)...)
		at += utf8.RuneCountInString(text)
		now = now.Add(5 * time.Millisecond)
		if whole.Len() > 10<<20 {
			break
		}
	}
	end := api.Entry{Seq: 3, ID: "s#3", Kind: api.EntryCell, Status: api.StatusDone}
	sent = append(sent, c.pass(api.RecordEvent{Event: api.EventEnd, Entry: &end}, now)...)

	got, bytes, cuts := []rune(whole.String()), 0, 0
	next := 0
	for i, m := range sent {
		switch m := m.(type) {
		case cutEvent:
			cuts++
			if m.Seq != 3 || m.Offset != next {
				t.Errorf("cut event %+v, want seq 3 at offset %d", m, next)
			}
		case api.RecordEvent:
			if m.Event == api.EventEnd {
				if i != len(sent)-1 {
					t.Errorf("the end is not last")
				}
				continue
			}
			ch := m.Output
			bytes += len(ch.Text)
			if ch.Offset-ch.Skipped != next {
				t.Fatalf("chunk %d: offset %d, skipped %d, after %d sent", i, ch.Offset, ch.Skipped, next)
			}
			if want := string(got[ch.Offset : ch.Offset+utf8.RuneCountInString(ch.Text)]); ch.Text != want {
				t.Fatalf("chunk %d is not the output at its offset", i)
			}
			next = ch.Offset + utf8.RuneCountInString(ch.Text)
		}
	}
	if cuts != 1 {
		t.Errorf("%d cut events, want 1", cuts)
	}
	if next != len(got) {
		t.Errorf("the last chunk ends at %d, want the output's end, %d", next, len(got))
	}
	// 10 MB printed over 0.8 s of this clock: the head, one window per
	// half second, and the last window.
	if bytes > 64<<10*5 {
		t.Errorf("the page got %d bytes of a %d-byte output", bytes, whole.Len())
	}
	t.Logf("%d bytes of %d sent in %d messages", bytes, whole.Len(), len(sent))
}

// Output under the head passes as it came, and a slow printer past the
// head still gets each line out when it comes, if the last went out a
// while ago.
func TestCutterPassesSmallOutput(t *testing.T) {
	c := newCutter()
	now := time.Unix(1000, 0)
	ev := api.RecordEvent{Event: api.EventOutput, Output: &api.OutputChunk{ID: "s#2", Seq: 2, Text: "hi\n", Pending: "50%"}}
	if out := c.pass(ev, now); len(out) != 1 || out[0].(api.RecordEvent).Output != ev.Output {
		t.Fatalf("small output: %v", out)
	}
	big := strings.Repeat("x", 99) + "\n"
	var n int
	for at := 3; n < 70<<10; at += 100 {
		c.pass(api.RecordEvent{Event: api.EventOutput, Output: &api.OutputChunk{ID: "s#2", Seq: 2, Offset: at, Text: big}}, now)
		n += 100
	}
	now = now.Add(2 * time.Second)
	out := c.pass(api.RecordEvent{Event: api.EventOutput, Output: &api.OutputChunk{ID: "s#2", Seq: 2, Offset: 3 + n, Text: "late\n"}}, now)
	if len(out) != 1 || !strings.HasSuffix(out[0].(api.RecordEvent).Output.Text, "late\n") {
		t.Errorf("a line past the head, a while after the last: %v", out)
	}
	if out := c.pass(api.RecordEvent{Event: api.EventOutput, Output: &api.OutputChunk{ID: "s#2", Seq: 2, Offset: 8 + n, Text: "soon\n"}}, now); len(out) != 0 {
		t.Errorf("a line right after: sent at once (%v), want it held", out)
	}
	if out := c.due(now.Add(time.Second)); len(out) != 1 || out[0].(api.RecordEvent).Output.Text != "soon\n" {
		t.Errorf("held output when due: %v", out)
	}
	// An entry that comes again (after a reconnection) starts afresh.
	en := api.Entry{Seq: 2, Kind: api.EntryCell, Status: api.StatusRunning}
	c.pass(api.RecordEvent{Event: api.EventEntry, Entry: &en}, now)
	if out := c.pass(ev, now); len(out) != 1 {
		t.Errorf("an entry seen again: %v", out)
	}
}

func TestCutPoint(t *testing.T) {
	for _, c := range []struct {
		text string
		n    int
		want int
	}{
		{"ab\ncd\nef", 7, 6},
		{"abcdef", 4, 4},
		{"aéb", 2, 1}, // not inside é
		{"abc", 10, 3},
		{"abc", 0, 0},
	} {
		if got := cutPoint(c.text, c.n); got != c.want {
			t.Errorf("cutPoint(%q, %d) = %d, want %d", c.text, c.n, got, c.want)
		}
	}
}
