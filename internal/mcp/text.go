package mcp

import (
	"fmt"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/render"
)

// text writes a cell result for a model: short, the output first, the
// notes after it.
func (s *Server) text(r api.CellResult) string {
	var b strings.Builder
	render.Activity(&b, r.Activity, render.ActivityHeaderModel, model)
	if r.Activity != nil && b.Len() > 0 {
		b.WriteString("Your call's result:\n")
	}
	if r.Output != "" {
		b.WriteString(r.Output)
		if !strings.HasSuffix(r.Output, "\n") {
			b.WriteString("\n")
		}
	}
	if r.OutputCut != nil {
		b.WriteString(render.Bracket(r.OutputCut.Describe("output")))
	}
	if r.Value != "" {
		fmt.Fprintf(&b, "%s\n", render.Display(r))
		if r.ValueCut != nil {
			b.WriteString(render.Bracket(r.ValueCut.Describe("value")))
		}
	}
	b.WriteString(render.ErrorText(r))
	if b.Len() == 0 && r.Status == api.StatusDone {
		fmt.Fprintf(&b, "(cell %d finished with no output)\n", r.Cell)
	}
	return strings.TrimRight(notesText(b.String(), r.Notes), "\n") + s.versionNote()
}

// historyText lists a record, or shows one entry whole.
func historyText(r api.RecordReply) string {
	var b strings.Builder
	render.History(&b, r)
	return strings.TrimRight(b.String(), "\n")
}

// notesText appends notes to text, each set apart in brackets.
func notesText(text string, notes []api.Note) string {
	var b strings.Builder
	b.WriteString(text)
	for _, n := range notes {
		b.WriteString(render.Bracket(n.Text))
	}
	return b.String()
}

// sessionsText lists sessions as the CLI does.
func sessionsText(list []api.SessionInfo, now time.Time) string {
	if len(list) == 0 {
		return "No sessions. The exec tool creates one on first use of a name."
	}
	var b strings.Builder
	for _, s := range list {
		render.Session(&b, s, now, model)
	}
	return strings.TrimRight(b.String(), "\n")
}

// model is the voice of replies to a model: it names tool arguments and
// tool calls, never command lines it cannot run.
var model render.Voice = modelVoice{}

type modelVoice struct{}

func (modelVoice) Input(field string) string {
	if field == "" {
		return ""
	}
	return fmt.Sprintf("the %q argument", field)
}

func (modelVoice) Step(a api.Action) string {
	switch a.Do {
	case api.DoExec:
		return fmt.Sprintf("the exec tool with session %q", a.Session)
	case api.DoRuntimes:
		return "the exec tool's runtime argument description"
	}
	return fmt.Sprintf("the %s tool (session %q)", a.Do, a.Session)
}
