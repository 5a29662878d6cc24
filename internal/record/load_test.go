package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
)

// cellsFile writes a record of n finished cells, the first with an
// output too long for its entry (so it has a whole-output file), and
// returns the file's path and the whole-output file's.
func cellsFile(t testing.TB, dir string, n int) (string, string) {
	r, _ := Open(dir, "s")
	long := ""
	for i := 1; i <= n; i++ {
		seq := r.Add(cellBy(alice, fmt.Sprintf("cell %d", i)))
		if i == 1 {
			r.Output(seq, []byte(strings.Repeat("x\n", api.EntryOutputLimit)))
		}
		end(r, seq, api.StatusDone)
		if i == 1 {
			e, _ := r.Get(seq)
			long = e.OutputCut.File
		}
	}
	r.Close()
	return filepath.Join(dir, "s.jsonl"), long
}

// line is a record line of entry seq, as the record writes it.
func line(seq int, code string) string {
	b, _ := json.Marshal(api.Entry{Seq: seq, ID: fmt.Sprintf("s#%d", seq), Rev: 1, Kind: api.EntryCell, Session: "s", Code: code, Status: api.StatusDone})
	return string(b) + "\n"
}

// TestLoadLeavesOutBadLines: a line the loader cannot take is left out,
// said in a note entry with the file as it was kept aside, and the lines
// after it load; a seq that does not follow numbers and drops nothing;
// no seq is given twice; the next load reads a clean file.
func TestLoadLeavesOutBadLines(t *testing.T) {
	huge := `{"seq":4,"code":"` + strings.Repeat("a", maxLine) + `"}` + "\n"
	cases := []struct {
		name   string
		insert string // after entry 3 of 6
		tail   string // after the last line
		why    []string
		next   int // the seq the note gets
	}{
		{"garbage", "not json at all\n", "", []string{api.UnreadMalformed}, 7},
		{"a line cut off in the middle", `{"seq":2,"id":"s#2","rev":7,"ki` + "\n", "", []string{api.UnreadMalformed}, 7},
		{"a line too long", huge, "", []string{api.UnreadLong}, 7},
		{"a huge seq in the middle", line(2147483647, "planted"), "", []string{api.UnreadSeq}, 7},
		{"a huge seq at the end", "", line(2147483647, "planted"), []string{api.UnreadSeq}, 7},
		{"a seq past the next", line(9, "planted"), "", []string{api.UnreadSeq}, 7},
		{"no seq", line(0, "planted"), line(-3, "planted"), []string{api.UnreadMalformed, api.UnreadMalformed}, 7},
		{"a new entry cut off by a crash", "", `{"seq":7,"id":"s#7","rev":1,"kind":"ce`, []string{api.UnreadMalformed}, 8},
		{"an unreadable line at the end", "", "\x00\x01garbage", []string{api.UnreadMalformed}, 8},
		{"blank lines", "\n\n", "\n", nil, 7},
		{"two bad lines", "{\n", line(1<<60, "planted"), []string{api.UnreadMalformed, api.UnreadSeq}, 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, whole := cellsFile(t, dir, 3)
			var b bytes.Buffer
			old, _ := os.ReadFile(path)
			b.Write(old)
			b.WriteString(tc.insert)
			for seq := 4; seq <= 6; seq++ {
				b.WriteString(line(seq, fmt.Sprintf("cell %d", seq)))
			}
			b.WriteString(tc.tail)
			os.WriteFile(path, b.Bytes(), 0o600)

			r, err := Open(dir, "s")
			es, dropped, _ := r.Since(0)
			if dropped != 0 || len(es) < 6 {
				t.Fatalf("%d entries, %d dropped; want 6 cells and the note", len(es), dropped)
			}
			for i, e := range es[:6] {
				if e.Seq != i+1 || e.Code != fmt.Sprintf("cell %d", i+1) {
					t.Errorf("entry %d: seq %d, code %q", i+1, e.Seq, e.Code)
				}
			}
			if _, serr := os.Stat(whole); serr != nil {
				t.Errorf("entry 1's whole output: %v", serr)
			}
			if tc.why == nil {
				if err != nil || len(es) != 6 {
					t.Errorf("a clean file: %v, %d entries", err, len(es))
				}
				if seq := r.Add(cellBy(alice, "next")); seq != 7 {
					t.Errorf("the next entry got seq %d, want 7", seq)
				}
				r.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), "left out") {
				t.Errorf("Open's error (for the log): %v", err)
			}
			note := es[len(es)-1]
			if note.Seq != tc.next || note.Note == nil || note.Note.Kind != api.NoteUnread || note.Note.Count != len(tc.why) {
				t.Fatalf("the note: %+v; want an unread note with seq %d", note, tc.next)
			}
			for i, l := range note.Note.Lines {
				if l.Why != tc.why[i] {
					t.Errorf("line %d: %q, want %q", l.Line, l.Why, tc.why[i])
				}
			}
			if aside, _ := os.ReadFile(note.Note.File); !bytes.Equal(aside, b.Bytes()) {
				t.Errorf("the file kept aside (%s) holds %d bytes, the file had %d", note.Note.File, len(aside), b.Len())
			}
			next := r.Add(cellBy(alice, "next"))
			if next != tc.next+1 {
				t.Errorf("the next cell got seq %d, want %d", next, tc.next+1)
			}
			r.Close()

			// The fresh file reads back whole, with nothing to say.
			r2, err := Open(dir, "s")
			es2, _, n2 := r2.Since(0)
			if err != nil || len(es2) != len(es)+1 || n2 != next+1 {
				t.Errorf("read again: %v, %d entries, next %d", err, len(es2), n2)
			}
			r2.Close()
		})
	}
}

// TestHugeSeqDropsNothing is issue 33's second case: a line with seq
// 2147483647 appended to a record made it drop every entry and remove
// their output files.
func TestHugeSeqDropsNothing(t *testing.T) {
	dir := t.TempDir()
	path, whole := cellsFile(t, dir, api.RecordKeep)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":2147483647,"id":"s#2147483647","kind":"note","text":"planted"}` + "\n")
	f.Close()
	r, _ := Open(dir, "s")
	defer r.Close()
	es, dropped, next := r.Since(0)
	// The note took the place of the first entry, which went as the
	// record's 301st would: its output file with it.
	if dropped != 1 || len(es) != api.RecordKeep || next != api.RecordKeep+2 {
		t.Errorf("%d entries, %d dropped, next %d; want entries 2 to %d and the note", len(es), dropped, next, api.RecordKeep+1)
	}
	if _, err := os.Stat(whole); err == nil {
		t.Errorf("entry 1's output file is left though its entry was dropped")
	}

	dir = t.TempDir()
	path, whole = cellsFile(t, dir, 5)
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":2147483647}` + "\n")
	f.Close()
	r2, _ := Open(dir, "s")
	defer r2.Close()
	es, dropped, next = r2.Since(0)
	if dropped != 0 || len(es) != 6 || next != 7 {
		t.Errorf("%d entries, %d dropped, next %d; want 5 cells and the note", len(es), dropped, next)
	}
	if _, err := os.Stat(whole); err != nil {
		t.Errorf("entry 1's output file: %v", err)
	}
}

// TestGarbageDropsNothing: lines the loader cannot read move the next
// seq on (each may have been a new entry), but never drop an entry:
// 400 unreadable lines after 5 entries leave the 5 and their files.
func TestGarbageDropsNothing(t *testing.T) {
	dir := t.TempDir()
	path, whole := cellsFile(t, dir, 5)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(strings.Repeat("}\n", 400))
	f.Close()
	r, _ := Open(dir, "s")
	defer r.Close()
	es, dropped, next := r.Since(0)
	if dropped != 0 || len(es) != 6 || es[5].Seq != 406 || next != 407 || es[5].Note.Count != 400 || len(es[5].Note.Lines) != api.RecordLinesTold {
		t.Errorf("%d entries, %d dropped, next %d; want 5 cells and the note (seq 406)", len(es), dropped, next)
	}
	if _, err := os.Stat(whole); err != nil {
		t.Errorf("entry 1's output file: %v", err)
	}
	// Entries after a gap are found, and changed, as any.
	seq := r.Add(cellBy(alice, "after"))
	end(r, seq, api.StatusError)
	if e, ok := r.Get(seq); !ok || e.Status != api.StatusError {
		t.Errorf("the entry after the gap: %v %+v", ok, e)
	}
}

// TestCrashCutLine: a line a crash cut off (no newline) does not swallow
// the line written after it.
func TestCrashCutLine(t *testing.T) {
	dir := t.TempDir()
	path, _ := cellsFile(t, dir, 2)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":2,"id":"s#2","rev":9`)
	f.Close()
	// Were it not kept aside, the next line would have to start afresh.
	linkFile = func(string, string) error { return os.ErrPermission }
	r, err := Open(dir, "s")
	linkFile = os.Link
	if err == nil {
		t.Fatal("no error for the line cut off")
	}
	es, _, _ := r.Since(0)
	if n := es[len(es)-1].Note; n == nil || n.File != "" || n.Err == "" {
		t.Fatalf("the note: %+v; want it to say the file could not be kept aside", n)
	}
	r.Add(cellBy(alice, "after"))
	r.Close()
	r2, _ := Open(dir, "s")
	defer r2.Close()
	es, _, next := r2.Since(0)
	if len(es) != 5 || es[3].Code != "after" || next != 6 {
		t.Errorf("%d entries, next %d; want cells 1, 2, the note, the cell after it, and a second note", len(es), next)
	}
}

// TestSeqBeforeTheFirst: a file starts where its last compaction left
// it; a line before its first entry is left out.
func TestSeqBeforeTheFirst(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(line(500, "a")+line(501, "b")+line(2, "planted")+line(502, "c")), 0o600)
	r, _ := Open(dir, "s")
	defer r.Close()
	es, dropped, next := r.Since(0)
	if len(es) != 4 || dropped != 499 || next != 504 || es[2].Code != "c" {
		t.Fatalf("%d entries, dropped %d, next %d", len(es), dropped, next)
	}
	if l := es[3].Note.Lines[0]; l.Why != api.UnreadSeq || l.Seq != 2 || l.After != 0 || l.Line != 3 {
		t.Errorf("the line left out: %+v", l)
	}
}

// FuzzLoad: whatever bytes a record's file holds between good lines,
// the loader does not panic, the lines after them load, and no seq is
// given twice.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("garbage"))
	f.Add([]byte(`{"seq":2147483647}`))
	f.Add([]byte(`{"seq":4,"kind":"cell","code":"x"}` + "\n" + `{"seq":5`))
	f.Add([]byte(`{"seq":99999999999999999999999}`))
	f.Add([]byte(`{"seq":3,"answers":[{"prompt":"` + strings.Repeat("p", 300) + `","text":"` + strings.Repeat("é", 2000) + `"}]}`))
	f.Add([]byte("\x00\n\n\r\n{}\n[]\nnull\n{\"seq\":-1}"))
	f.Fuzz(func(t *testing.T, junk []byte) {
		dir := t.TempDir()
		var b bytes.Buffer
		for seq := 1; seq <= 3; seq++ {
			b.WriteString(line(seq, fmt.Sprintf("cell %d", seq)))
		}
		b.Write(junk)
		b.WriteString("\n")
		for seq := 4; seq <= 6; seq++ {
			b.WriteString(line(seq, fmt.Sprintf("cell %d", seq)))
		}
		os.WriteFile(filepath.Join(dir, "s.jsonl"), b.Bytes(), 0o600)
		r, _ := Open(dir, "s")
		defer r.Close()
		es, _, next := r.Since(0)
		seen := map[int]bool{}
		for _, e := range es {
			if seen[e.Seq] || e.Seq >= next {
				t.Fatalf("entry %d twice, or not before the next (%d)", e.Seq, next)
			}
			seen[e.Seq] = true
		}
		for seq := 4; seq <= 6 && len(junk) < 2900; seq++ { // more could hold 300 new entries
			if e, ok := r.Get(seq); !ok || e.Code != fmt.Sprintf("cell %d", seq) {
				t.Fatalf("entry %d after the junk: %v %+v", seq, ok, e)
			}
		}
		if seq := r.Add(cellBy(alice, "new")); seen[seq] || seq < next {
			t.Fatalf("a new entry got seq %d, given before (next was %d)", seq, next)
		}
	})
}
