package api

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, c := range []struct {
		name, in string
		limit    int
		want     string
	}{
		{"short", "alice", 100, "alice"},
		{"exact", strings.Repeat("a", 100), 100, strings.Repeat("a", 100)},
		{"over", strings.Repeat("a", 3_000_000), 100, strings.Repeat("a", 100) + "… [label cut: 3,000,000 characters in all; showing the first 100]"},
		{"runes", strings.Repeat("é", 101), 100, strings.Repeat("é", 100) + "… [label cut: 101 characters in all; showing the first 100]"},
		{"invalid", "a\xffb", 100, "a\uFFFDb"},
		{"empty", "", 100, ""},
		{"clipped once", Clip(strings.Repeat("a", 3_000_000), 100, "label"), 100, strings.Repeat("a", 100) + "… [label cut: 3,000,000 characters in all; showing the first 100]"},
		{"clipped for a larger limit", Clip(strings.Repeat("a", 300), 200, "label"), 100, strings.Repeat("a", 100) + "… [label cut: 259 characters in all; showing the first 100]"},
		{"a marker that lies", strings.Repeat("a", 100) + "… [label cut: 5 characters in all; showing the first 100]", 100, strings.Repeat("a", 100) + "… [label cut: 157 characters in all; showing the first 100]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Clip(c.in, c.limit, "label"); got != c.want {
				t.Errorf("Clip = %.200q, want %.200q", got, c.want)
			}
		})
	}
}

func TestClientBounded(t *testing.T) {
	c := Client{Who: strings.Repeat("w", 3<<20), How: strings.Repeat("h", 1000), Conn: "mcp-1", Quiet: true, Output: 5}
	b := c.Bounded()
	if len(b.Who) > 200 || len(b.How) > 150 || b.Conn != "mcp-1" || !b.Quiet || b.Output != 5 {
		t.Errorf("Bounded = %d-byte label, %d-byte route, %+v", len(b.Who), len(b.How), b)
	}
	if short := (Client{Who: "alice", How: "cli"}); short.Bounded() != short {
		t.Errorf("a short client changed: %+v", short.Bounded())
	}
}

func TestBoundPrompt(t *testing.T) {
	workerCut := strings.Repeat("P", 1000) + "\n[… 998,000 characters cut …]\n" + strings.Repeat("P", 1000)
	for _, c := range []struct {
		name      string
		text      string
		total     int
		wantTotal int
		wantLen   int // characters; 0: the text unchanged
	}{
		{"short", "Name? ", 0, 0, 0},
		{"limit", strings.Repeat("P", PromptLimit), 0, 0, 0},
		{"cut by its worker", workerCut, 1_000_000, 1_000_000, 0},
		{"long", strings.Repeat("P", 1_000_000), 0, 1_000_000, PromptLimit + len("\n[… 998,000 characters cut …]\n") - 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, total := BoundPrompt(c.text, c.total, PromptLimit)
			if total != c.wantTotal {
				t.Errorf("total %d, want %d", total, c.wantTotal)
			}
			switch {
			case c.wantLen == 0 && got != c.text:
				t.Errorf("changed: %.100q", got)
			case c.wantLen != 0 && utf8.RuneCountInString(got) != c.wantLen:
				t.Errorf("%d characters, want %d", utf8.RuneCountInString(got), c.wantLen)
			}
		})
	}
	brief, total := BoundPrompt(workerCut, 1_000_000, PromptBrief)
	if utf8.RuneCountInString(brief) > PromptBrief+64 || total != 1_000_000 {
		t.Errorf("brief of a worker's cut: %d characters, total %d", utf8.RuneCountInString(brief), total)
	}
	if !strings.Contains(brief, "999,800 characters cut") {
		t.Errorf("brief of a worker's cut does not count what the whole lost: %q", brief)
	}
}
