package mcp

import (
	"fmt"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/render"
)

// modelStyle lays a result out for a model: what other clients did set
// apart from its own call's result, and an empty result said aloud.
var modelStyle = render.Style{Voice: model, ActivityHeader: render.ActivityHeaderModel, ActivityIdleHeader: render.ActivityIdleHeaderModel,
	ActivityFirstHeader: render.ActivityFirstHeaderModel, CallHeader: "Your call's result:", SayEmpty: true, BriefActivity: true}

// text writes a cell result for a model, laid out as for a person but in
// the model's terms.
func (s *Server) text(r api.CellResult) string {
	var b strings.Builder
	render.Result(&b, r, modelStyle)
	return strings.TrimRight(b.String(), "\n") + s.versionNote()
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
	render.Notes(&b, notes, model)
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

// runtimesText tells a model what a new session can run: each installed
// runtime with its version and known limits, then in one line what is
// not installed and what it needs.
func runtimesText(list []api.RuntimeInfo) string {
	var b strings.Builder
	b.WriteString("Runtimes installed here (the exec tool's runtime argument starts a new session in one):\n")
	var missing []string
	for _, r := range list {
		if !r.Found {
			missing = append(missing, fmt.Sprintf("%s (needs %s)", r.Name, r.Needs))
			continue
		}
		fmt.Fprintf(&b, "- %s: %s, %s", r.Name, r.Path, r.Version)
		if r.Limits != "" {
			fmt.Fprintf(&b, ". Limits: %s", r.Limits)
		}
		b.WriteString("\n")
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, "Not installed: %s. The exec tool's exe argument names an executable elsewhere.", strings.Join(missing, "; "))
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
		return "the runtimes tool"
	case api.DoStop:
		return "the user stopping the polyrepl daemon"
	}
	return fmt.Sprintf("the %s tool (session %q)", a.Do, a.Session)
}
