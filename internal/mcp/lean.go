package mcp

import (
	"math"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
)

// Some clients pass a model both a tool result's text and its structured
// content, so what the structured content repeats of the text is paid
// twice. These are the README's shapes with nothing said twice (issue
// 15): long output and values by their cut and the file that holds them,
// lists of entries one line each, times to the millisecond.

// structuredInline is how much of an output, a value or a traceback the
// structured content keeps; the text keeps more, and a file the whole.
const structuredInline = 1000

// leanCell is a cell result as structured content: the README's cell
// result, its activity as entry lines.
type leanCell struct {
	api.CellResult
	Activity *leanActivity `json:"activity,omitempty"`
}

// leanActivity is api.Activity with its entries as lines.
type leanActivity struct {
	Session string          `json:"session"`
	Entries []api.EntryLine `json:"entries"`
	Updated []int           `json:"updated,omitempty"`
	More    []string        `json:"more,omitempty"`
	First   bool            `json:"first,omitempty"`
	Earlier int             `json:"earlier,omitempty"`
}

// leanRecord is a history listing: one line per entry.
type leanRecord struct {
	api.RecordReply
	Entries []api.EntryLine `json:"entries"`
}

// leanResult is r as structured content.
func leanResult(r api.CellResult) leanCell {
	out := leanCell{CellResult: r}
	c := &out.CellResult
	c.Output, c.OutputCut = shorter(c.Output, c.OutputCut)
	c.Display = leanDisplay(c.Display, c.Value)
	c.Value, c.ValueCut = shorter(c.Value, c.ValueCut)
	c.Error = leanError(c.Error)
	c.Elapsed = millis(c.Elapsed)
	c.Notes = leanNotes(c.Notes)
	c.Activity = nil
	if a := r.Activity; a != nil {
		la := &leanActivity{Session: a.Session, Updated: a.Updated, More: a.More, First: a.First, Earlier: a.Earlier}
		for _, e := range a.Entries {
			la.Entries = append(la.Entries, leanLine(e))
		}
		out.Activity = la
	}
	return out
}

// leanHistory is a history listing as structured content.
func leanHistory(r api.RecordReply) leanRecord {
	out := leanRecord{RecordReply: r, Entries: []api.EntryLine{}}
	out.RecordReply.Entries = nil
	for _, e := range r.Entries {
		out.Entries = append(out.Entries, leanLine(e))
	}
	return out
}

// leanLine is an entry as one line, its note's full policy left out.
func leanLine(e api.Entry) api.EntryLine {
	l := e.Line()
	if l.Note != nil && l.Note.Sandbox != nil {
		n := *l.Note
		n.Sandbox = noFull(n.Sandbox, n.Enforced)
		l.Note = &n
	}
	return l
}

// noFull leaves out a full policy (nil is full: api.Sandbox) that tells
// nothing enforced: no sandbox is what every session had before there
// were sandboxes, and the text says nothing of it either.
func noFull(s *api.Sandbox, e *api.Enforced) *api.Sandbox {
	if s != nil && s.Policy == api.SandboxFull && e == nil {
		return nil
	}
	return s
}

// leanSessions is a sessions listing with each full policy left out.
func leanSessions(r api.SessionsReply) api.SessionsReply {
	out := api.SessionsReply{Sessions: make([]api.SessionInfo, len(r.Sessions))}
	for i, si := range r.Sessions {
		si.Sandbox = noFull(si.Sandbox, si.Enforced)
		out.Sessions[i] = si
	}
	return out
}

// leanKill is a kill's or a restart's reply with each full policy left
// out.
func leanKill(r api.KillReply) api.KillReply {
	r.Info.Sandbox = noFull(r.Info.Sandbox, r.Info.Enforced)
	if len(r.Notes) > 0 {
		notes := make([]api.Note, len(r.Notes))
		for i, n := range r.Notes {
			n.Sandbox = noFull(n.Sandbox, n.Enforced)
			notes[i] = n
		}
		r.Notes = notes
	}
	return r
}

// shorter keeps at most structuredInline characters of a text, head and
// tail, its cut counting from the whole text and naming its file.
func shorter(text string, cut *bound.Cut) (string, *bound.Cut) {
	if cut != nil {
		return bound.Recut(text, cut, structuredInline)
	}
	short, c := bound.HeadTailLines(text, structuredInline)
	if c == nil {
		return text, cut
	}
	return short, c
}

// leanDisplay drops a display that is only a prompt before the value
// ("Out[3]: 42"): the value says it.
func leanDisplay(display, value string) string {
	if display == value {
		return ""
	}
	if prompt, ok := strings.CutSuffix(display, value); ok && value != "" && len(prompt) <= 40 &&
		!strings.Contains(strings.TrimRight(prompt, " \n"), "\n") {
		return ""
	}
	d, _ := bound.HeadTailLines(display, structuredInline)
	return d
}

// leanError keeps a long traceback's head and tail; the message, which
// says what went wrong, stays as the daemon bounded it.
func leanError(e *api.CellError) *api.CellError {
	if e == nil {
		return nil
	}
	l := *e
	l.Traceback, l.TracebackCut = shorter(e.Traceback, e.TracebackCut)
	return &l
}

// leanNotes rounds the notes' times, leans an uncollected result, and
// leaves out a full policy (no sandbox, what every session had before
// there were sandboxes: it says nothing, as the text says nothing of it).
func leanNotes(notes []api.Note) []api.Note {
	if len(notes) == 0 {
		return notes
	}
	out := make([]api.Note, len(notes))
	for i, n := range notes {
		n.Elapsed = millis(n.Elapsed)
		n.Sandbox = noFull(n.Sandbox, n.Enforced)
		if n.At != nil {
			at := n.At.Truncate(time.Millisecond)
			n.At = &at
		}
		if n.Result != nil {
			e := *n.Result
			e.Output, e.OutputCut = shorter(e.Output, e.OutputCut)
			e.Display = leanDisplay(e.Display, e.Value)
			e.Value, e.ValueCut = shorter(e.Value, e.ValueCut)
			e.Error = leanError(e.Error)
			e.Elapsed = millis(e.Elapsed)
			n.Result = &e
		}
		out[i] = n
	}
	return out
}

// millis rounds seconds to the millisecond: nine digits say nothing more.
func millis(secs float64) float64 { return math.Round(secs*1000) / 1000 }
