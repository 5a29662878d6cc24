package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// contextTitle heads the section; contextSection is its name for -only
// and for its markers in the report.
const (
	contextTitle   = "Context cost of an agent run (issue 15)"
	contextSection = "context"
)

// ctxMeasure is one row of the totals table: a measure, before and now,
// and its target (if it has one) given the before.
type ctxMeasure struct {
	name        string
	before, now int
	has         bool // before is known
	target      string
	ok          func(before, now int) bool // nil: no target
}

func ctxMeasures(before, now *contextRun) []ctxMeasure {
	var b ctxTotals
	if before != nil {
		b = before.Totals
	}
	n := now.Totals
	frac := func(f float64) func(int, int) bool {
		return func(before, now int) bool { return float64(now) <= f*float64(before) }
	}
	under := func(lim int) func(int, int) bool { return func(_, now int) bool { return now < lim } }
	return []ctxMeasure{
		{name: "text content, all calls", before: b.Text, now: n.Text, target: "at most 60% of before", ok: frac(0.6)},
		{name: "structured content, all calls", before: b.Structured, now: n.Structured, target: "at most 40% of before", ok: frac(0.4)},
		{name: "text + structured (a client passing both)", before: b.Text + b.Structured, now: n.Text + n.Structured},
		{name: "notes in the text", before: b.TextNotes, now: n.TextNotes},
		{name: "notes in structured content", before: b.StructNotes, now: n.StructNotes},
		{name: "tools/list, once per conversation", before: b.ToolList, now: n.ToolList, target: "under 6,000", ok: under(6000)},
		{name: "… of which output schemas", before: b.OutputSchemas, now: n.OutputSchemas},
		{name: "server instructions, once per conversation", before: b.Instructions, now: n.Instructions, target: "under 800", ok: under(800)},
	}
}

// verdict judges a measure as the issue 4 targets are judged; a target
// relative to before is not measured without a before.
func (m ctxMeasure) verdict(haveBefore bool) string {
	switch {
	case m.ok == nil:
		return ""
	case !haveBefore && strings.Contains(m.target, "before"):
		return target{}.verdict()
	}
	return target{met: m.ok(m.before, m.now), known: true}.verdict()
}

// contextMarkdown is the section: how the run goes, the totals against
// the targets, and each call.
func contextMarkdown(r *contextResult) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## %s\n\n", contextTitle)
	p("A scripted agent run through the real MCP server: two clients (`%s`, `%s`), each its own `polyrepl mcp` process over stdio ", ctxClients[0], ctxClients[1])
	p("(the official Go SDK's client), reach the bench's daemon and analyse a generated %s-row CSV with the `csv` module ", fmtInt(ctxRows))
	p("in two sessions: a mistake and its fix, a cell that outlives its timeout and is collected with `wait`, a 5,000-line print, ")
	p("a ~62k-character value, the second client working in the first's session, history and one entry by id, a kill and a re-exec, an interrupt. ")
	p("Counts are characters (runes): of the text content, of `structuredContent` as compact JSON, of the notes in each ")
	p("(the bracketed lines of the text; the `notes` array), and once per conversation of `tools/list` (the tools as compact JSON) ")
	p("and of the server's instructions. `go run ./bench -only %s` reruns this section alone.\n\n", contextSection)
	if r == nil || r.now == nil {
		p("Not measured: %v.\n", r.errOr("the section did not run"))
		return b.String()
	}
	if r.err != nil {
		p("**The run stopped early**: %s. The numbers below cover the calls made.\n\n", strings.ReplaceAll(r.err.Error(), "\n", " "))
	}
	before := r.before
	if before != nil {
		p("Before: commit `%s`, measured %s (`%s`). Now: commit `%s`.\n\n", before.Commit, before.Measured, contextBeforeFile, r.now.Commit)
	} else {
		p("No \"before\" run (`%s`): the targets relative to it are not measured.\n\n", contextBeforeFile)
	}
	var rows [][]string
	for _, m := range ctxMeasures(before, r.now) {
		bv, ratio := "–", "–"
		if before != nil {
			bv = fmtInt(m.before)
			if m.before > 0 {
				ratio = fmt.Sprintf("%.0f%%", 100*float64(m.now)/float64(m.before))
			}
		}
		rows = append(rows, []string{m.name, bv, fmtInt(m.now), ratio, m.target, m.verdict(before != nil)})
	}
	p("%s\n", table([]string{"characters", "before", "now", "now ÷ before", "target", "verdict"}, rows))

	rows = nil
	for _, c := range r.now.Calls {
		was := "–"
		if bc := before.call(c); bc != nil {
			was = fmtInt(bc.Text) + " / " + fmtInt(bc.Structured)
		}
		what := c.What
		if c.IsError {
			what += " *(tool error)*"
		}
		rows = append(rows, []string{fmt.Sprint(c.N), c.Client, c.Tool, what, fmtInt(c.Text), fmtInt(c.Structured),
			fmtInt(c.TextNotes) + " / " + fmtInt(c.StructNotes), was})
	}
	p("%s\n", table([]string{"#", "client", "tool", "call", "text", "structured", "notes: text / structured", "before: text / structured"}, rows))
	return b.String()
}

func (r *contextResult) errOr(s string) any {
	if r != nil && r.err != nil {
		return r.err
	}
	return s
}

// call is the before run's call matching c: the same place in the
// script, the same tool and words.
func (r *contextRun) call(c callCost) *callCost {
	if r == nil || c.N < 1 || c.N > len(r.Calls) {
		return nil
	}
	bc := &r.Calls[c.N-1]
	if bc.N != c.N || bc.Tool != c.Tool || bc.What != c.What {
		return nil
	}
	return bc
}

// fmtInt writes n with thousands separators: 48,275.
func fmtInt(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// sectionMarkers fence one section inside the generated part of the
// report, so that `-only NAME` can rewrite it alone.
func sectionMarkers(name string) (begin, end string) {
	return fmt.Sprintf("<!-- bench: section %s; `go run ./bench -only %s` rewrites it down to its end marker -->", name, name),
		fmt.Sprintf("<!-- bench: end of section %s -->", name)
}

// fenced is a section's text between its markers.
func fenced(name, text string) string {
	begin, end := sectionMarkers(name)
	return begin + "\n\n" + strings.TrimRight(text, "\n") + "\n\n" + end + "\n"
}

// writeSection rewrites one section of the report and keeps the rest:
// between the section's markers if the report has them, else just before
// the end of the generated part, else as the whole generated part of a
// new report.
func writeSection(path, name, text string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	body := fenced(name, text)
	cur := string(old)
	begin, end := sectionMarkers(name)
	i, j := strings.Index(cur, begin), strings.Index(cur, end)
	k := strings.Index(cur, endMarker)
	var out string
	switch {
	case i >= 0 && j > i:
		out = cur[:i] + strings.TrimRight(body, "\n") + cur[j+len(end):]
	case k >= 0:
		out = cur[:k] + body + "\n" + cur[k:]
	default:
		return writeReport(path, body)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(out), 0o644)
}
