package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestTextNotes(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"Out[1]: 42", 0},
		{"[Created session 'g'.]\nOut[1]: 42", len("[Created session 'g'.]")},
		{"hello\n[a note\nover two lines]\nbye", len("[a note\nover two lines]")},
		{"[never closed\nOut[2]: 1", 0},
		{"[one]\n[two]", 10},
		{"[ünï]", 5}, // runes, not bytes
	} {
		if got := textNotes(c.text); got != c.want {
			t.Errorf("textNotes(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

func TestReplyCost(t *testing.T) {
	r := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: "Out[1]: <b>\n[a note]"}},
		StructuredContent: map[string]any{"value": "<b>", "notes": []any{map[string]any{"kind": "x"}}},
	}
	c := replyCost(r)
	if c.Text != 20 || c.TextNotes != 8 {
		t.Errorf("text %d, notes %d; want 20 and 8", c.Text, c.TextNotes)
	}
	// {"notes":[{"kind":"x"}],"value":"<b>"}: HTML characters unescaped.
	if c.Structured != 38 || c.StructNotes != 14 {
		t.Errorf("structured %d, notes %d; want 38 and 14", c.Structured, c.StructNotes)
	}
}

func TestContextTargets(t *testing.T) {
	before := &contextRun{Totals: ctxTotals{Text: 1000, Structured: 1000, ToolList: 19000, Instructions: 1100}}
	now := &contextRun{Totals: ctxTotals{Text: 600, Structured: 401, ToolList: 5999, Instructions: 800}}
	got := map[string]string{}
	for _, m := range ctxMeasures(before, now) {
		got[m.name] = m.verdict(true)
	}
	for name, want := range map[string]string{
		"text content, all calls":                    "met",
		"structured content, all calls":              "**missed**",
		"tools/list, once per conversation":          "met",
		"server instructions, once per conversation": "**missed**",
		"notes in the text":                          "",
	} {
		if got[name] != want {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	for _, m := range ctxMeasures(nil, now) {
		if m.name == "text content, all calls" && m.verdict(false) != "not measured" {
			t.Errorf("without a before, the text target is %q", m.verdict(false))
		}
	}
	if s := fmtInt(1234567); s != "1,234,567" {
		t.Errorf("fmtInt = %s", s)
	}
	if s := fmtInt(999); s != "999" {
		t.Errorf("fmtInt = %s", s)
	}
}

// The section is rewritten alone; the rest of the report stays.
func TestWriteSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "benchmarks.md")
	// A report without the section gets it at the end of the generated part.
	if err := writeReport(path, "## Targets (issue 4)\n\nold numbers\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeSection(path, contextSection, "## Context\n\nfirst\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeSection(path, contextSection, "## Context\n\nsecond\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	got := string(b)
	begin, end := sectionMarkers(contextSection)
	if strings.Contains(got, "first") || !strings.Contains(got, "second") || !strings.Contains(got, "old numbers") ||
		strings.Count(got, begin) != 1 || strings.Count(got, end) != 1 || !strings.Contains(got, triedHeading) {
		t.Fatalf("unexpected report:\n%s", got)
	}
	if i, j := strings.Index(got, end), strings.Index(got, endMarker); i > j {
		t.Errorf("the section is outside the generated part:\n%s", got)
	}
	// A full run's report carries it fenced; -only rewrites just that.
	if err := writeReport(path, "full run\n\n"+fenced(contextSection, "## Context\n\nthird\n")+"\nafter it\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeSection(path, contextSection, "## Context\n\nfourth\n"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	got = string(b)
	for _, want := range []string{"full run", "fourth", "after it"} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "third") || strings.Count(got, begin) != 1 {
		t.Errorf("the section was not replaced exactly once:\n%s", got)
	}
	// No report yet: the section is the generated part.
	fresh := filepath.Join(t.TempDir(), "new.md")
	if err := writeSection(fresh, contextSection, "## Context\n\nalone\n"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(fresh)
	if !strings.Contains(string(b), "alone") || !strings.Contains(string(b), beginMarker) || !strings.Contains(string(b), begin) {
		t.Errorf("unexpected new report:\n%s", b)
	}
}
