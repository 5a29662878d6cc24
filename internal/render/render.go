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
	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/limit"
)

// Style is how a result is laid out for its reader.
type Style struct {
	Voice Voice
	// ActivityHeader opens what other clients did (a format taking the
	// session's name); "" is ActivityHeader. ActivityIdleHeader opens it
	// when it is only what the session printed while idle; "" is
	// ActivityIdleHeader.
	ActivityHeader, ActivityIdleHeader string
	// ActivityFirstHeader opens what a client is told at its first
	// contact with a session; "" is ActivityFirstHeader.
	ActivityFirstHeader string
	// CallHeader, if set, opens the call's own result after activity, so
	// a reader cannot take one for the other.
	CallHeader string
	// SayEmpty says that a cell finished with no output, where an empty
	// reply could be taken for a lost one.
	SayEmpty bool
	// BriefActivity tells each entry of activity in one line (who, how,
	// status, its code's first line and the start of what it gave), for
	// a reader who pays for every character and can ask history for the
	// rest.
	BriefActivity bool
}

// People is how the CLI lays out a result.
var PeopleStyle = Style{Voice: People}

// Result shows a cell's result the way a REPL would: what other clients
// did, what happened before (a loss, a new session, output while idle, an
// earlier cell's uncollected result), the output, the value or the error,
// then what the caller should know (still running, other sessions). Both
// edges use it, each in its own Style.
func Result(w io.Writer, r api.CellResult, st Style) { Split(w, w, r, st) }

// Split is Result with the cell's own words, its output and its value
// as its REPL shows it, written to out, and the rest (activity, notes,
// cuts, figures' files, the error) to notes, in the order Result has them: a script capturing
// out gets what the cell printed and nothing else, and a terminal
// showing both reads as Result.
func Split(out, notes io.Writer, r api.CellResult, st Style) {
	b := &split{out: out, notes: notes}
	defer b.flush()
	header := st.ActivityHeader
	if header == "" {
		header = ActivityHeader
	}
	switch {
	case r.Activity != nil && r.Activity.First:
		header = st.ActivityFirstHeader
		if header == "" {
			header = ActivityFirstHeader
		}
	case OnlyIdle(r.Activity):
		header = st.ActivityIdleHeader
		if header == "" {
			header = ActivityIdleHeader
		}
	}
	if st.BriefActivity {
		BriefActivity(b, r.Activity, header, st.Voice)
	} else {
		Activity(b, r.Activity, header, st.Voice)
	}
	if st.CallHeader != "" && r.Activity != nil && b.Len() > 0 {
		b.WriteString(st.CallHeader + "\n")
	}
	for _, n := range r.Notes {
		if before(n.Kind, r) {
			b.WriteString(Bracket(Note(n, st.Voice)))
		}
	}
	start := b.Len()
	if r.Output != "" {
		b.Out(r.Output)
		if !strings.HasSuffix(r.Output, "\n") {
			b.Out("\n")
		}
	}
	if r.OutputCut != nil {
		b.WriteString(r.OutputCut.Describe("output") + "\n")
	}
	if r.Value != "" {
		b.Out(Display(r) + "\n")
		if r.ValueCut != nil {
			b.WriteString(r.ValueCut.Describe("value") + "\n")
		}
	}
	for i, x := range r.Rich {
		b.WriteString(RichLine(i+1, x) + "\n")
	}
	if r.RichMore > 0 {
		fmt.Fprintf(b, "[and %s not kept: a cell keeps at most %d]\n", Plural(r.RichMore, "more figure"), len(r.Rich))
	}
	errText := ErrorText(r)
	b.WriteString(errText)
	if r.Status == api.StatusInterrupted && errText == "" && r.Cell > 0 && !explained(r.Notes) {
		// Some runtimes (JShell's stop, a shell's SIGINT) say nothing
		// when a cell is interrupted; the reply must not look empty.
		fmt.Fprintf(b, "(cell %d was interrupted)\n", r.Cell)
	}
	if st.SayEmpty && b.Len() == start && r.Status == api.StatusDone && r.Cell > 0 && !explained(r.Notes) {
		fmt.Fprintf(b, "(cell %d finished with no output)\n", r.Cell)
	}
	for _, n := range r.Notes {
		if !before(n.Kind, r) {
			b.WriteString(Bracket(Note(n, st.Voice)))
		}
	}
}

// split gathers a result's text for two writers, writing each stretch
// of one kind in one go; to one writer (out == notes) it writes once.
type split struct {
	out, notes io.Writer
	b          strings.Builder
	toOut      bool // b holds the cell's words, for out
	n          int  // bytes written before b
}

// WriteString adds polyrepl's words, for notes.
func (s *split) WriteString(text string) (int, error) { return s.add(false, text) }

// Write is WriteString, for fmt.Fprintf.
func (s *split) Write(p []byte) (int, error) { return s.add(false, string(p)) }

// Out adds the cell's words, for out.
func (s *split) Out(text string) { s.add(true, text) }

func (s *split) add(toOut bool, text string) (int, error) {
	if toOut != s.toOut && s.out != s.notes && text != "" {
		s.flush()
		s.toOut = toOut
	}
	return s.b.WriteString(text)
}

// Len is how much was written, to either writer.
func (s *split) Len() int { return s.n + s.b.Len() }

func (s *split) flush() {
	if s.b.Len() == 0 {
		return
	}
	w := s.notes
	if s.toOut {
		w = s.out
	}
	io.WriteString(w, s.b.String())
	s.n += s.b.Len()
	s.b.Reset()
}

// before says whether a note of kind is told before the cell's output:
// what happened first, ahead of what the cell did.
// A loss is told first when it opens a new life, and after the cell's
// error in the reply of the cell the session died in.
func before(kind string, r api.CellResult) bool {
	switch kind {
	case api.NoteLost:
		return r.Status != api.StatusDead
	case api.NoteCreated, api.NoteRestarted, api.NoteIdle, api.NoteUncollected:
		return true
	}
	return false
}

// explained says whether a note already says why a result holds nothing
// new, so an empty result need not be said aloud.
func explained(notes []api.Note) bool {
	for _, n := range notes {
		if n.Kind == api.NoteCollected || n.Kind == api.NoteNotRunning {
			return true
		}
	}
	return false
}

// Notes writes notes alone, each set apart, for replies that carry no
// cell (kill, restart).
func Notes(w io.Writer, notes []api.Note, v Voice) {
	for _, n := range notes {
		io.WriteString(w, Bracket(Note(n, v)))
	}
}

// ErrorText shows a cell's error under its output: the traceback if there
// is one, else the error in a line, unless the output already shows it (a
// REPL driven at its prompt prints its errors itself). "" if no error.
func ErrorText(r api.CellResult) string {
	e := r.Error
	switch {
	case e == nil:
		return ""
	case e.Traceback == "" && e.Type == "" && e.MessageCut == nil && strings.Contains(r.Output, e.Message):
		return ""
	}
	return ErrorShown(e)
}

// ErrorShown is an error as a reader sees it: its traceback if it has
// one, else its line, then what the bound cut of that, if it did, and
// where the whole error is.
func ErrorShown(e *api.CellError) string {
	text, cut := ErrorParts(e)
	text = strings.TrimRight(text, "\n") + "\n"
	if cut != nil {
		text += ErrorCut(cut) + "\n"
	}
	return text
}

// ErrorParts is what ErrorShown shows of an error, and the cut of it, for
// a view that sets the two apart (a notebook, Markdown).
func ErrorParts(e *api.CellError) (string, *bound.Cut) {
	if e.Traceback != "" {
		return e.Traceback, e.TracebackCut
	}
	return ErrorLine(e), e.MessageCut
}

// ErrorCut says what a bound cut of an error.
func ErrorCut(c *bound.Cut) string { return c.Describe("error") }

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

// RichLine tells rich output n of a cell in one line: what it is, its
// size, and where the file is.
func RichLine(n int, x api.Rich) string {
	what, kind := "image", ""
	switch x.MIME {
	case "image/svg+xml":
		kind = "SVG"
	case "text/html":
		what, kind = "HTML", ""
	case "text/markdown":
		what, kind = "Markdown", ""
	case "text/latex":
		what, kind = "LaTeX", ""
	default:
		kind = strings.ToUpper(strings.TrimPrefix(x.MIME, "image/"))
	}
	size := ""
	if x.Width > 0 && x.Height > 0 {
		size = fmt.Sprintf("%d×%d ", x.Width, x.Height)
	}
	if kind != "" {
		kind += ", "
	}
	return fmt.Sprintf("[%s %d: %s%s%s → %s]", what, n, size, kind, Kilobytes(x.Bytes), x.File)
}

// Kilobytes says a file's size as people read it: "94 B", "41 KB", "1.2 MB".
func Kilobytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%d KB", (n+512)>>10)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// Megabytes prints a memory size in MB.
//
// MB here is 2^20 bytes, as in every memory size polyrepl prints (the
// limits' too, see limit.Size), so that a session's use and its limit
// compare at a glance.
func Megabytes(n uint64) string {
	return fmt.Sprintf("%d MB", (n+1<<19)>>20)
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
	if s.State == api.StateUnreachable {
		fmt.Fprintf(w, "%s  unreachable: %s (runtime pid %d, holder pid %d)\n    %s ends it\n",
			s.Name, s.Problem, s.PID, s.Holder, v.Step(api.Action{Do: api.DoKill, Session: s.Name}))
		return
	}
	if s.State == api.StateAdopting {
		fmt.Fprintf(w, "%s  %s  %s  runtime pid %d  up %s  %s  cwd %s\n    calls on it are served once its holder answers; %s ends it\n",
			s.Name, s.Problem, strings.TrimSpace(s.Runtime+" "+s.Version), s.PID, Ago(now.Sub(s.Created)), cells, s.Cwd,
			v.Step(api.Action{Do: api.DoKill, Session: s.Name}))
		return
	}
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
			if r.Input != nil {
				activity = fmt.Sprintf("cell %d waits for input, asking %q (%s via %s)", r.Cell, r.Input.Text, r.Client.Who, r.Client.How)
			}
		}
		mem := Megabytes(s.Memory)
		if s.MemoryShared {
			mem += " (PSS: pages shared with a fork counted once)"
		}
		if s.MemoryLimit > 0 {
			mem += fmt.Sprintf(" (limit %s by %s)", limit.Size(s.MemoryLimit), s.LimitBy)
		}
		if s.Where != "" {
			fmt.Fprintf(w, "%s  on %s  %s  up %s  %s  %s  cwd %s\n",
				s.Name, s.Where, strings.TrimSpace(s.Runtime+" "+s.Version), Ago(now.Sub(s.Created)), activity, cells, s.Cwd)
		} else {
			fmt.Fprintf(w, "%s  pid %d  %s  up %s  %s  %s  %s  cwd %s\n",
				s.Name, s.PID, strings.TrimSpace(s.Runtime+" "+s.Version), Ago(now.Sub(s.Created)), activity, cells, mem, s.Cwd)
		}
	}
	if sb := Sandbox(s.Sandbox, s.Enforced); sb != "" {
		fmt.Fprintf(w, "    %s\n", sb)
	}
	if f := s.Fork; f != nil && s.State != api.StateDead {
		fmt.Fprintf(w, "    a fork of '%s', taken after its cell %d\n", f.From, f.Cell)
	}
	if s.State != api.StateDead {
		checkpointLines(w, s.Checkpoints, now)
	}
	if s.HolderVersion != "" && s.State != api.StateDead {
		fmt.Fprintf(w, "    runs on the holder and worker of polyrepl %s until it is restarted (%s moves it to this version's)\n",
			s.HolderVersion, v.Step(api.Action{Do: api.DoRestart, Session: s.Name}))
	}
	if s.Stopped && s.State != api.StateDead {
		fmt.Fprintf(w, "    stopped by a signal (SIGSTOP): it runs nothing, its cell included, until SIGCONT; %s sends it\n",
			v.Step(api.Action{Do: api.DoInterrupt, Session: s.Name}))
	}
	if s.Unread {
		fmt.Fprintf(w, "    unread output: %s collects it\n", v.Step(api.Action{Do: api.DoWait, Session: s.Name}))
	}
	if len(s.Names) > 0 {
		names := s.Names
		more := ""
		total := max(len(names), s.NamesTotal)
		if len(names) > MaxListedNames {
			names = names[:MaxListedNames]
		}
		if total > len(names) {
			more = fmt.Sprintf(" … and %d more", total-len(names))
		}
		fmt.Fprintf(w, "    names: %s%s\n", strings.Join(names, ", "), more)
	}
}

// Names joins names, at most MaxListedNames of them.
func Names(names []string) string { return namesUpTo(names, MaxListedNames) }

// othersNames bounds the lost names a note about other sessions tells of
// each: it may tell of several.
const othersNames = 10

// namesUpTo joins at most max names, counting the rest.
func namesUpTo(names []string, max int) string {
	if len(names) > max {
		return strings.Join(names[:max], ", ") + fmt.Sprintf(" … and %d more", len(names)-max)
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

// Place says where a session's runtime runs: "pid 123" here, or "on
// URL (kernel ID)" for a kernel on a gateway.
func Place(s api.SessionInfo) string {
	if s.Where != "" {
		return "on " + s.Where
	}
	return fmt.Sprintf("pid %d", s.PID)
}

// Killed says what killing session s ended, for the CLI and the MCP
// server alike.
func Killed(s api.SessionInfo) string {
	text := fmt.Sprintf("Killed session '%s' (%s, %s", s.Name, Place(s), Plural(s.Cells, "cell"))
	if len(s.Names) > 0 {
		text += "; names lost: " + Names(s.Names)
	}
	return text + ")."
}
