// The reliability suite's record cases (issue 33, items 1 and 2): a cell
// answered hundreds of times with long answers, one huge answer, and
// record files with lines planted in them, each across a daemon that
// stops and a new one that reads the record back.

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

// recordSection is the reliability report's section for the record.
const recordSection = "7 Record"

// recEntry is a record entry as history --json gives it, with what these
// tests check.
type recEntry struct {
	Seq     int    `json:"seq"`
	Kind    string `json:"kind"`
	Code    string `json:"code"`
	Output  string `json:"output"`
	Status  string `json:"status"`
	Answers []struct {
		Prompt  string `json:"prompt"`
		Text    string `json:"text"`
		TextCut *cut   `json:"text_cut"`
	} `json:"answers"`
	AnswersCut *cut `json:"answers_cut"`
	OutputCut  *cut `json:"output_cut"`
	Note       *struct {
		Kind  string `json:"kind"`
		Count int    `json:"count"`
		File  string `json:"file"`
		Text  string `json:"text"`
		Lines []struct {
			Line int    `json:"line"`
			Why  string `json:"why"`
			Seq  int    `json:"seq"`
		} `json:"lines"`
	} `json:"note"`
}

// record is a session's whole record as history --json gives it.
func (e *env) record(t *testing.T, name string) (entries []recEntry, dropped, next int) {
	t.Helper()
	out, stderr, code := e.run("history", name, "--json")
	if code != 0 {
		t.Fatalf("history %s: exit %d: %s", name, code, stderr)
	}
	var r struct {
		Entries []recEntry `json:"entries"`
		Dropped int        `json:"dropped"`
		Next    int        `json:"next"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("history --json: %v: %s", err, clip(out))
	}
	return r.Entries, r.Dropped, r.Next
}

// answer answers the named session's question through the API, as
// POST /v1/sessions/NAME/input, and returns the reply's status and
// output, or the HTTP status of a refusal.
func (e *env) answer(t *testing.T, c *http.Client, name, text string) (status, output string, refused int) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"text": text, "client": map[string]string{"who": "e2e", "how": "api"}})
	resp, err := c.Post("http://polyrepl/v1/sessions/"+name+"/input", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("input: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", string(b), resp.StatusCode
	}
	var r struct {
		Status string `json:"status"`
		Output string `json:"output"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("input's reply: %v: %s", err, clip(string(b)))
	}
	return r.Status, r.Output, 0
}

// stopKeeping stops the daemon, leaving its sessions to their holders.
func (e *env) stopKeeping(t *testing.T) {
	t.Helper()
	daemon := e.status().PID
	e.must(0, "stop", "--keep-sessions")
	if !waitFor(10*time.Second, func() bool { return !proctest.Alive(daemon) }) {
		t.Fatalf("the daemon is still running after stop --keep-sessions")
	}
}

// wantFreshSeqs checks that a record gives no seq twice, in order.
func wantFreshSeqs(t *testing.T, es []recEntry) {
	t.Helper()
	for i := 1; i < len(es); i++ {
		if es[i].Seq <= es[i-1].Seq {
			t.Errorf("entry %d follows entry %d: a seq given twice or out of order", es[i].Seq, es[i-1].Seq)
		}
	}
}

// answersIn counts the answers an entry's file of answers holds, and
// checks each against want.
func answersIn(t *testing.T, path string, want func(i int, text string) bool) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the file of answers: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	n := 0
	for ; sc.Scan(); n++ {
		var a struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil || !want(n, a.Text) {
			t.Fatalf("answer %d in %s: %v, %.40q (%d bytes)", n, path, err, a.Text, len(a.Text))
		}
	}
	return n
}

// TestReliabilityRecordManyAnswers is issue 33's reproduction: a cell
// asking 450 questions, each answered with 10,000 characters through the
// API, grew its record to 1 GB in 3 s, in 4.5 MB lines; after stop
// --keep-sessions the next daemon stopped reading at the first long line
// (the answered cell showed as dead, the cells after it were gone, and
// new entries took their seqs).
func TestReliabilityRecordManyAnswers(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	const questions, length = 450, 10000
	e.must(0, "exec", "qa", "x = 1")
	r := e.runJSON("exec", "qa", fmt.Sprintf("got = []\nfor i in range(%d):\n    got.append(input(f'q{i}? '))\nprint('important result', len(got), sum(map(len, got)))", questions))
	if r.Status != "input" {
		t.Fatalf("the cell: %s; want it to ask", clip(r.String()))
	}
	c := e.api()
	recordFile := filepath.Join(e.stateDir(), "records", "qa.jsonl")
	peak := int64(0)
	text := func(i int) string { return fmt.Sprintf("%05d", i) + strings.Repeat("a", length-5) }
	status, output := "", ""
	for i := 0; i < questions; i++ {
		var refused int
		status, output, refused = e.answer(t, c, "qa", text(i))
		if refused != 0 || (status != "input") != (i == questions-1) {
			t.Fatalf("answer %d: %d %s, %.200q", i, refused, status, output)
		}
		if i%25 == 0 {
			if fi, err := os.Stat(recordFile); err == nil {
				peak = max(peak, fi.Size())
			}
		}
	}
	wantContains(t, "the last answer's reply", output, fmt.Sprintf("important result %d %d", questions, questions*length))
	e.must(0, "exec", "qa", "print('after one')")
	e.must(0, "exec", "qa", "print('after two')")
	fi, _ := os.Stat(recordFile)
	peak = max(peak, fi.Size())
	before, _, _ := e.record(t, "qa")

	e.stopKeeping(t)
	after, dropped, _ := e.record(t, "qa")
	if dropped != 0 || len(after) != len(before)+1 || after[len(after)-1].Note == nil || after[len(after)-1].Note.Kind != "adopted" {
		t.Fatalf("after stop --keep-sessions: %d entries (%d before, and the adopted note), %d dropped: %+v", len(after), len(before), dropped, after)
	}
	var asked recEntry
	for i, en := range before {
		if en.Seq != after[i].Seq || en.Status != after[i].Status || en.Code != after[i].Code {
			t.Errorf("entry %d: %d %s before, %d %s after", i, en.Seq, en.Status, after[i].Seq, after[i].Status)
		}
		if en.Note != nil && en.Note.Kind == "unread" {
			t.Errorf("a line of the record was left out: %s", en.Note.Text)
		}
		if strings.Contains(en.Code, "input(") {
			asked = after[i]
		}
	}
	if asked.Status != "done" || !strings.Contains(asked.Output, "important result 450") {
		t.Errorf("the answered cell: %s, output %.200q", asked.Status, asked.Output)
	}
	ac := asked.AnswersCut
	if ac == nil || ac.Total != questions || len(asked.Answers) != ac.Head+ac.Tail || ac.File == "" {
		t.Fatalf("the answered cell's answers: %d kept, cut %+v", len(asked.Answers), ac)
	}
	for _, a := range asked.Answers {
		if a.TextCut == nil || a.TextCut.Total != length || len([]rune(a.Text)) > 600 {
			t.Errorf("an answer kept as %d characters, cut %+v", len([]rune(a.Text)), a.TextCut)
		}
	}
	if n := answersIn(t, ac.File, func(i int, s string) bool { return s == text(i) }); n != questions {
		t.Errorf("the file of answers holds %d, %d were given", n, questions)
	}
	for _, want := range []string{"after one", "after two"} {
		if !strings.Contains(fmt.Sprint(after), want) {
			t.Errorf("the cell printing %q is gone", want)
		}
	}
	r = e.runJSON("exec", "qa", "print('fresh')")
	es, _, _ := e.record(t, "qa")
	wantFreshSeqs(t, es)
	if last := es[len(es)-1]; last.Seq != after[len(after)-1].Seq+1 || !strings.Contains(last.Code, "fresh") {
		t.Errorf("the next cell's entry: seq %d %q; want %d", last.Seq, last.Code, after[len(after)-1].Seq+1)
	}
	if peak > 8<<20 {
		t.Errorf("the record's file reached %d bytes", peak)
	}
	report(t, recordSection, fmt.Sprintf("a cell asks %d questions, each answered with 10,000 characters (`POST /v1/sessions/NAME/input`), then `stop --keep-sessions`", questions),
		"the record's file peaked at %s (was 1 GB in 4.5 MB lines); the entry keeps the first %d and last %d answers, each cut to its head and tail, the cut said, all %d whole in %s; the next daemon read every entry (the cell `done`, the two after it) and gave the next cell the next seq",
		mb(peak), ac.Head, ac.Tail, questions, filepath.Base(ac.File))
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// TestReliabilityRecordHugeAnswer: one answer of 5 MB (or the largest
// the API takes) made the record's line too long for the next daemon,
// and a cell printing "important result 42" vanished with the cells
// after it.
func TestReliabilityRecordHugeAnswer(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	r := e.runJSON("exec", "big", "v = input('big? ')\nprint('important result 42', len(v))")
	if r.Status != "input" {
		t.Fatalf("the cell: %s; want it to ask", clip(r.String()))
	}
	c := e.api()
	size, refusedAt := 5<<20, 0
	status, output, refused := e.answer(t, c, "big", strings.Repeat("b", size))
	for refused != 0 && size > 10000 {
		refusedAt = size
		size /= 2
		status, output, refused = e.answer(t, c, "big", strings.Repeat("b", size))
	}
	if status != "done" || !strings.Contains(output, fmt.Sprintf("important result 42 %d", size)) {
		t.Fatalf("an answer of %d bytes: %d %s %.300q", size, refused, status, output)
	}
	e.must(0, "exec", "big", "print('after it')")
	e.stopKeeping(t)
	es, dropped, _ := e.record(t, "big")
	var asked recEntry
	for _, en := range es {
		if strings.Contains(en.Code, "input(") {
			asked = en
		}
		if en.Note != nil && en.Note.Kind == "unread" {
			t.Errorf("a line was left out: %s", en.Note.Text)
		}
	}
	if dropped != 0 || asked.Status != "done" || !strings.Contains(asked.Output, "important result 42") || !strings.Contains(fmt.Sprint(es), "after it") {
		t.Fatalf("after stop --keep-sessions: %d dropped, the cell %s %.100q, %d entries", dropped, asked.Status, asked.Output, len(es))
	}
	if len(asked.Answers) != 1 || asked.Answers[0].TextCut == nil || asked.Answers[0].TextCut.Total != size || asked.AnswersCut == nil {
		t.Fatalf("the answer: %d kept, cut %+v", len(asked.Answers), asked.AnswersCut)
	}
	if n := answersIn(t, asked.AnswersCut.File, func(_ int, s string) bool { return len(s) == size }); n != 1 {
		t.Errorf("the file of answers holds %d", n)
	}
	fi, _ := os.Stat(filepath.Join(e.stateDir(), "records", "big.jsonl"))
	if fi.Size() > 1<<20 {
		t.Errorf("the record is %d bytes", fi.Size())
	}
	door := "the API took it"
	if refusedAt > 0 {
		door = fmt.Sprintf("the API refused %d bytes, took %d", refusedAt, size)
	}
	report(t, recordSection, "one answer of 5 MB, then `stop --keep-sessions`",
		"%s; the entry keeps its head and tail (the cut said, the whole in %s), the record's file is %s; the next daemon read the cell (`done`, \"important result 42\") and the one after it",
		door, filepath.Base(asked.AnswersCut.File), kb(fi.Size()))
}

// kb says a size in bytes as a person reads it: bytes below a KiB,
// else KiB with one decimal.
func kb[N int | int64](n N) string {
	if n < 1<<10 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
}

// TestReliabilityRecordPlantedLines: lines planted in a record's file
// while no daemon runs — garbage and an over-long line in the middle, a
// line with seq 2147483647 at the end — are left out and said in a note,
// the file as it was kept aside; every other entry loads, no output file
// is removed, and new entries get seqs never given. (A line with seq
// 2147483647 made history answer "entries 1 to 2147483646 were dropped"
// and removed those entries' output files.)
func TestReliabilityRecordPlantedLines(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	for i := 0; i < 4; i++ {
		e.must(0, "exec", "pl", fmt.Sprintf("print('long %d\\n' * 3000)", i))
	}
	before, _, _ := e.record(t, "pl")
	var files []string
	for _, en := range before {
		if en.OutputCut != nil && en.OutputCut.File != "" {
			files = append(files, en.OutputCut.File)
		}
	}
	if len(files) != 4 {
		t.Fatalf("%d whole-output files, want 4: %+v", len(files), before)
	}
	e.stopKeeping(t)

	path := filepath.Join(e.stateDir(), "records", "pl.jsonl")
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(old), "\n")
	mid := len(lines) / 2
	long := fmt.Sprintf(`{"seq":%d,"code":"%s"}`+"\n", before[1].Seq, strings.Repeat("x", 9<<20))
	planted := strings.Join(lines[:mid], "") + "this is not an entry\n" + long + strings.Join(lines[mid:], "") +
		`{"seq":2147483647,"id":"pl#2147483647","kind":"note","text":"planted"}` + "\n"
	if err := os.WriteFile(path, []byte(planted), 0o600); err != nil {
		t.Fatal(err)
	}

	after, dropped, next := e.record(t, "pl")
	if dropped != 0 {
		t.Errorf("%d entries dropped", dropped)
	}
	var unread *recEntry
	for i := range after {
		if n := after[i].Note; n != nil && n.Kind == "unread" {
			unread = &after[i]
		}
	}
	for i, en := range before {
		if i >= len(after) || after[i].Seq != en.Seq || after[i].Code != en.Code || after[i].Status != en.Status {
			t.Errorf("entry %d (%d %q %s) is not as it was", i, en.Seq, en.Code, en.Status)
		}
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("an entry's whole output: %v", err)
		}
	}
	if unread == nil || unread.Note.Count != 3 || len(unread.Note.Lines) != 3 {
		t.Fatalf("no note of the 3 lines left out: %+v", after)
	}
	whys := []string{}
	for _, l := range unread.Note.Lines {
		whys = append(whys, l.Why)
	}
	if fmt.Sprint(whys) != "[malformed too-long seq]" {
		t.Errorf("the lines left out: %v", whys)
	}
	if b, _ := os.ReadFile(unread.Note.File); !bytes.Equal(b, []byte(planted)) {
		t.Errorf("the file kept aside (%s) holds %d bytes, the record had %d", unread.Note.File, len(b), len(planted))
	}
	if log, _ := os.ReadFile(filepath.Join(e.socketDir(), "daemon.log")); !strings.Contains(string(log), `the record of "pl": 3 lines of `) {
		t.Errorf("the daemon's log does not say the lines left out:\n%s", tail(filepath.Join(e.socketDir(), "daemon.log"), 10))
	}
	text, _ := e.must(0, "history", "pl")
	wantContains(t, "history", text, "3 lines of the record of session 'pl' could not be read")
	wantLacks(t, "history", text, "were dropped", "2147483646")

	r := e.runJSON("exec", "pl", "print('fresh')")
	if r.Status != "done" {
		t.Fatalf("a cell after: %s", clip(r.String()))
	}
	es, _, _ := e.record(t, "pl")
	wantFreshSeqs(t, es)
	if last := es[len(es)-1]; last.Seq < next || !strings.Contains(last.Code, "fresh") {
		t.Errorf("the next cell's entry: seq %d %q; want %d or later", last.Seq, last.Code, next)
	}

	// Read again by a new daemon, the file kept afresh says nothing more.
	e.stopKeeping(t)
	again, _, _ := e.record(t, "pl")
	notes := 0
	for _, en := range again {
		if en.Note != nil && en.Note.Kind == "unread" {
			notes++
		}
	}
	if notes != 1 || len(again) != len(es)+1 {
		t.Errorf("read again: %d entries (%d before and the adopted note), %d unread notes", len(again), len(es), notes)
	}
	report(t, recordSection, "a garbage line and a 9 MB line planted in the middle of a record's file, a line with seq 2147483647 at its end",
		"the 3 lines left out, the lines after each read (every entry as it was, no output file removed, nothing dropped); a note entry says which lines and why, the file as it was kept aside (%s); the next cell took seq %d, after the unread and adopted notes (seq 2147483647 numbered nothing); a daemon reading the record again found nothing to say",
		filepath.Base(unread.Note.File), es[len(es)-1].Seq)
}

// TestReliabilityRecordPdbSteps: 2,000 pdb `n` steps through a loop made
// a record of 136 MB in lines of 207 KB (each step an answer, each
// answer the entry rewritten with all the answers before it).
func TestReliabilityRecordPdbSteps(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	const steps = 2000
	r := e.runJSON("exec", "dbg", "def f():\n    i = 0\n    breakpoint()\n    while i < 5000:\n        i += 1\n    return i\n\nf()")
	if r.Status != "input" || !strings.Contains(r.String(), `"(Pdb) "`) {
		t.Fatalf("breakpoint(): %s", clip(r.String()))
	}
	c := e.api()
	for i := 0; i < steps; i++ {
		if status, output, refused := e.answer(t, c, "dbg", "n"); status != "input" {
			t.Fatalf("step %d: %d %s %.200q", i, refused, status, output)
		}
	}
	if status, output, _ := e.answer(t, c, "dbg", "c"); status != "done" {
		t.Fatalf("continue: %s %.200q", status, output)
	}
	fi, _ := os.Stat(filepath.Join(e.stateDir(), "records", "dbg.jsonl"))
	e.stopKeeping(t)
	es, _, _ := e.record(t, "dbg")
	var asked recEntry
	for _, en := range es {
		if strings.Contains(en.Code, "breakpoint()") {
			asked = en
		}
	}
	if asked.Status != "done" || asked.AnswersCut == nil || asked.AnswersCut.Total != steps+1 || len(asked.Answers) != 20 ||
		asked.Answers[19].Text != "c" || asked.Answers[0].Prompt != "(Pdb) " {
		t.Fatalf("the cell stepped through: %s, %d answers kept, cut %+v", asked.Status, len(asked.Answers), asked.AnswersCut)
	}
	if n := answersIn(t, asked.AnswersCut.File, func(i int, s string) bool { return s == map[bool]string{true: "c", false: "n"}[i == steps] }); n != steps+1 {
		t.Errorf("the file of answers holds %d", n)
	}
	if fi.Size() > 2<<20 {
		t.Errorf("the record is %d bytes", fi.Size())
	}
	report(t, recordSection, "2,000 pdb `n` steps through a loop, then `c`",
		"the record's file is %s (was 136 MB in 207 KB lines); the entry keeps the first 5 and last 15 answers, all %s in %s",
		kb(fi.Size()), "2,001", filepath.Base(asked.AnswersCut.File))
}
