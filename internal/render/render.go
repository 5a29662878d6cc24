// Package render writes results and session listings as text, for people
// at a terminal (the CLI) and for models (the MCP server), so both say the
// same things the same way.
package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Result shows a cell's result the way a REPL would: what happened
// before (a loss, a new session), the output, the value or the error, then
// what the caller should know (still running, other sessions).
func Result(w io.Writer, r api.CellResult) {
	ResultAs(w, r, ActivityHeader)
}

// ResultAs is Result with the activity told under header.
func ResultAs(w io.Writer, r api.CellResult, header string) {
	var b strings.Builder
	Activity(&b, r.Activity, header, People)
	note := func(kinds ...string) {
		for _, n := range r.Notes {
			for _, k := range kinds {
				if n.Kind == k {
					b.WriteString(Bracket(n.Text))
				}
			}
		}
	}
	note(api.NoteLost, api.NoteCreated, api.NoteIdle, api.NoteUncollected)
	if r.Output != "" {
		b.WriteString(r.Output)
		if !strings.HasSuffix(r.Output, "\n") {
			b.WriteString("\n")
		}
	}
	if r.OutputCut != nil {
		b.WriteString(r.OutputCut.Describe("output") + "\n")
	}
	if r.Value != "" {
		fmt.Fprintf(&b, "%s\n", Display(r))
		if r.ValueCut != nil {
			b.WriteString(r.ValueCut.Describe("value") + "\n")
		}
	}
	b.WriteString(ErrorText(r))
	for _, n := range r.Notes {
		switch n.Kind {
		case api.NoteLost, api.NoteCreated, api.NoteIdle, api.NoteUncollected:
		default:
			b.WriteString(Bracket(n.Text))
		}
	}
	io.WriteString(w, b.String())
}

// ErrorText shows a cell's error under its output: the traceback if there
// is one, else the error in a line, unless the output already shows it (a
// REPL driven at its prompt prints its errors itself). "" if no error.
func ErrorText(r api.CellResult) string {
	e := r.Error
	switch {
	case e == nil:
		return ""
	case e.Traceback != "":
		return strings.TrimRight(e.Traceback, "\n") + "\n"
	case e.Type == "" && strings.Contains(r.Output, e.Message):
		return ""
	}
	return ErrorLine(e) + "\n"
}

// ErrorLine is an error in one line: "Type: message", or either alone.
func ErrorLine(e *api.CellError) string {
	switch {
	case e.Type == "":
		return e.Message
	case e.Message == "":
		return e.Type
	}
	return e.Type + ": " + e.Message
}

// Bracket sets a note apart from the cell's own output.
func Bracket(text string) string {
	return "[" + strings.TrimRight(text, "\n") + "]\n"
}

// Ago prints a duration compactly, as `sessions` shows it: 40s, 2m, 3h,
// 2d.
func Ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// Megabytes prints a memory size in MB.
func Megabytes(n uint64) string {
	return fmt.Sprintf("%d MB", (n+500_000)/1_000_000)
}

// Plural says "1 cell", "3 cells", "2 entries".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "y") && !strings.HasSuffix(word, "ay") && !strings.HasSuffix(word, "ey") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(word, "y"))
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// MaxListedNames keeps a namespace with thousands of names to one line.
const MaxListedNames = 40

// Session writes one session as `polyrepl sessions` lists it, naming the
// next step in v's terms.
func Session(w io.Writer, s api.SessionInfo, now time.Time, v Voice) {
	cells := Plural(s.Cells, "cell")
	if s.State == api.StateDead {
		cause := ""
		if s.Death != nil {
			cause = s.Death.Cause + " " + Ago(now.Sub(s.Death.At)) + " ago"
		}
		fmt.Fprintf(w, "%s  dead: %s  %s  cwd %s\n", s.Name, cause, cells, s.Cwd)
	} else {
		activity := "idle " + Ago(now.Sub(s.LastActive))
		if r := s.Running; r != nil {
			activity = fmt.Sprintf("running cell %d for %s (%s via %s)", r.Cell, Ago(now.Sub(r.Started)), r.Client.Who, r.Client.How)
		}
		mem := Megabytes(s.Memory)
		if s.MemoryLimit > 0 {
			mem += fmt.Sprintf(" (limit %d MiB by %s)", s.MemoryLimit>>20, s.LimitBy)
		}
		fmt.Fprintf(w, "%s  pid %d  %s  up %s  %s  %s  %s  cwd %s\n",
			s.Name, s.PID, strings.TrimSpace(s.Runtime+" "+s.Version), Ago(now.Sub(s.Created)), activity, cells, mem, s.Cwd)
	}
	if s.Unread {
		fmt.Fprintf(w, "    unread output: %s collects it\n", v.Step(api.Action{Do: api.DoWait, Session: s.Name}))
	}
	if len(s.Names) > 0 {
		names := s.Names
		more := ""
		if len(names) > MaxListedNames {
			more = fmt.Sprintf(" … and %d more", len(names)-MaxListedNames)
			names = names[:MaxListedNames]
		}
		fmt.Fprintf(w, "    names: %s%s\n", strings.Join(names, ", "), more)
	}
}

// Names joins names, at most MaxListedNames of them.
func Names(names []string) string {
	if len(names) > MaxListedNames {
		return strings.Join(names[:MaxListedNames], ", ") + fmt.Sprintf(" … and %d more", len(names)-MaxListedNames)
	}
	return strings.Join(names, ", ")
}

// Display is the value as the runtime's REPL shows it; a result without a
// display (from an older daemon) shows it the Python way.
func Display(r api.CellResult) string {
	if r.Display != "" {
		return r.Display
	}
	return fmt.Sprintf("Out[%d]: %s", r.Cell, r.Value)
}

// Killed says what killing session s ended, for the CLI and the MCP
// server alike.
func Killed(s api.SessionInfo) string {
	text := fmt.Sprintf("Killed session '%s' (pid %d, %s", s.Name, s.PID, Plural(s.Cells, "cell"))
	if len(s.Names) > 0 {
		text += "; names lost: " + Names(s.Names)
	}
	return text + ")."
}
