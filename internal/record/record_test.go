package record

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
	"weak"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
)

var (
	alice = api.Client{Who: "alice", How: "cli"}
	agent = api.Client{Who: "agent", How: "mcp", Conn: "mcp-1"}
	other = api.Client{Who: "agent", How: "mcp", Conn: "mcp-2"} // same label, another connection
)

func cellBy(c api.Client, code string) api.Entry {
	return api.Entry{Kind: api.EntryCell, Who: c.Who, How: c.How, Conn: c.Conn, Code: code, Status: api.StatusRunning, Started: time.Now()}
}

func end(r *Record, seq int, status string) {
	r.Update(seq, func(e *api.Entry) {
		now := time.Now()
		e.Status, e.Ended = status, &now
	})
}

func TestPersistedAcrossOpens(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	a := r.Add(cellBy(alice, "x = 1"))
	r.Output(a, []byte("out\n"))
	end(r, a, api.StatusDone)
	b := r.Add(cellBy(agent, "while True: pass"))
	r.Output(b, []byte("partial"))
	r.Close() // the daemon dies with cell b running

	if fi, err := os.Stat(filepath.Join(dir, "s.jsonl")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("record file: %v, mode %v; want 0600", err, fi.Mode())
	}
	r2, err := Open(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	r2.EndStale(0) // no holder keeps it
	es, dropped, next := r2.Since(0)
	if len(es) != 2 || dropped != 0 || next != 3 {
		t.Fatalf("reopened: %d entries, dropped %d, next %d", len(es), dropped, next)
	}
	if es[0].Output != "out\n" || es[0].Status != api.StatusDone || es[0].ID != "s#1" {
		t.Errorf("first entry %+v", es[0])
	}
	if es[1].Status != api.StatusDead || es[1].Output != "partial" || !strings.Contains(es[1].Text, "daemon ended") {
		t.Errorf("a cell running when the daemon died: %+v, want dead with its output and why", es[1])
	}
	if s := r2.Add(api.Entry{Kind: api.EntryNote, Text: "next"}); s != 3 {
		t.Errorf("the next entry got seq %d, want 3", s)
	}
	r2.Close()
}

// TestWholeOutputHoldsEveryByte: the file a cut entry names holds every
// byte printed, also when one write is larger than the head and tail
// together (a runtime's first chunk of a big print), and when the entry
// is added with its output already over the limit (output while idle).
func TestWholeOutputHoldsEveryByte(t *testing.T) {
	r, _ := Open(t.TempDir(), "s")
	defer r.Close()
	var big strings.Builder
	for i := 0; big.Len() < 300000; i++ {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	writes := []string{"first\n", big.String(), "small\n", big.String()[:70000], "last\n"}
	seq := r.Add(cellBy(alice, "print"))
	for _, w := range writes {
		r.Output(seq, []byte(w))
	}
	end(r, seq, api.StatusDone)
	idle := r.Add(api.Entry{Kind: api.EntryIdle, Started: time.Now(), Output: big.String()})
	r.Output(idle, []byte("more\n"))
	end(r, idle, api.StatusDone)
	es, _, _ := r.Since(0)
	for i, want := range []string{strings.Join(writes, ""), big.String() + "more\n"} {
		e := es[i]
		if e.OutputCut == nil || e.OutputCut.File == "" {
			t.Fatalf("entry %d: output of %d characters not cut or saved: %+v", e.Seq, len(want), e.OutputCut)
		}
		got, err := os.ReadFile(e.OutputCut.File)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want || e.OutputCut.Total != len(want) {
			t.Errorf("entry %d: the whole-output file holds %d bytes, the cut counts %d, %d were printed", e.Seq, len(got), e.OutputCut.Total, len(want))
		}
	}
}

// TestDroppedEntriesLetGo: an entry dropped from the front is garbage
// at once, not when the slice's array next grows.
func TestDroppedEntriesLetGo(t *testing.T) {
	r, _ := Open(t.TempDir(), "s")
	defer r.Close()
	end(r, r.Add(cellBy(alice, "first")), api.StatusDone)
	r.mu.Lock()
	first := weak.Make(r.entries[0])
	r.mu.Unlock()
	for i := 0; i < api.RecordKeep; i++ {
		end(r, r.Add(cellBy(alice, "next")), api.StatusDone)
	}
	runtime.GC()
	if first.Value() != nil {
		t.Fatal("the dropped first entry is still reachable")
	}
}

func TestBounds(t *testing.T) {
	dir := t.TempDir()
	r, _ := Open(dir, "s")
	for i := 0; i < api.RecordKeep+50; i++ {
		s := r.Add(cellBy(alice, fmt.Sprintf("cell %d", i)))
		end(r, s, api.StatusDone)
	}
	big := r.Add(cellBy(alice, strings.Repeat("c", 3*api.EntryCodeLimit)))
	for i := 0; i < 1000; i++ {
		r.Output(big, []byte(strings.Repeat("é", 99)+"\n"))
	}
	end(r, big, api.StatusDone)
	es, dropped, _ := r.Since(0)
	if len(es) != api.RecordKeep || dropped != 51 || es[0].Seq != 52 {
		t.Fatalf("%d entries from seq %d, dropped %d; want the last %d, 51 dropped", len(es), es[0].Seq, dropped, api.RecordKeep)
	}
	last := es[len(es)-1]
	if n := utf8.RuneCountInString(last.Code); last.CodeCut == nil || last.CodeCut.Total != 3*api.EntryCodeLimit || n > api.EntryCodeLimit+100 {
		t.Errorf("code of %d characters kept as %d, cut %+v", 3*api.EntryCodeLimit, n, last.CodeCut)
	}
	if last.OutputCut == nil || last.OutputCut.Total != 100000 || utf8.RuneCountInString(last.Output) > api.EntryOutputLimit+100 ||
		!strings.HasPrefix(last.Output, "éé") || !strings.HasSuffix(last.Output, "é\n") || !utf8.ValidString(last.Output) {
		t.Errorf("output of 100,000 characters: kept %d, cut %+v", utf8.RuneCountInString(last.Output), last.OutputCut)
	}
	r.Close()
	// The file was compacted on the way and reads back the same.
	b, _ := os.ReadFile(filepath.Join(dir, "s.jsonl"))
	if lines := strings.Count(string(b), "\n"); lines > 5*api.RecordKeep {
		t.Errorf("the file holds %d lines for %d entries: not compacted", lines, api.RecordKeep)
	}
	r2, _ := Open(dir, "s")
	es2, dropped2, _ := r2.Since(0)
	if len(es2) != api.RecordKeep || dropped2 != 51 || es2[len(es2)-1].Output != last.Output {
		t.Errorf("after reopening: %d entries, dropped %d", len(es2), dropped2)
	}
}

func TestActivity(t *testing.T) {
	r, _ := Open(t.TempDir(), "s")
	defer r.Close()
	if a := r.Activity(agent); a != nil {
		t.Errorf("first contact with an empty record told %+v", a)
	}
	r.Activity(alice)
	r.Activity(other)

	// Alice's cell times out while the agent's calls go on.
	s1 := r.Add(cellBy(alice, "import time\nn = 10\nfor i in range(n):\n    print(i)\n    time.sleep(1)\n# the end\nprint('done')"))
	r.Output(s1, []byte("0\n"))
	if a := r.Activity(alice); a != nil {
		t.Errorf("alice was told her own cell: %+v", a)
	}
	a := r.Activity(agent)
	if a == nil || len(a.Entries) != 1 || a.Entries[0].Seq != s1 || a.Entries[0].Status != api.StatusRunning || len(a.Updated) != 0 {
		t.Fatalf("agent told %+v, want alice's running cell once", a)
	}
	if !strings.Contains(a.Entries[0].Code, "[… 2 more lines …]") {
		t.Errorf("code not cut to its first and last lines: %q", a.Entries[0].Code)
	}
	if a := r.Activity(agent); a != nil {
		t.Errorf("told again with nothing new: %+v", a)
	}
	// Its late output and end are told again, as an update.
	r.Output(s1, []byte("1\n2\n"))
	end(r, s1, api.StatusDone)
	a = r.Activity(agent)
	if a == nil || len(a.Entries) != 1 || len(a.Updated) != 1 || a.Entries[0].Status != api.StatusDone || a.Entries[0].Output != "0\n1\n2\n" {
		t.Fatalf("agent told %+v, want the update of alice's cell", a)
	}
	// Another connection with the same label is another client: it hears
	// of alice's cell once, and of the agent's.
	s2 := r.Add(cellBy(agent, "1+1"))
	end(r, s2, api.StatusDone)
	a = r.Activity(other)
	if a == nil || len(a.Entries) != 2 || a.Entries[0].Seq != s2 || a.Entries[1].Seq != s1 {
		t.Fatalf("other connection told %+v, want the agent's cell then alice's, newest first", a)
	}
	// Idle output is told to everyone.
	idle := r.Add(api.Entry{Kind: api.EntryIdle, Output: "tick\n", Started: time.Now()})
	for _, c := range []api.Client{alice, agent, other} {
		if a := r.Activity(c); a == nil || a.Entries[0].Seq != idle {
			t.Errorf("%+v was not told the idle output: %+v", c, a)
		}
	}
}

func TestActivityBounds(t *testing.T) {
	r, _ := Open(t.TempDir(), "s")
	defer r.Close()
	r.Activity(agent)
	for i := 0; i < 25; i++ {
		s := r.Add(cellBy(alice, fmt.Sprintf("print(%d)", i)))
		r.Output(s, []byte(strings.Repeat("x", 150)+"\n"))
		end(r, s, api.StatusDone)
	}
	big := r.Add(cellBy(alice, strings.Repeat("y = 1\n", 50)))
	r.Output(big, []byte(strings.Repeat(strings.Repeat("z", 500)+"\n", 40)))
	end(r, big, api.StatusDone)
	a := r.Activity(agent)
	if len(a.Entries) != api.ActivityEntries || len(a.More) != 26-api.ActivityEntries {
		t.Fatalf("told %d entries and %d more, want %d and %d", len(a.Entries), len(a.More), api.ActivityEntries, 26-api.ActivityEntries)
	}
	if a.Entries[0].Seq != big {
		t.Errorf("newest first: got seq %d first", a.Entries[0].Seq)
	}
	size := 0
	for _, e := range a.Entries {
		size += utf8.RuneCountInString(e.Code + e.Output + e.Display + e.Text)
		for _, l := range strings.Split(e.Output, "\n") {
			if utf8.RuneCountInString(l) > lineWidth {
				t.Errorf("a line of %d characters was told", utf8.RuneCountInString(l))
			}
		}
	}
	if size > api.ActivityChars {
		t.Errorf("told %d characters, over %d", size, api.ActivityChars)
	}
	if !strings.HasPrefix(a.More[0], "s#") {
		t.Errorf("more listed as %q, want ids", a.More)
	}
}

// FuzzEntryOutput prints anything, in reads of any size, into a cell's
// entry: its output stays valid, plain and within the entry's bound, and
// its cut counts every character.
func FuzzEntryOutput(f *testing.F) {
	f.Add([]byte("hello\n\x1b[31mred\x1b[0m\r\n"), uint16(3), uint8(1))
	f.Add([]byte("\xff\xfe\xe4\xb8"), uint16(1), uint8(200))
	f.Add([]byte(strings.Repeat("é", 3000)), uint16(977), uint8(10))
	f.Fuzz(func(t *testing.T, chunk []byte, step uint16, repeat uint8) {
		r, _ := Open(t.TempDir(), "f")
		defer r.Close()
		seq := r.Add(cellBy(alice, "x"))
		n := int(step)%4096 + 1
		var stream []byte
		for k := 0; k < int(repeat)%64+1; k++ {
			for i := 0; i < len(chunk); i += n {
				r.Output(seq, chunk[i:min(i+n, len(chunk))])
			}
			stream = append(stream, chunk...)
		}
		total := utf8.RuneCount(stream)
		e, _ := r.Get(seq)
		if !utf8.ValidString(e.Output) {
			t.Fatalf("invalid UTF-8 in %q", e.Output)
		}
		if utf8.RuneCountInString(e.Output) > api.EntryOutputLimit+64 {
			t.Fatalf("output of %d characters kept %d", total, utf8.RuneCountInString(e.Output))
		}
		if e.OutputCut != nil && e.OutputCut.Total != total {
			t.Fatalf("cut says %d characters, %d were printed", e.OutputCut.Total, total)
		}
		for _, c := range e.Output {
			if c == 0x1b {
				t.Fatalf("an escape sequence was kept: %q", e.Output)
			}
		}
	})
}

// TestPositionsAcrossOpens: a client's position outlives the daemon, so
// after a restart it is told what it missed, not a count of earlier
// entries; a client never seen before still starts with the count.
func TestPositionsAcrossOpens(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	end(r, r.Add(cellBy(agent, "a = 1")), api.StatusDone)
	r.Activity(alice) // first contact
	end(r, r.Add(cellBy(agent, "b = 2")), api.StatusDone)
	if a := r.Activity(alice); a == nil || len(a.Entries) != 1 || a.Entries[0].Code != "b = 2" {
		t.Fatalf("before the restart: %+v", a)
	}
	r.Close()
	if fi, err := os.Stat(filepath.Join(dir, "s.positions.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("positions file: %v, %v; want it, mode 0600", fi, err)
	}

	r2, err := Open(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	end(r2, r2.Add(cellBy(agent, "c = 3")), api.StatusDone)
	a := r2.Activity(alice)
	if a == nil || a.Earlier != 0 || len(a.Entries) != 1 || a.Entries[0].Code != "c = 3" {
		t.Errorf("after the restart alice was told %+v, want just c = 3", a)
	}
	if a := r2.Activity(other); a == nil || !a.First || a.Earlier != 0 || len(a.Entries) != 3 || a.Entries[0].Code != "c = 3" {
		t.Errorf("a client first seen after the restart was told %+v, want the 3 entries there", a)
	}
}

// TestFirstContact: a client new to a session is told what is there,
// the latest entries (any kind, from anyone else) within the tight
// bounds of a first contact, each cut to head and tail with the cut
// said, and a count of all the others.
func TestFirstContact(t *testing.T) {
	r, _ := Open(t.TempDir(), "s")
	defer r.Close()
	r.Add(api.Entry{Kind: api.EntryNote, Who: "alice", How: "cli", Note: &api.Note{Kind: api.NoteCreated, Session: "s"}, Started: time.Now()})
	for i := 0; i < 10; i++ {
		s := r.Add(cellBy(alice, fmt.Sprintf("print(%d)", i)))
		r.Output(s, []byte(fmt.Sprintf("%d\n", i)))
		end(r, s, api.StatusDone)
	}
	big := r.Add(cellBy(alice, "for i in range(5000): print('line', i)"))
	for i := 0; i < 5000; i++ {
		r.Output(big, []byte(fmt.Sprintf("line %d\n", i)))
	}
	end(r, big, api.StatusDone)
	r.Add(api.Entry{Kind: api.EntryNote, Note: &api.Note{Kind: api.NoteEnded, Session: "s"}, Started: time.Now()})
	mine := r.Add(cellBy(agent, "x"))
	end(r, mine, api.StatusDone)

	a := r.Activity(agent)
	if a == nil || !a.First || len(a.Entries) != api.FirstEntries {
		t.Fatalf("first contact told %+v, want the %d latest entries", a, api.FirstEntries)
	}
	if a.Earlier != 13-api.FirstEntries {
		t.Errorf("earlier = %d, want every other entry from another (cells and notes): %d", a.Earlier, 13-api.FirstEntries)
	}
	if a.Entries[0].Kind != api.EntryNote || a.Entries[1].Seq != big {
		t.Errorf("not newest first, without the agent's own cell: %+v", a.Entries)
	}
	total := 0
	for _, e := range a.Entries {
		total += size(e) + entryOverhead
	}
	if total > api.FirstChars+minTold {
		t.Errorf("first contact told %d characters, the bound is %d", total, api.FirstChars)
	}
	b := a.Entries[1]
	if b.OutputCut == nil || b.OutputCut.Total < 5000*8 || b.OutputCut.File == "" {
		t.Fatalf("the big cell's cut: %+v, want the whole count and the whole output's file", b.OutputCut)
	}
	if !strings.HasPrefix(b.Output, "line 0\n") || !strings.HasSuffix(b.Output, "line 4999\n") || !strings.Contains(b.Output, "\n[… ") {
		t.Errorf("the big cell's output is not its head and tail in whole lines: %q", b.Output)
	}
	for _, l := range strings.Split(b.Output, "\n") {
		if l != "" && !strings.HasPrefix(l, "line ") && !strings.HasPrefix(l, "[… ") {
			t.Errorf("a line cut in the middle: %q", l)
		}
	}
	if a := r.Activity(agent); a != nil {
		t.Errorf("told again: %+v", a)
	}
	// A client that made the session and ran everything is told nothing.
	r2, _ := Open(t.TempDir(), "t")
	defer r2.Close()
	end(r2, r2.Add(cellBy(alice, "1")), api.StatusDone)
	if a := r2.Activity(alice); a != nil {
		t.Errorf("a client alone in its session was told %+v", a)
	}
}

// TestEntryCutAtLines: an entry too long for the record keeps its head
// and tail in whole lines, and its whole output in a file named by the
// cut, removed when the entry is dropped.
func TestEntryCutAtLines(t *testing.T) {
	dir := t.TempDir()
	r, _ := Open(dir, "s")
	defer r.Close()
	s := r.Add(cellBy(alice, "loop"))
	var whole strings.Builder
	for i := 0; i < 3000; i++ {
		l := fmt.Sprintf("line %d\n", i)
		whole.WriteString(l)
		r.Output(s, []byte(l))
	}
	end(r, s, api.StatusDone)
	e, _ := r.Get(s)
	if e.OutputCut == nil || e.OutputCut.File == "" {
		t.Fatalf("cut %+v, want the whole output's file", e.OutputCut)
	}
	if b, err := os.ReadFile(e.OutputCut.File); err != nil || string(b) != whole.String() {
		t.Errorf("the whole output's file: %v, %d bytes, want %d", err, len(b), whole.Len())
	}
	head, tail, _ := strings.Cut(e.Output, "\n[… ")
	for _, l := range strings.Split(head, "\n") {
		if !strings.HasPrefix(l, "line ") || !strings.Contains(whole.String(), l+"\n") {
			t.Errorf("the head ends in the middle of a line: %q", l)
		}
	}
	tl := strings.SplitN(tail, "\n", 2)[1]
	if !strings.HasPrefix(tl, "line ") || !strings.Contains(whole.String(), "\n"+strings.SplitN(tl, "\n", 2)[0]+"\n") {
		t.Errorf("the tail starts in the middle of a line: %q", tl[:20])
	}
	for i := 0; i < api.RecordKeep; i++ {
		r.Add(api.Entry{Kind: api.EntryNote, Text: "n"})
	}
	if _, err := os.Stat(e.OutputCut.File); !os.IsNotExist(err) {
		t.Errorf("the dropped entry's output file is still there: %v", err)
	}
}

// TestStream: a follower reads a live entry's output as it grows, in
// whole lines from an offset, the unfinished line apart, and is told
// what it missed when it falls behind the window.
func TestStream(t *testing.T) {
	r, _ := Open(t.TempDir(), "s")
	defer r.Close()
	s := r.Add(cellBy(alice, "loop"))
	r.Output(s, []byte("a\nb"))
	c, final, ok := r.Stream(s, 0)
	if !ok || final || c.Text != "a\n" || c.Pending != "b" || c.Offset != 0 || c.ID != "s#"+fmt.Sprint(s) {
		t.Fatalf("stream %+v final %v ok %v", c, final, ok)
	}
	r.Output(s, []byte("\r\x1b[1mc\x1b[0m\n"))
	c, _, _ = r.Stream(s, 2)
	if c.Text != "c\n" || c.Offset != 2 || c.Pending != "" {
		t.Errorf("after a rewritten line: %+v", c)
	}
	big := strings.Repeat("é", 99) + "\n"
	for i := 0; i < 2*streamWindow/len(big); i++ {
		r.Output(s, []byte(big))
	}
	c, _, _ = r.Stream(s, 4)
	if c.Skipped == 0 || c.Offset != 4+c.Skipped || c.File == "" || !strings.HasPrefix(c.Text, "é") {
		t.Errorf("a follower behind the window: skipped %d offset %d file %q", c.Skipped, c.Offset, c.File)
	}
	r.Output(s, []byte("end"))
	end(r, s, api.StatusDone)
	from := c.Offset
	var got string
	for {
		c, final, ok = r.Stream(s, from)
		if !ok {
			t.Fatal("the finished entry's stream is gone at once")
		}
		got += c.Text
		from = c.Offset + utf8.RuneCountInString(c.Text)
		if final {
			break
		}
	}
	if !strings.HasSuffix(got, big+"end") {
		t.Errorf("the stream's end: %q", got[max(0, len(got)-20):])
	}
}

// A cut error's whole text is kept beside its entry, 0600, for as long
// as the entry is; a link planted where it goes is refused, not followed.
func TestWholeError(t *testing.T) {
	dir := t.TempDir()
	r, _ := Open(dir, "s")
	defer r.Close()
	seq := r.Add(cellBy(alice, "raise"))
	path, err := r.SaveWholeError(seq, "ValueError: all of it\n")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "ValueError: all of it\n" {
		t.Errorf("%s holds %q", path, b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v", path, fi.Mode().Perm())
	}
	r.Update(seq, func(e *api.Entry) {
		e.Status = api.StatusError
		e.Error = &api.CellError{Type: "ValueError", Message: "all", MessageCut: &bound.Cut{Total: 10, Head: 1, Tail: 2, File: path}}
	})
	for i := 0; i < api.RecordKeep; i++ {
		end(r, r.Add(cellBy(alice, "1")), api.StatusDone)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the whole error of a dropped entry is still there: %v", err)
	}

	target := filepath.Join(t.TempDir(), "target")
	os.WriteFile(target, []byte("precious"), 0o644)
	seq = r.Add(cellBy(alice, "raise"))
	os.Symlink(target, r.errorPath(seq))
	if _, err := r.SaveWholeError(seq, "ValueError\n"); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("SaveWholeError through a planted link: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "precious" {
		t.Errorf("the link's target now holds %q", b)
	}
}

// A daemon taking a session up from its holder may be told again a
// result an earlier daemon recorded: the runtime's files are gone, taken
// over already, and taking them over again gives the same files.
func TestTakingOverTwice(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seq := r.Add(cellBy(alice, "plot()"))
	spool := t.TempDir()
	for _, k := range []struct {
		name string
		keep func(src string) (string, error)
	}{
		{"figure", func(src string) (string, error) { return r.KeepRich(seq, 1, src, ".png") }},
		{"value", func(src string) (string, error) { return r.KeepWholeValue(seq, src) }},
		{"error", func(src string) (string, error) { return r.KeepWholeError(seq, src) }},
	} {
		src := filepath.Join(spool, k.name)
		if err := os.WriteFile(src, []byte("whole "+k.name), 0o600); err != nil {
			t.Fatal(err)
		}
		first, err := k.keep(src)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		again, err := k.keep(src)
		if err != nil || again != first {
			t.Errorf("%s taken over again: %q, %v; want %q", k.name, again, err, first)
		}
		if b, _ := os.ReadFile(first); string(b) != "whole "+k.name {
			t.Errorf("%s: the file holds %q", k.name, b)
		}
	}
}

// A whole value's file goes when its entry leaves the record: one this
// record saved, and one saved before a new daemon opened the record.
func TestWholeValueGoesWithItsEntry(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	keep := func(r *Record) string {
		seq := r.Add(cellBy(alice, "big()"))
		src := filepath.Join(t.TempDir(), "value")
		os.WriteFile(src, []byte("whole value"), 0o600)
		path, err := r.KeepWholeValue(seq, src)
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	before := keep(r)
	r.Close()
	r, err = Open(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	after := keep(r)
	for _, p := range []string{before, after} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the whole value is not kept while its entry is: %v", err)
		}
	}
	for i := 0; i < api.RecordKeep; i++ {
		r.Add(cellBy(alice, "1+1"))
	}
	for _, p := range []string{before, after} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s outlived its entry: %v", p, err)
		}
	}
}
