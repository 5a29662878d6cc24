package record

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
)

// answersIn reads an entry's file of answers.
func answersIn(t *testing.T, path string) []api.Answer {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var as []api.Answer
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var a api.Answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		as = append(as, a)
	}
	return as
}

// TestAnswersBounded is issue 33's first case: 450 answers of 10,000
// characters each grew a record to 1 GB, in lines of 4.5 MB. An entry
// keeps the first and last answers, each cut, and the whole of every
// answer goes to a file; the record's file stays small.
func TestAnswersBounded(t *testing.T) {
	cases := []struct {
		name    string
		answers int
		text    int // characters in each answer
		prompt  int
		head    int // answers kept
		cut     bool
	}{
		{"a few short answers", 3, 10, 5, 3, false},
		{"as many as an entry keeps", 20, 100, 10, 20, false},
		{"one more than it keeps", 21, 100, 10, 20, true},
		{"one long answer", 1, 5 << 20, 10, 1, true},
		{"one long prompt", 1, 10, 3000, 1, true},
		{"450 answers of 10,000 characters", 450, 10000, 20, 20, true},
		{"2,000 pdb steps", 2000, 1, 6, 20, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r, _ := Open(dir, "s")
			seq := r.Add(cellBy(alice, "for i in range(n): input()"))
			line := 0
			for i := 0; i < tc.answers; i++ {
				text := fmt.Sprintf("%d:", i) + strings.Repeat("é", tc.text)
				r.Answer(seq, api.Answer{Prompt: strings.Repeat("?", tc.prompt), Text: text, Who: "alice", How: "cli", At: time.Now()})
				r.mu.Lock()
				b, _ := json.Marshal(r.getLocked(seq))
				r.mu.Unlock()
				line = max(line, len(b))
			}
			end(r, seq, api.StatusDone)
			e, _ := r.Get(seq)
			if len(e.Answers) != tc.head || (e.AnswersCut != nil) != tc.cut {
				t.Fatalf("%d answers kept, cut %+v; want %d, cut %v", len(e.Answers), e.AnswersCut, tc.head, tc.cut)
			}
			// Each update writes one line of the bounded entry.
			if limit := 4 * (api.EntryCodeLimit + api.EntryOutputLimit + (api.EntryAnswersHead+api.EntryAnswersTail)*(api.EntryAnswerLimit+api.EntryPromptLimit+2*markerRoom+200)); line > limit {
				t.Errorf("an entry's line took %d bytes, over %d", line, limit)
			}
			for i, a := range e.Answers {
				k := i
				if i >= api.EntryAnswersHead && tc.answers > len(e.Answers) {
					k = tc.answers - len(e.Answers) + i
				}
				if !strings.HasPrefix(a.Text, fmt.Sprintf("%d:", k)) || utf8.RuneCountInString(a.Text) > api.EntryAnswerLimit+markerRoom ||
					utf8.RuneCountInString(a.Prompt) > api.EntryPromptLimit+markerRoom {
					t.Errorf("answer %d kept as %.20q… (%d characters, prompt %d)", i, a.Text, utf8.RuneCountInString(a.Text), utf8.RuneCountInString(a.Prompt))
				}
				if (a.TextCut != nil) != (tc.text+3 > api.EntryAnswerLimit) {
					t.Errorf("answer %d's cut: %+v", i, a.TextCut)
				}
			}
			if tc.cut {
				c := e.AnswersCut
				if c.Total != tc.answers || c.Head+c.Tail != len(e.Answers) || c.File != r.answersPath(seq) {
					t.Errorf("the cut: %+v", c)
				}
				whole := answersIn(t, c.File)
				if len(whole) != tc.answers {
					t.Fatalf("the file holds %d answers, %d were given", len(whole), tc.answers)
				}
				for i, a := range whole {
					if a.Text != fmt.Sprintf("%d:", i)+strings.Repeat("é", tc.text) || len(a.Prompt) != tc.prompt || a.TextCut != nil || a.Who != "alice" {
						t.Fatalf("answer %d in the file: %.40q, prompt of %d, cut %v", i, a.Text, len(a.Prompt), a.TextCut)
					}
				}
			}
			r.Close()
			if fi, _ := os.Stat(filepath.Join(dir, "s.jsonl")); fi.Size() > 8<<20 {
				t.Errorf("the record's file holds %d bytes for one entry", fi.Size())
			}
			r2, _ := Open(dir, "s")
			defer r2.Close()
			if e2, _ := r2.Get(seq); len(e2.Answers) != len(e.Answers) || fmt.Sprint(e2.AnswersCut) != fmt.Sprint(e.AnswersCut) || e2.Status != api.StatusDone {
				t.Errorf("read again: %d answers, cut %v, status %s", len(e2.Answers), e2.AnswersCut, e2.Status)
			}
		})
	}
}

// TestRecordFileBounded: however often entries change, the record's file
// stays within a few times what its entries take: 10,000 answers of 100
// bytes made an 804 MB record.
func TestRecordFileBounded(t *testing.T) {
	dir := t.TempDir()
	r, _ := Open(dir, "s")
	defer r.Close()
	for i := 0; i < api.RecordKeep; i++ {
		end(r, r.Add(cellBy(alice, "1")), api.StatusDone)
	}
	seq := r.Add(cellBy(alice, "while True: input()"))
	peak := int64(0)
	for i := 0; i < 10000; i++ {
		r.Answer(seq, api.Answer{Prompt: "> ", Text: strings.Repeat("a", 100), At: time.Now()})
		r.Output(seq, []byte("> "+strings.Repeat("a", 100)+"\n"))
		if i%100 == 0 {
			fi, _ := os.Stat(filepath.Join(dir, "s.jsonl"))
			peak = max(peak, fi.Size())
		}
	}
	r.mu.Lock()
	live := r.live
	r.mu.Unlock()
	if limit := 4*live + compactSlack + 64<<10; peak > limit {
		t.Errorf("the record's file reached %d bytes; its entries take %d", peak, live)
	}
	if peak > 6<<20 {
		t.Errorf("the record's file reached %d bytes for %d entries", peak, api.RecordKeep+1)
	}
}

// TestLegacyAnswersBounded: a record written before answers were bounded
// (one entry with 3,000 answers) loads bounded, its answers whole in the
// entry's file, and the file is written afresh.
func TestLegacyAnswersBounded(t *testing.T) {
	dir := t.TempDir()
	e := api.Entry{Seq: 1, ID: "s#1", Rev: 3001, Kind: api.EntryCell, Session: "s", Code: "input()", Status: api.StatusDone}
	for i := 0; i < 3000; i++ {
		e.Answers = append(e.Answers, api.Answer{Prompt: "? ", Text: fmt.Sprintf("answer %d", i)})
	}
	b, _ := json.Marshal(e)
	var file strings.Builder
	for i := 0; i < 50; i++ {
		file.Write(b)
		file.WriteByte('\n')
	}
	os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(file.String()), 0o600)
	r, err := Open(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, _ := r.Get(1)
	if len(got.Answers) != api.EntryAnswersHead+api.EntryAnswersTail || got.AnswersCut == nil || got.AnswersCut.Total != 3000 ||
		got.Answers[api.EntryAnswersHead].Text != "answer 2985" {
		t.Fatalf("%d answers, cut %+v", len(got.Answers), got.AnswersCut)
	}
	if whole := answersIn(t, got.AnswersCut.File); len(whole) != 3000 || whole[2999].Text != "answer 2999" {
		t.Errorf("the file holds %d answers", len(whole))
	}
	if fi, _ := os.Stat(filepath.Join(dir, "s.jsonl")); fi.Size() > 64<<10 {
		t.Errorf("the record's file is %d bytes: not written afresh", fi.Size())
	}
	// Dropped, the entry takes its file of answers with it.
	for i := 0; i < api.RecordKeep; i++ {
		r.Add(api.Entry{Kind: api.EntryNote, Text: "n"})
	}
	if _, err := os.Stat(got.AnswersCut.File); !os.IsNotExist(err) {
		t.Errorf("the answers of a dropped entry: %v", err)
	}
}

// TestPlantedRichPath: a figure's file a record line names is removed
// with its entry only if the record made it for that entry.
func TestPlantedRichPath(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "precious.png")
	os.WriteFile(outside, []byte("png"), 0o600)
	os.Mkdir(filepath.Join(dir, "output"), 0o700)
	rel, _ := filepath.Rel(filepath.Join(dir, "output"), outside)
	e := api.Entry{Seq: 1, ID: "s#1", Kind: api.EntryCell, Rich: []api.Rich{{File: filepath.Join(dir, "output") + "/" + rel}}}
	b, _ := json.Marshal(e)
	os.WriteFile(filepath.Join(dir, "s.jsonl"), append(b, '\n'), 0o600)
	r, _ := Open(dir, "s")
	defer r.Close()
	for i := 0; i < api.RecordKeep; i++ {
		r.Add(api.Entry{Kind: api.EntryNote, Text: "n"})
	}
	if _, ok := r.Get(1); ok {
		t.Fatal("entry 1 was not dropped")
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("a file outside the record's output, named by a planted line: %v", err)
	}
}
