package mcp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
)

// Structured content says nothing twice: a display that is the value
// behind a prompt goes, long texts keep their ends and say where the
// whole is, activity comes as entry lines, times to the millisecond.
func TestLeanResult(t *testing.T) {
	long := strings.Repeat("a line of output\n", 1000)
	r := api.CellResult{
		Session: "s", Cell: 3, Status: api.StatusDone, Output: long, Value: "42", Display: "Out[3]: 42",
		Elapsed:   1.234567891,
		OutputCut: &bound.Cut{Total: 90000, Head: 15000, Tail: 15000, File: "/state/output/s-3.txt"},
		Activity: &api.Activity{Session: "s", Entries: []api.Entry{{
			ID: "s#7", Kind: "cell", Cell: 2, Who: "Other", How: "mcp", Status: api.StatusDone,
			Code: "import csv\nrows = list(csv.reader(open('data.csv')))\nlen(rows)", Display: "Out[2]: 100001",
			Output: strings.Repeat("x", 5000), Started: time.Date(2026, 12, 3, 20, 0, 0, 123456789, time.UTC),
		}}},
	}
	l := leanResult(r)
	if l.Display != "" {
		t.Errorf("display %q kept beside value %q", l.Display, l.Value)
	}
	if n := len([]rune(l.Output)); n > structuredInline+100 {
		t.Errorf("output kept %d characters, want about %d", n, structuredInline)
	}
	if c := l.OutputCut; c == nil || c.Total != 90000 || c.File != "/state/output/s-3.txt" || c.Head+c.Tail > structuredInline {
		t.Errorf("output cut %+v: want the whole's total and file, and what is kept", c)
	}
	if l.Elapsed != 1.235 {
		t.Errorf("elapsed %v, want 1.235", l.Elapsed)
	}
	a := l.Activity
	if a == nil || len(a.Entries) != 1 {
		t.Fatalf("activity %+v", a)
	}
	e := a.Entries[0]
	if e.ID != "s#7" || e.Code != "import csv" || e.Gave != "Out[2]: 100001" || !e.Cut || e.Started.Nanosecond() != 123000000 {
		t.Errorf("entry line %+v", e)
	}
	b, _ := json.Marshal(l)
	if strings.Contains(string(b), strings.Repeat("x", 200)) || strings.Count(string(b), "a line of output") > 80 {
		t.Errorf("structured content repeats long texts: %d characters", len(b))
	}
	if strings.Contains(string(b), `"rev"`) || strings.Contains(string(b), `"conn"`) {
		t.Errorf("activity keeps record bookkeeping: %s", b)
	}

	// A display that says more than the value stays: R's "[1] 42" is the
	// value's own form, a multi-line one is kept as the REPL shows it.
	if d := leanDisplay("Out[1]: \n[[1, 2],\n [3, 4]]", "[[1, 2],\n [3, 4]]"); d != "" {
		t.Errorf("prompt-and-newline display kept: %q", d)
	}
	if d := leanDisplay("=> #<Foo>", "#<Foo bar=1>"); d == "" {
		t.Errorf("a display unlike the value was dropped")
	}
}

// A created note of a full session says nothing of a sandbox in the
// structured content, as in the text; a sandboxed one says its policy.
func TestLeanNotesSandbox(t *testing.T) {
	full := api.Note{Kind: api.NoteCreated, Session: "s", Sandbox: &api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}}
	ro := api.Note{Kind: api.NoteCreated, Session: "r", Sandbox: &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff},
		Enforced: &api.Enforced{Mechanism: "landlock", ABI: 7}}
	l := leanNotes([]api.Note{full, ro})
	if l[0].Sandbox != nil || full.Sandbox == nil {
		t.Errorf("a full session's note keeps %+v (or the original lost it)", l[0].Sandbox)
	}
	if l[1].Sandbox == nil || l[1].Enforced == nil {
		t.Errorf("a read-only session's note lost its sandbox: %+v", l[1])
	}
}

// Listings, kill and restart replies and record lines leave a full
// policy out too; a sandboxed session's stays.
func TestLeanListingsSandbox(t *testing.T) {
	full := &api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}
	ro := &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}
	enf := &api.Enforced{Mechanism: "landlock", ABI: 7}
	l := leanSessions(api.SessionsReply{Sessions: []api.SessionInfo{{Name: "a", Sandbox: full}, {Name: "b", Sandbox: ro, Enforced: enf}}})
	if l.Sessions[0].Sandbox != nil || l.Sessions[1].Sandbox == nil {
		t.Errorf("sessions: %+v", l.Sessions)
	}
	k := leanKill(api.KillReply{Session: "a", Info: api.SessionInfo{Name: "a", Sandbox: full}, Notes: []api.Note{{Kind: api.NoteRestarted, Sandbox: full}}})
	if k.Info.Sandbox != nil || k.Notes[0].Sandbox != nil {
		t.Errorf("kill: %+v", k)
	}
	h := leanHistory(api.RecordReply{Session: "a", Entries: []api.Entry{{ID: "a#1", Kind: api.EntryNote, Note: &api.Note{Kind: api.NoteCreated, Sandbox: full}}}})
	if h.Entries[0].Note == nil || h.Entries[0].Note.Sandbox != nil {
		t.Errorf("history: %+v", h.Entries[0].Note)
	}
}
