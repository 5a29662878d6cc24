package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Note says a note in words, naming its next steps in v's terms. Notes
// are data everywhere else (see api.Note); this is the one place their
// words are written, for the CLI and the MCP server alike.
func Note(n api.Note, v Voice) string {
	switch n.Kind {
	case api.NoteCreated:
		start := ""
		if n.Said != "" {
			start = "; " + n.Said
		}
		again, replaced := "", ""
		switch {
		case n.Again && n.Ended != "":
			again = " again, started as the life before it"
		case n.Again:
			again = " again, started as the life that died"
		case n.Replaced != "":
			replaced = fmt.Sprintf(" It replaces the %s session of that name.", n.Replaced)
		}
		sandbox := Sandbox(n.Sandbox, n.Enforced)
		if sandbox != "" {
			sandbox = " " + upperFirst(sandbox) + "."
		}
		if n.Fork != nil {
			return fmt.Sprintf("Created session '%s' as a fork of '%s' after its cell %d (%s, pid %d, cwd %s).%s%s",
				n.Session, n.Fork.From, n.Fork.Cell, runtimeVersion(n), n.PID, n.Cwd, sandbox, ForkApart(*n.Fork))
		}
		return fmt.Sprintf("Created session '%s'%s (%s, cwd %s%s).%s%s", n.Session, again, runtimeVersion(n), n.Cwd, start, sandbox, replaced)
	case api.NoteForked:
		if n.Fork == nil {
			return fmt.Sprintf("Session '%s' was forked.", n.Session)
		}
		return fmt.Sprintf("Session '%s' was forked into '%s' after cell %d: '%s' goes on from here with a copy of these names.", n.Session, n.Fork.Into, n.Fork.Cell, n.Fork.Into)
	case api.NoteCheckpoint:
		return checkpointNote(n)
	case api.NoteRolledBack:
		return rolledBackNote(n)
	case api.NoteRestarted:
		text := fmt.Sprintf("Restarted session '%s' (%s, cwd %s): a fresh process (pid %d).", n.Session, runtimeVersion(n), n.Cwd, n.PID)
		if n.PID == 0 {
			text = fmt.Sprintf("Restarted session '%s' (%s, cwd %s): a fresh kernel.", n.Session, runtimeVersion(n), n.Cwd)
		}
		if n.Cell > 0 {
			text += fmt.Sprintf(" Cell %d was running: the restart ended it.", n.Cell)
		}
		if len(n.Names) > 0 {
			text += " Lost names: " + Names(n.Names) + "."
		} else {
			text += " It held no names."
		}
		return text
	case api.NoteLost:
		return Loss(n, time.Now())
	case api.NoteEnded:
		cause := "it ended"
		if n.Death != nil {
			cause = n.Death.Cause
		}
		return fmt.Sprintf("Session '%s' ended: %s.", n.Session, cause)
	case api.NoteAttached:
		return fmt.Sprintf("%s attached to the session's terminal; what is typed there comes as output while no cell runs.", Who(n.Client))
	case api.NoteOthers:
		return others(n, v)
	case api.NoteIdle:
		text := "Printed by the session while no cell ran:\n" + n.Output
		if n.OutputCut != nil {
			text = strings.TrimRight(text, "\n") + "\n" + n.OutputCut.Describe("output")
		}
		if n.Err != "" {
			text += fmt.Sprintf("\n(the whole text could not be saved: %s)", n.Err)
		}
		return text
	case api.NoteRunning:
		if n.Why == api.StuckStopped {
			return fmt.Sprintf("Cell %d is still running after %s, but its runtime is stopped by a signal (SIGSTOP): it makes no progress until it gets SIGCONT. %s",
				n.Cell, Duration(seconds(n.Elapsed)), sentence(steps(n.Next, v, map[string]string{
					api.DoWait: "collects its output and result once it goes on", api.DoInterrupt: "wakes it (SIGCONT) and stops the cell"})))
		}
		running := fmt.Sprintf("Cell %d is still running after %s", n.Cell, Duration(seconds(n.Elapsed)))
		if n.Elapsed < 0.1 {
			running = fmt.Sprintf("Cell %d is running", n.Cell) // a timeout of 0: the call did not wait
		}
		return fmt.Sprintf("%s; it goes on. %s", running, sentence(steps(n.Next, v, map[string]string{
			api.DoWait: "collects the rest", api.DoInterrupt: "stops it"})))
	case api.NoteInput:
		asks := "a line of input"
		switch n.Why {
		case "password":
			asks = "a secret (the answer is not shown, nor kept anywhere)"
		case "lines":
			asks = "a line of input (not end of file, which would end its console)"
		}
		asked := fmt.Sprintf(": it asked %q", n.Said)
		if n.Said == "" {
			asked = " on its standard input"
		}
		answers := fmt.Sprintf("answers it (%s: end of file)", v.Input(api.FieldEOF))
		if n.Why == "lines" {
			answers = "answers it"
		}
		return fmt.Sprintf("Cell %d waits for %s%s. It runs no other code meanwhile. %s", n.Cell, asks, asked,
			sentence(steps(n.Next, v, map[string]string{api.DoInput: answers, api.DoInterrupt: "stops the cell"})))
	case api.NoteCapped:
		return fmt.Sprintf("This server answers every call within %s, sooner than the timeout asked for, so that the client does not give up on the call.",
			Duration(seconds(n.Elapsed)))
	case api.NoteCollected:
		if n.Cell == 0 {
			return fmt.Sprintf("Nothing to collect: session %q has run no cell yet.", n.Session)
		}
		at := ""
		if n.At != nil {
			at = " at " + n.At.Local().Format("15:04:05")
		}
		return fmt.Sprintf("Nothing new to collect: cell %d %s%s and its result was already collected.", n.Cell, Finished(n.Status), at)
	case api.NoteUncollected:
		if n.Result == nil {
			return ""
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Cell %d (sent by %s) %s while nobody was waiting for it. What it left:\n", n.Result.Cell, Who(n.Client), Finished(n.Result.Status))
		Result(&b, n.Result.Result(n.Session), Style{Voice: v})
		return strings.TrimRight(b.String(), "\n")
	case api.NoteSentBy:
		return fmt.Sprintf("Cell %d was sent by %s, whose reply reads the same output.", n.Cell, Who(n.Client))
	case api.NoteNotRunning:
		if n.Cell > 0 {
			return fmt.Sprintf("Nothing to interrupt: session %q is idle; its last cell, %d, %s.", n.Session, n.Cell, Finished(n.Status))
		}
		return fmt.Sprintf("Nothing to interrupt: session %q is idle.", n.Session)
	case api.NoteStuck:
		why := "it may be stuck in code that never checks for signals"
		switch n.Why {
		case api.StuckIgnoresSIGINT:
			why = "the cell ignores SIGINT (it set SIGINT to SIG_IGN), so an interrupt cannot reach it"
		case api.StuckStopped:
			why = "its runtime is stopped by a signal and stayed stopped after SIGCONT"
		}
		return fmt.Sprintf("The cell did not stop within %s of SIGINT: %s. %s",
			Duration(seconds(n.Elapsed)), why, sentence(steps(n.Next, v, map[string]string{api.DoKill: "ends it (and the namespace)"})))
	case api.NoteStray:
		return fmt.Sprintf("%s on the runtime's result channel did not belong to the cell in flight (a cell wrote to the channel) and %s ignored; the results shown are the runtime's own.",
			Plural(n.Count, "event"), map[bool]string{true: "was", false: "were"}[n.Count == 1])
	case api.NoteDropped:
		return fmt.Sprintf("The runtime's report of this cell was %s, too long to take, so its value, error and names are not shown; the session lives on.",
			Megabytes(uint64(n.Count)))
	case api.NoteRedirected:
		var fds []string
		for _, fd := range n.FDs {
			fds = append(fds, map[int]string{1: "fd 1 (stdout)", 2: "fd 2 (stderr)"}[fd])
		}
		it := map[bool]string{true: "it", false: "them"}[len(fds) == 1]
		text := fmt.Sprintf("The cell pointed %s away from the session's output, so what it printed after that went there instead.", strings.Join(fds, " and "))
		if n.Err != "" {
			return text + " polyrepl could not point " + it + " back (" + n.Err + "): later output may not arrive; restart the session if it does not."
		}
		return text + " polyrepl pointed " + it + " back for the next cell."
	case api.NoteOutputLate:
		return fmt.Sprintf("The end of this cell's output did not arrive within %s of its result (the cell may have redirected its output), so the cell was ended without it; output arriving later is shown as printed while no cell ran.",
			Duration(seconds(n.Elapsed)))
	case api.NoteUnchanged:
		var asked []string
		for _, a := range n.Asked {
			asked = append(asked, askedText(a))
		}
		return fmt.Sprintf("Session '%s' already runs: %s did not take effect, since that is chosen when a session is created. To apply it: %s, then run the cell again.",
			n.Session, strings.Join(asked, " and "), strings.Join(stepNames(n.Next, v), ", then "))
	case api.NoteChildOOM:
		procs := "1 process"
		if n.Count != 1 {
			procs = fmt.Sprintf("%d processes", n.Count)
		}
		if n.Cap {
			return fmt.Sprintf("The kernel killed %s of this session during this cell for going over the memory cap on all sessions together (the session has %s); the session lives on.",
				procs, n.Limit)
		}
		return fmt.Sprintf("The kernel killed %s of this session during this cell for going over its memory limit of %s; the session lives on.",
			procs, n.Limit)
	case api.NoteSandbox:
		return sandboxNote(n, v)
	case api.NoteRuntime:
		return n.Said
	case api.NoteHint:
		return hintText(n.Hint)
	case api.NoteSave:
		switch n.Saved {
		case api.SavedRecord:
			return "The shared record could not be saved: " + n.Err
		case api.SavedTranscript:
			return "This cell ran, but it could not be added to the transcript: " + n.Err
		case api.SavedOutput:
			return "The whole output could not be saved: " + n.Err
		case api.SavedError:
			return "The whole error could not be saved: " + n.Err
		case api.SavedValue:
			return "The whole value could not be saved: " + n.Err
		case api.SavedRich:
			return "A figure the cell showed could not be kept: " + n.Err
		}
		return "Something could not be saved: " + n.Err
	case api.NoteVersion:
		text := fmt.Sprintf("The running daemon is polyrepl %s but this client is %s.", n.Version, n.ClientVersion)
		if n.Err != "" {
			text += fmt.Sprintf(" Replacing it, keeping its sessions, failed: %s.", n.Err)
		}
		return text + " " + sentence(
			steps(n.Next, v, map[string]string{api.DoStop: "ends it and every session, so the next call starts " + n.ClientVersion}))
	case api.NoteUpgraded:
		kept := "it had no sessions"
		if len(n.Names) > 0 {
			kept = fmt.Sprintf("its %s went on: %s", Plural(len(n.Names), "session"), Names(n.Names))
		}
		return fmt.Sprintf("Replaced the daemon of polyrepl %s with this %s (pid %d); %s.", n.Version, n.ClientVersion, n.PID, kept)
	case api.NoteUnread:
		return unread(n)
	case api.NoteElsewhere:
		return fmt.Sprintf("The daemon that keeps the state directory %s (pid %d) listens at %s, not at %s, where this environment would look (its XDG_RUNTIME_DIR differs from the daemon's, or is unset); reached it there.", n.StateDir, n.PID, n.Socket, n.OwnSocket)
	case api.NoteAdopted:
		return fmt.Sprintf("Session '%s' was taken up by a new daemon (polyrepl %s, pid %d): its runtime went on, with its namespace.", n.Session, n.Version, n.PID)
	}
	if n.Said != "" {
		return n.Said
	}
	return n.Kind
}

// ForkApart says what a fork's copy did not get or shares, each kind a
// sentence: "" when it got everything and shares nothing.
func ForkApart(f api.Fork) string {
	var b strings.Builder
	say := func(lead string, names []string, total int, what string) {
		if total == 0 && len(names) == 0 {
			return
		}
		total = max(total, len(names))
		list := strings.Join(names, ", ")
		if more := total - len(names); more > 0 {
			list += fmt.Sprintf(" and %d more", more)
		}
		fmt.Fprintf(&b, " %s %s: %s.", lead, Plural(total, what), list)
	}
	say("Not copied (a fork copies only the thread that forks):", f.Threads, f.ThreadsTotal, "thread")
	say("Shared with '"+f.From+"':", f.Shared, f.SharedTotal, "open file")
	say("Not carried over (they stay '"+f.From+"''s):", f.Children, f.ChildrenTotal, "child process")
	return b.String()
}

// Worded is notes with each one's words in Text, in v's terms, for JSON
// read by people and their scripts.
func Worded(notes []api.Note, v Voice) []api.Note {
	out := make([]api.Note, len(notes))
	for i, n := range notes {
		n.Text = Note(n, v)
		out[i] = n
	}
	return out
}

// Loss says what a session's death lost: when and how it died, its names
// and where its cells are.
func Loss(n api.Note, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Session '%s' died", n.Session)
	if d := n.Death; d != nil {
		fmt.Fprintf(&b, " at %s (%s ago): %s", d.At.Local().Format("2006-01-02 15:04:05"), Duration(now.Sub(d.At)), d.Cause)
	}
	b.WriteString(".")
	if len(n.Names) > 0 {
		fmt.Fprintf(&b, " Lost names: %s.", Names(n.Names))
	} else {
		b.WriteString(" It held no names.")
	}
	if n.Cells > 0 {
		are := "are"
		if n.Cells == 1 {
			are = "is"
		}
		fmt.Fprintf(&b, " Its %s %s in %s.", Plural(n.Cells, "cell"), are, n.Transcript)
	}
	return b.String()
}

// others lists the other sessions that need attention, and how to
// collect from them.
func others(n api.Note, v Voice) string {
	var parts []string
	for _, o := range n.Others {
		switch {
		case o.Running != nil && o.Running.Input != nil:
			parts = append(parts, fmt.Sprintf("'%s' waits for input: cell %d asks %q (sent by %s; %s answers it)", o.Session, o.Running.Cell,
				o.Running.Input.Text, Who(&o.Running.Client), v.Step(api.Action{Do: api.DoInput, Session: o.Session})))
		case o.Running != nil:
			parts = append(parts, fmt.Sprintf("'%s' is running cell %d (%s, sent by %s)", o.Session, o.Running.Cell,
				Duration(time.Since(o.Running.Started)), Who(&o.Running.Client)))
		case o.State == api.StateDead:
			var how []string
			if o.Death != nil {
				how = append(how, o.Death.Cause)
			}
			if len(o.Names) > 0 {
				how = append(how, "lost names: "+namesUpTo(o.Names, othersNames))
			}
			cause := ""
			if len(how) > 0 {
				cause = " (" + strings.Join(how, "; ") + ")"
			}
			parts = append(parts, fmt.Sprintf("'%s' died%s with a result nobody collected", o.Session, cause))
		default:
			parts = append(parts, fmt.Sprintf("'%s' has output nobody collected", o.Session))
		}
	}
	text := "Other sessions: " + strings.Join(parts, "; ") + "."
	if names := stepNames(n.Next, v); len(names) == 1 {
		text += " " + upperFirst(names[0]) + " collects it."
	} else if len(names) > 1 {
		text += " " + upperFirst(strings.Join(names, ", ")) + " collect them."
	}
	if n.Count > 0 {
		needs := fmt.Sprintf("%d more sessions need", n.Count)
		if n.Count == 1 {
			needs = "1 more session needs"
		}
		text += fmt.Sprintf(" %s attention, not listed here: later replies tell them, and %s lists them all.",
			needs, v.Step(api.Action{Do: api.DoSessions}))
	}
	return text
}

func askedText(a api.Asked) string {
	switch a.Field {
	case api.FieldExe:
		return fmt.Sprintf("the executable %s asked for (it runs %s)", a.Want, a.Have)
	case api.FieldProject:
		return fmt.Sprintf("the project %s asked for", a.Want)
	case api.FieldCwd:
		return fmt.Sprintf("the working directory %s asked for (it runs in %s)", a.Want, a.Have)
	case api.FieldMemory:
		have := "no limit"
		if a.Have != "" {
			have = "a limit of " + a.Have
		}
		return fmt.Sprintf("the memory limit of %s asked for (it has %s)", a.Want, have)
	}
	return fmt.Sprintf("the %s %s asked for", a.Field, a.Want)
}

// steps names each step with what it does: "`polyrepl wait etl` collects
// it; `polyrepl interrupt etl` stops it."
func steps(next []api.Action, v Voice, does map[string]string) string {
	var parts []string
	for _, a := range next {
		what := does[a.Do]
		if what == "" {
			what = stepPurpose(a)
		}
		parts = append(parts, v.Step(a)+" "+what)
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "."
}

// sentence starts s with a capital letter: steps open sentences.
func sentence(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func stepNames(next []api.Action, v Voice) []string {
	var names []string
	for _, a := range next {
		names = append(names, v.Step(a))
	}
	return names
}

func runtimeVersion(n api.Note) string { return Runtime(n.Runtime, n.Version) }

// Runtime names a runtime and, where it tells one (dash does not), its
// version: "python 3.11.2", "sh".
func Runtime(runtime, version string) string {
	if version != "" {
		return runtime + " " + version
	}
	return runtime
}

// Who names a client: "alice via mcp", or "someone".
func Who(c *api.Client) string {
	if c == nil {
		return "someone"
	}
	return c.Label()
}

// Finished says how a cell ended, after its number: "cell 3 raised".
func Finished(status string) string {
	switch status {
	case api.StatusError:
		return "raised"
	case api.StatusInterrupted:
		return "was interrupted"
	case api.StatusDead:
		return "died"
	}
	return "finished"
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Duration prints a duration the way a person reads it: 850ms, 12s, 3m4s.
func Duration(d time.Duration) string { return api.Readable(d).String() }

// hintText words a hint note: the way around a known trap of a runtime.
func hintText(hint string) string {
	switch hint {
	case api.HintDynamicImport:
		return "Hint: a cell runs as a script, not an ES module, so a static import cannot be used in it. " +
			"Load the module with await import() instead: `const fs = await import('fs')`, " +
			"`const { readFile } = await import('fs/promises')`, " +
			"or `const x = (await import('y')).default` for a default export."
	}
	return "Hint: " + hint
}

// unread says which lines of a session's record file its loader left
// out, and where the file is kept.
func unread(n api.Note) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s of the record of session '%s' could not be read when it was loaded, and %s left out; the entries on the other lines were read:",
		upperFirst(Plural(n.Count, "line")), n.Session, map[bool]string{true: "was", false: "were"}[n.Count == 1])
	for _, l := range n.Lines {
		fmt.Fprintf(&b, " line %d (%s", l.Line, Kilobytes(int64(l.Bytes)))
		if l.Seq > 0 && l.Why != api.UnreadSeq {
			fmt.Fprintf(&b, ", entry %d", l.Seq)
		}
		b.WriteString(") ")
		switch l.Why {
		case api.UnreadLong:
			fmt.Fprintf(&b, "is longer than a record line may be (%s)", Kilobytes(int64(l.Limit)))
		case api.UnreadMalformed:
			b.WriteString("is not an entry (not JSON, or cut off)")
		case api.UnreadSeq:
			if l.After > 0 {
				fmt.Fprintf(&b, "claims entry %d, which does not follow entry %d: it was not trusted to number or drop any entry", l.Seq, l.After)
			} else {
				fmt.Fprintf(&b, "claims entry %d, before the record's first", l.Seq)
			}
		case api.UnreadError:
			b.WriteString("could not be read (" + l.Err + "), nor the lines after it")
		default:
			b.WriteString(l.Why)
		}
		b.WriteString(";")
	}
	if more := n.Count - len(n.Lines); more > 0 {
		fmt.Fprintf(&b, " and %d more;", more)
	}
	text := strings.TrimSuffix(b.String(), ";") + "."
	if n.File != "" {
		return text + " The file as it was is kept in " + n.File + "."
	}
	return text + " The file could not be kept aside (" + n.Err + "), so the next load will leave the same lines out and say so again."
}
