package render

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
)

// modelLike stands for the MCP server's voice: tools, not commands.
type modelLike struct{}

func (modelLike) Input(field string) string { return "the " + field + " argument" }
func (modelLike) Step(a api.Action) string  { return "the " + a.Do + " tool" }
func (modelLike) Give(field, value string) string {
	if field != "sandbox" && field != "network" {
		return ""
	}
	return fmt.Sprintf("%q: %q", field, value)
}
func (modelLike) Confined() string { return "ask the user" }

// Every note kind is said in words, each step in the reader's terms: a
// person is told commands, a model is never told one.
func TestEveryNoteKindIsWorded(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	death := &api.Death{Cause: "killed by signal 9 (SIGKILL)", By: api.BySignal, At: at}
	wait := []api.Action{{Do: api.DoWait, Session: "s"}, {Do: api.DoInterrupt, Session: "s"}}
	notes := []api.Note{
		{Kind: api.NoteCreated, Session: "s", Runtime: "python", Version: "3.11.2", Cwd: "/w", PID: 7, Said: "Revise loaded"},
		{Kind: api.NoteRestarted, Session: "s", Runtime: "python", Cwd: "/w", PID: 8, Names: []string{"x"}},
		{Kind: api.NoteLost, Session: "s", Death: death, Names: []string{"x", "y"}, Cells: 1, Transcript: "/t/s.py"},
		{Kind: api.NoteEnded, Session: "s", Death: death},
		{Kind: api.NoteAttached, Session: "s", Client: &api.Client{Who: "dana", How: "attach"}},
		{Kind: api.NoteOthers, Others: []api.Other{{Session: "b", State: api.StateDead, Death: death, Names: []string{"z"}, Unread: true}},
			Next: []api.Action{{Do: api.DoWait, Session: "b"}}},
		{Kind: api.NoteIdle, Session: "s", Output: "tick\n", OutputCut: &bound.Cut{Total: 100, Head: 2, Tail: 2}},
		{Kind: api.NoteRunning, Session: "s", Cell: 3, Elapsed: 30, Next: wait},
		{Kind: api.NoteCollected, Session: "s", Cell: 3, Status: api.StatusDone, At: &at},
		{Kind: api.NoteCollected, Session: "s"},
		{Kind: api.NoteUncollected, Session: "s", Result: &api.Earlier{Cell: 2, Status: api.StatusDone, Output: "done\n"}, Client: &api.Client{Who: "bob", How: "cli"}},
		{Kind: api.NoteNotRunning, Session: "s"},
		{Kind: api.NoteSentBy, Session: "s", Cell: 3, Client: &api.Client{Who: "alice", How: "mcp"}},
		{Kind: api.NoteStuck, Session: "s", Cell: 3, Elapsed: 5, Next: []api.Action{{Do: api.DoKill, Session: "s"}}},
		{Kind: api.NoteUnchanged, Session: "s", Asked: []api.Asked{{Field: api.FieldMemory, Want: "300 MB"}}, Next: []api.Action{{Do: api.DoKill, Session: "s"}}},
		{Kind: api.NoteChildOOM, Session: "s", Count: 2, Limit: "200 MB (cgroup)"},
		{Kind: api.NoteRuntime, Session: "s", Said: "sys.exit() was caught"},
		{Kind: api.NoteHint, Session: "s", Cell: 2, Hint: api.HintDynamicImport},
		{Kind: api.NoteSave, Saved: api.SavedRecord, Err: "disk full"},
		{Kind: api.NoteVersion, Version: "1.0", ClientVersion: "1.1", Next: []api.Action{{Do: api.DoStop}}},
		{Kind: api.NoteVersion, Version: "1.0", ClientVersion: "1.1", Err: "the daemon did not answer", Next: []api.Action{{Do: api.DoStop}}},
		{Kind: api.NoteUpgraded, Version: "1.0", ClientVersion: "1.1", PID: 9, Names: []string{"a", "b"}},
		{Kind: api.NoteAdopted, Session: "s", PID: 9, Version: "1.1"},
		{Kind: api.NoteElsewhere, PID: 9, Socket: "/run/user/1000/polyrepl/daemon.sock", OwnSocket: "/tmp/polyrepl-1000/daemon.sock", StateDir: "/home/me/.local/state/polyrepl/h"},
		{Kind: api.NoteStuck, Session: "s", Cell: 3, Elapsed: 5, Why: api.StuckIgnoresSIGINT, Next: []api.Action{{Do: api.DoKill, Session: "s"}}},
		{Kind: api.NoteStuck, Session: "s", Cell: 3, Elapsed: 5, Why: api.StuckStopped, Next: []api.Action{{Do: api.DoKill, Session: "s"}}},
		{Kind: api.NoteRunning, Session: "s", Cell: 3, Elapsed: 30, Why: api.StuckStopped, Next: wait},
		{Kind: api.NoteStray, Session: "s", Cell: 2, Count: 1},
		{Kind: api.NoteDropped, Session: "s", Cell: 2, Count: 84 << 20},
		{Kind: api.NoteRedirected, Session: "s", Cell: 2, FDs: []int{1, 2}},
		{Kind: api.NoteRedirected, Session: "s", Cell: 2, FDs: []int{1}, Err: "fd 1: Bad file descriptor"},
		{Kind: api.NoteOutputLate, Session: "s", Cell: 2, Elapsed: 1.5},
		{Kind: api.NoteUnread, Session: "s", Count: 12, File: "/r/s.jsonl.unread-1", Lines: []api.RecordLine{
			{Line: 4, Bytes: 9 << 20, Why: api.UnreadLong, Seq: 3, Limit: 8 << 20}, {Line: 5, Bytes: 12, Why: api.UnreadMalformed},
			{Line: 9, Bytes: 80, Why: api.UnreadSeq, Seq: 2147483647, After: 6}, {Line: 10, Bytes: 80, Why: api.UnreadSeq, Seq: 1},
			{Line: 11, Bytes: 0, Why: api.UnreadError, Err: "input/output error"}}},
		{Kind: api.NoteSandbox, Session: "s", Cell: 2, Sandbox: &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}},
		{Kind: api.NoteUnread, Session: "s", Count: 1, Err: "cannot keep it aside", Lines: []api.RecordLine{{Line: 4, Bytes: 12, Why: api.UnreadMalformed}}},
	}
	for _, n := range notes {
		people, model := Note(n, People), Note(n, modelLike{})
		if people == "" || people == n.Kind || model == "" {
			t.Errorf("%s: not worded: people %q, model %q", n.Kind, people, model)
		}
		if strings.Contains(model, "`polyrepl") || strings.Contains(model, "--") {
			t.Errorf("%s: the model is told a command: %q", n.Kind, model)
		}
		if len(n.Next) > 0 && !strings.Contains(people, "`polyrepl "+n.Next[0].Do) {
			t.Errorf("%s: a person is not told the command: %q", n.Kind, people)
		}
		if strings.Contains(people, "%!") || strings.Contains(model, "%!") {
			t.Errorf("%s: a formatting slip: %q / %q", n.Kind, people, model)
		}
	}
}

// Output the session printed while idle is not told as other clients'
// doing: it has a heading of its own, unless clients did things too.
func TestIdleActivityHasItsOwnHeading(t *testing.T) {
	idle := api.Entry{Seq: 4, ID: "s#4", Kind: api.EntryIdle, Output: "tick\n"}
	cell := api.Entry{Seq: 5, ID: "s#5", Kind: api.EntryCell, Cell: 2, Who: "bob", How: "cli", Code: "x", Status: api.StatusDone}
	for _, tc := range []struct {
		entries []api.Entry
		want    string
	}{
		{[]api.Entry{idle}, "Meanwhile session 's' printed, while no cell ran:"},
		{[]api.Entry{cell, idle}, "Meanwhile in session 's', from other clients:"},
	} {
		var b strings.Builder
		Result(&b, api.CellResult{Session: "s", Cell: 3, Status: api.StatusDone, Value: "1",
			Activity: &api.Activity{Session: "s", Entries: tc.entries}}, PeopleStyle)
		if !strings.HasPrefix(b.String(), tc.want+"\n") {
			t.Errorf("activity of %d entries:\n%s\nwant it opened by %q", len(tc.entries), b.String(), tc.want)
		}
	}
}

// TestUnreadNote: the note says which lines were left out, why, and
// where the file as it was is kept.
func TestUnreadNote(t *testing.T) {
	n := api.Note{Kind: api.NoteUnread, Session: "s", Count: 3, File: "/r/s.jsonl.unread-1", Lines: []api.RecordLine{
		{Line: 4, Bytes: 5 << 20, Why: api.UnreadLong, Seq: 3, Limit: 8 << 20},
		{Line: 9, Bytes: 80, Why: api.UnreadSeq, Seq: 2147483647, After: 6}}}
	got := Note(n, People)
	for _, want := range []string{"3 lines of the record of session 's'", "line 4 (5.0 MB, entry 3) is longer than a record line may be (8.0 MB)",
		"line 9 (80 B) claims entry 2147483647, which does not follow entry 6", "and 1 more.", "kept in /r/s.jsonl.unread-1."} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}

// TestAnswersCut: an entry whose answers were cut says how many were
// left out, where, and where they all are.
func TestAnswersCut(t *testing.T) {
	e := api.Entry{Seq: 2, ID: "s#2", Kind: api.EntryCell, Code: "input()", Status: api.StatusDone,
		Answers:    []api.Answer{{Prompt: "? ", Text: "first"}, {Prompt: "? ", Text: "last"}},
		AnswersCut: &api.AnswersCut{Total: 450, Head: 1, Tail: 1, File: "/r/output/s-2.answers.jsonl"}}
	var b strings.Builder
	Entry(&b, e)
	got := b.String()
	first, gap, last := strings.Index(got, `"first"`), strings.Index(got, "[… 448 answers left out …]"), strings.Index(got, `"last"`)
	if first < 0 || gap < first || last < gap ||
		!strings.Contains(got, "[answers cut: 450 answers in all; showing the first 1 and the last 1; every answer whole is in /r/output/s-2.answers.jsonl]") {
		t.Errorf("the entry:\n%s", got)
	}
}

// TestOthersNoteCountsTheRest: a note that lists some of the sessions
// needing attention says how many more there are and where they are all
// listed; a dead one's lost names are few.
func TestOthersNoteCountsTheRest(t *testing.T) {
	var names []string
	for i := range 50 {
		names = append(names, fmt.Sprintf("v%d", i))
	}
	n := api.Note{Kind: api.NoteOthers, Count: 140,
		Others: []api.Other{{Session: "b", State: api.StateDead, Names: names, Unread: true}},
		Next:   []api.Action{{Do: api.DoWait, Session: "b"}}}
	text := Note(n, People)
	for _, want := range []string{"140 more sessions need attention", "`polyrepl sessions` lists them all", "v9 … and 40 more"} {
		if !strings.Contains(text, want) {
			t.Errorf("the note does not say %q: %s", want, text)
		}
	}
}

// TestLostNamesCounted: a death that lost a thousand names says forty and
// counts the rest.
func TestLostNamesCounted(t *testing.T) {
	var names []string
	for i := range 1000 {
		names = append(names, fmt.Sprintf("v%d", i))
	}
	for _, kind := range []string{api.NoteLost, api.NoteRestarted} {
		text := Note(api.Note{Kind: kind, Session: "a", Names: names, Death: &api.Death{Cause: "killed"}}, People)
		if !strings.Contains(text, "v39 … and 960 more") || strings.Contains(text, "v40,") {
			t.Errorf("%s: %.300s", kind, text)
		}
	}
}

// A call the daemon took and never answered is told as unknown, with
// the steps that find out, and never as a daemon out of reach.
func TestInFlight(t *testing.T) {
	err := errors.New("unexpected EOF")
	for _, tc := range []struct {
		op   string
		want []string
	}{
		{api.DoExec, []string{"exec was in flight (unexpected EOF)", "the cell may have run", "`polyrepl sessions etl` shows whether it did", "`polyrepl wait etl` collects its output", "may run it twice"}},
		{api.DoKill, []string{"kill was in flight", "may have been done", "`polyrepl sessions etl` shows the session's state"}},
		{api.DoInterrupt, []string{"interrupt was in flight", "may have reached the cell", "`polyrepl wait etl`"}},
	} {
		msg, hint := InFlight(tc.op, "etl", err, People)
		for _, w := range tc.want {
			if !strings.Contains(msg+" "+hint, w) {
				t.Errorf("InFlight(%s): %q / %q lacks %q", tc.op, msg, hint, w)
			}
		}
		if strings.Contains(msg+hint, "cannot reach") {
			t.Errorf("InFlight(%s): %q says the daemon cannot be reached", tc.op, msg)
		}
		// A model is told the tools that find out, never a command.
		_, hint = InFlight(tc.op, "etl", err, modelLike{})
		if !strings.Contains(hint, "the sessions tool") || strings.Contains(hint, "polyrepl ") {
			t.Errorf("InFlight(%s) for a model: %q; want the sessions tool named and no command", tc.op, hint)
		}
	}
}
