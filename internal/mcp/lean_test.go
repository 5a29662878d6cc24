package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
)

// wordsKeys are the fields that carry a cell's or an entry's words: the
// text says them, so the structured content never does (issue 40).
var wordsKeys = []string{"output", "value", "display", "traceback", "message", "code", "gave", "text", "cause", "preview", "limits", "needs", "said"}

// saidTwice lists what structured content says that the text says too:
// a field of words (wordsKeys), or a string of 16 characters or more
// found in the text, other than a file's path (where the whole of a cut
// text or a figure is, which the text names where it is cut) and an
// error's type (which a traceback's last line names).
func saidTwice(text string, structured any) []string {
	b, _ := json.Marshal(structured)
	var v any
	json.Unmarshal(b, &v)
	var out []string
	var walk func(at, key string, v any)
	walk = func(at, key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if slices.Contains(wordsKeys, k) {
					out = append(out, at+"."+k)
					continue
				}
				walk(at+"."+k, k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", at, i), key, x)
			}
		case string:
			if key != "file" && key != "transcript" && key != "type" && len([]rune(v)) >= 16 && strings.Contains(text, v) {
				out = append(out, fmt.Sprintf("%s (%q)", at, v))
			}
		}
	}
	walk("structuredContent", "", v)
	slices.Sort(out)
	return out
}

// A cell result's structured content is its facts: no output, value,
// display or traceback (the text has them), the cuts with their files,
// the error's type, each note's kind and next steps, the ids of the
// activity told.
func TestCellFacts(t *testing.T) {
	long := strings.Repeat("a line of output\n", 1000)
	tb := "Traceback (most recent call last):\n  File \"<cell 3>\", line 1\nZeroDivisionError: division by zero\n"
	r := api.CellResult{
		Session: "s", Generation: "0123456789ab", Cell: 3, Status: api.StatusError, Output: long, Value: "42", Display: "Out[3]: 42",
		Elapsed:   1.234567891,
		OutputCut: &bound.Cut{Total: 90000, Head: 15000, Tail: 15000, File: "/state/output/s-3.txt"},
		Error:     &api.CellError{Type: "ZeroDivisionError", Message: "division by zero", Traceback: tb},
		Rich:      []api.Rich{{MIME: "image/png", Width: 640, Height: 480, Bytes: 20065, File: "/state/output/s-3.rich-1.png", Text: "<Figure size 640x480 with 1 Axes>"}},
		Prompt:    &api.Prompt{Text: "Password: ", Password: true},
		Notes: []api.Note{
			{Kind: api.NoteCreated, Session: "s", Runtime: "python", Version: "3.11.2", Cwd: "/work", PID: 42},
			{Kind: api.NoteOthers, Others: []api.Other{{Session: "t", State: api.StateRunning}}, Next: []api.Action{{Do: api.DoWait, Session: "t"}}},
		},
		Activity: &api.Activity{Session: "s", More: []string{"s#5"}, Updated: []int{7}, Entries: []api.Entry{{
			ID: "s#7", Kind: "cell", Cell: 2, Who: "Other", How: "mcp", Status: api.StatusDone,
			Code: "import csv\nrows = list(csv.reader(open('data.csv')))\nlen(rows)", Display: "Out[2]: 100001",
			Output: strings.Repeat("x", 5000), Started: time.Date(2026, 12, 3, 20, 0, 0, 123456789, time.UTC),
		}}},
	}
	f := cellOf(r, r.Generation)
	if f.Session != "s" || f.Cell != 3 || f.Status != api.StatusError || f.Generation != "0123456789ab" {
		t.Errorf("facts %+v", f)
	}
	if c := f.OutputCut; c == nil || c.Total != 90000 || c.File != "/state/output/s-3.txt" {
		t.Errorf("output cut %+v: want the whole's total and file", c)
	}
	if f.Error == nil || f.Error.Type != "ZeroDivisionError" {
		t.Errorf("error %+v, want its type", f.Error)
	}
	if len(f.Rich) != 1 || f.Rich[0].File != "/state/output/s-3.rich-1.png" || f.Rich[0].Width != 640 {
		t.Errorf("rich %+v, want the figure's file and size", f.Rich)
	}
	if f.Prompt == nil || !f.Prompt.Password {
		t.Errorf("prompt %+v, want password", f.Prompt)
	}
	if len(f.Notes) != 2 || f.Notes[0].Kind != api.NoteCreated || f.Notes[0].Session != "" || f.Notes[1].Kind != api.NoteOthers ||
		len(f.Notes[1].Next) != 1 || f.Notes[1].Next[0].Session != "t" {
		t.Errorf("notes %+v, want created (the reply's session unsaid) and others with its next step", f.Notes)
	}
	if a := f.Activity; a == nil || !slices.Equal(a.Told, []string{"s#7"}) || !slices.Equal(a.Updated, []int{7}) || !slices.Equal(a.More, []string{"s#5"}) {
		t.Errorf("activity %+v, want the ids told, those told again, and those left out", a)
	}
	// What the text says is not here: a text holding every word of the
	// result finds none of them in the structured content.
	words := strings.Join([]string{long, tb, "Out[3]: 42", "<Figure size 640x480 with 1 Axes>", "Password: ", "/work", "python 3.11.2",
		"import csv", "Out[2]: 100001", strings.Repeat("x", 5000)}, "\n")
	if twice := saidTwice(words, f); len(twice) > 0 {
		t.Errorf("structured content repeats the text: %v", twice)
	}
	b, _ := json.Marshal(f)
	if len(b) > 800 {
		t.Errorf("structured content is %d characters: %s", len(b), b)
	}

	// A trivial answer's structured content is a few dozen characters.
	b, _ = json.Marshal(cellOf(api.CellResult{Session: "etl", Generation: "0123456789ab", Cell: 5, Status: api.StatusDone, Value: "42", Display: "Out[5]: 42", Elapsed: 0.0012}, ""))
	if want := `{"session":"etl","cell":5,"status":"done"}`; string(b) != want {
		t.Errorf("a trivial answer's structured content:\n got %s\nwant %s", b, want)
	}
}

// saidTwice finds words fields and long strings the text holds, and
// leaves a file's path alone.
func TestSaidTwice(t *testing.T) {
	for _, tc := range []struct {
		text       string
		structured any
		want       []string
	}{
		{"Out[1]: 42", map[string]any{"value": "42"}, []string{"structuredContent.value"}},
		{"x", map[string]any{"error": map[string]any{"traceback": "t"}}, []string{"structuredContent.error.traceback"}},
		{"[output cut: …; the whole output is in /state/out/g-1.txt]", map[string]any{"output_cut": map[string]any{"file": "/state/out/g-1.txt"}}, nil},
		{"Created session 'g' (python 3.11.2, cwd /home/ada/work/project).", map[string]any{"notes": []any{map[string]any{"cwd": "/home/ada/work/project"}}},
			[]string{`structuredContent.notes[0].cwd ("/home/ada/work/project")`}},
		{"Out[1]: 42", map[string]any{"session": "g", "status": "done"}, nil},
	} {
		if got := saidTwice(tc.text, tc.structured); !slices.Equal(got, tc.want) {
			t.Errorf("saidTwice(%q, %v) = %v, want %v", tc.text, tc.structured, got, tc.want)
		}
	}
}

// Listings, kill, restart and fork keep a session's name, state and
// generation; history keeps where the record stands, an entry asked
// whole its identity and files.
func TestListingFacts(t *testing.T) {
	same := func(_, gen string) string { return gen }
	info := api.SessionInfo{Name: "a", Generation: "0123456789ab", State: api.StateDead, Cwd: "/work", Names: []string{"x"}, Transcript: "/state/a.md",
		Sandbox: &api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}}
	b, _ := json.Marshal(structuredOf(api.SessionsReply{Sessions: []api.SessionInfo{info}}, same))
	if want := `{"sessions":[{"name":"a","generation":"0123456789ab","state":"dead"}]}`; string(b) != want {
		t.Errorf("sessions: %s, want %s", b, want)
	}
	b, _ = json.Marshal(structuredOf(api.KillReply{Session: "a", Info: info}, func(string, string) string { return "" }))
	if want := `{"session":"a","state":"dead","transcript":"/state/a.md"}`; string(b) != want {
		t.Errorf("kill: %s, want %s", b, want)
	}
	b, _ = json.Marshal(structuredOf(api.RecordReply{Session: "a", Next: 4, Entries: []api.Entry{{ID: "a#1", Kind: api.EntryCell, Code: "x = 1"}}}, same))
	if want := `{"session":"a","next":4}`; string(b) != want {
		t.Errorf("history: %s, want %s", b, want)
	}
	e := api.Entry{ID: "a#2", Seq: 2, Kind: api.EntryCell, Cell: 1, Status: api.StatusDone, Code: "print('hi')", Output: "hi\n", Generation: "0123456789ab",
		OutputCut: &bound.Cut{Total: 9000, Head: 4000, Tail: 4000, File: "/state/a-1.txt"}, Rich: []api.Rich{{MIME: "image/png", File: "/state/a-1.rich-1.png", Text: "<Figure>"}}}
	f := structuredOf(wholeEntry{Session: "a", Entries: []api.Entry{e}}, same).(entryFacts)
	if f.ID != "a#2" || f.Cell != 1 || f.OutputCut == nil || f.OutputCut.File != "/state/a-1.txt" || len(f.Rich) != 1 || f.Rich[0].File != "/state/a-1.rich-1.png" {
		t.Errorf("entry whole: %+v", f)
	}
	if twice := saidTwice("print('hi')\nhi\n<Figure>", f); len(twice) > 0 {
		t.Errorf("entry whole repeats its words: %v", twice)
	}
}

// A session's generation is given to a connection when it is news to
// it: its first reply about the session, and the first after a new life
// began; not again on every reply.
func TestGenerationNews(t *testing.T) {
	f := newFixture(t, true)
	a := f.connect(testAgent)
	b := f.connect(&mcp.Implementation{Name: "other-agent", Version: "1.0"})
	first, _ := a.cell("exec", map[string]any{"session": "gn", "code": "1"})
	if first.Generation == "" {
		t.Fatalf("the creating reply gave no generation: %+v", first)
	}
	if r, _ := a.cell("exec", map[string]any{"session": "gn", "code": "2"}); r.Generation != "" {
		t.Errorf("the second reply gave the generation again: %+v", r)
	}
	if r, _ := b.cell("exec", map[string]any{"session": "gn", "code": "3"}); r.Generation != first.Generation {
		t.Errorf("another connection's first reply: generation %q, want %q", r.Generation, first.Generation)
	}
	var life lifeFacts
	structured(t, a.ok("restart", map[string]any{"session": "gn"}), &life)
	if life.Generation == "" || life.Generation == first.Generation {
		t.Errorf("restart: generation %q, want a new one (was %q)", life.Generation, first.Generation)
	}
	if r, _ := a.cell("exec", map[string]any{"session": "gn", "code": "4"}); r.Generation != "" {
		t.Errorf("after the restart's reply: generation %q given again", r.Generation)
	}
	if r, _ := b.cell("exec", map[string]any{"session": "gn", "code": "5"}); r.Generation != life.Generation {
		t.Errorf("the other connection after the restart: generation %q, want the new %q", r.Generation, life.Generation)
	}
	var list sessionsFacts
	structured(t, a.ok("sessions", nil), &list)
	if len(list.Sessions) != 1 || list.Sessions[0].Generation != "" {
		t.Errorf("sessions: %+v, want gn without the generation a has", list.Sessions)
	}
	c := f.connect(&mcp.Implementation{Name: "third-agent", Version: "1.0"})
	structured(t, c.ok("sessions", nil), &list)
	if len(list.Sessions) != 1 || list.Sessions[0].Generation != life.Generation {
		t.Errorf("a new connection's sessions: %+v, want gn's generation %q", list.Sessions, life.Generation)
	}
	// A connection that ends is forgotten.
	told := func() int {
		f.srv.mu.Lock()
		defer f.srv.mu.Unlock()
		return len(f.srv.told)
	}
	if n := told(); n != 3 {
		t.Fatalf("%d connections remembered, want 3", n)
	}
	c.cs.Close()
	for deadline := time.Now().Add(callTimeout); told() != 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a closed connection's generations are still remembered (%d connections)", told())
		}
	}
}
