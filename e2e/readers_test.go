package e2e

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The section of docs/reliability.md these rows go to.
const readersSection = "11 One owner, many readers"

// threeLines prints three lines a second apart, then gives "val".
const threeLines = "import time\nfor i in range(3):\n    print('line', i, flush=True); time.sleep(1)\n'val'"

// TestReliabilityAnotherWaitTakesNothing is the reproduction: an
// agent's exec waits for its cell while a person's wait collects the same
// cell. Both get every line, each from its own position; the person is
// told whose cell it is; the agent's next wait has nothing new.
func TestReliabilityAnotherWaitTakesNothing(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "stl2", "0")
	sent := make(chan cellResult, 1)
	go func() {
		sent <- e.runJSONWith(runOpts{extra: []string{"POLYREPL_LABEL=agent"}}, "exec", "stl2", threeLines, "-t", "60")
	}()
	if !waitFor(20*time.Second, func() bool { return e.session("stl2").State == "running" }) {
		t.Fatal("the agent's cell never ran")
	}
	time.Sleep(800 * time.Millisecond)
	bob := e.runJSONWith(runOpts{extra: []string{"POLYREPL_LABEL=bob"}}, "wait", "stl2", "-t", "60")
	var agent cellResult
	select {
	case agent = <-sent:
	case <-time.After(60 * time.Second):
		t.Fatal("the agent's exec did not return")
	}
	want := "line 0\nline 1\nline 2\n"
	if agent.Status != "done" || agent.Output != want || agent.Value != "'val'" {
		t.Errorf("the agent's reply: %v; want all three lines and 'val'", agent)
	}
	if bob.Status != "done" || bob.Output != want || bob.Value != "'val'" || len(bob.notesOf("sent-by")) != 1 || !strings.Contains(bob.notesOf("sent-by")[0], "agent") {
		t.Errorf("bob's wait: %v; want the same three lines and 'val', told the agent sent the cell", bob)
	}
	again := e.runJSONWith(runOpts{extra: []string{"POLYREPL_LABEL=agent"}}, "wait", "stl2", "-t", "5")
	if again.Output != "" || len(again.notesOf("collected")) != 1 {
		t.Errorf("the agent's wait after its reply: %v; want nothing new to collect", again)
	}
	report(t, readersSection, "a person's `wait` while an agent's exec waits for the same cell (the CLI)",
		"both replies held the three lines and the value; the person was told the agent sent it; the agent's next wait had nothing new")
}

// TestReliabilityMCPSenderKeepsItsCell: an agent sends a cell through MCP
// with timeout 0, a person collects it through the CLI, and the agent's
// own wait still gets its output and value.
func TestReliabilityMCPSenderKeepsItsCell(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	s := e.startMCP()
	r, first := s.cell("exec", map[string]any{"session": "lab", "code": threeLines, "timeout": 0})
	if r.Status != "running" {
		t.Fatalf("exec with timeout 0: %v, want running", r)
	}
	person := e.runJSONWith(runOpts{extra: []string{"POLYREPL_LABEL=dana"}}, "wait", "lab", "-t", "60")
	if person.Status != "done" || person.Value != "'val'" || !strings.Contains(person.Output, "line 2") {
		t.Fatalf("the person's wait: %v; want the cell's output and value", person)
	}
	w, rest := s.cell("wait", map[string]any{"session": "lab", "timeout": 30})
	// The texts, without their notes: what the exec saw printed, then the
	// rest and the value.
	printed := func(txt string) string {
		var b strings.Builder
		for _, l := range strings.SplitAfter(txt, "\n") {
			if !strings.HasPrefix(l, "[") {
				b.WriteString(l)
			}
		}
		return b.String()
	}
	if w.Status != "done" || printed(first)+printed(rest) != "line 0\nline 1\nline 2\nOut[1]: 'val'" {
		t.Errorf("the agent's wait after the person collected: %v; texts %q then %q, want every line and 'val'", w, first, rest)
	}
	report(t, readersSection, "an agent's MCP exec with timeout 0 whose cell a person collected",
		"the agent's own wait still got every line and the value")
}

// TestReliabilityALargePrintIsStoredOnce prints 100 MB and measures what
// the session's files take while the cell runs and after: one copy, the
// cell's output log, which the reply's cut and the record's entry point
// at.
func TestReliabilityALargePrintIsStoredOnce(t *testing.T) {
	needPython(t)
	if testing.Short() {
		t.Skip("prints 100 MB")
	}
	t.Parallel()
	e := newEnv(t)
	const size = 100 << 20
	code := "import sys, time\nline = 'x' * 1023 + '\\n'\nfor i in range(" + itoa(size/1024) + "):\n    sys.stdout.write(line)\nsys.stdout.flush()\ntime.sleep(3)\n'end'"
	dirs := []string{e.stateDir(), e.socketDir()}
	var peak int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			peak = max(peak, diskUse(dirs...))
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	r := e.runJSON("exec", "big", code, "-t", "120")
	close(stop)
	<-done
	after := diskUse(dirs...)
	if r.Status != "done" || r.OutputCut == nil || r.OutputCut.File == "" {
		t.Fatalf("the print: %v; want done, cut, its whole in a file", r)
	}
	if fi, err := os.Stat(r.OutputCut.File); err != nil || fi.Size() != size {
		t.Errorf("the reply's file: %v, %v; want all %d bytes", fi, err, size)
	}
	var cellEntry *entry
	for _, en := range e.history("big") {
		if en.Kind == "cell" && en.Cell == r.Cell {
			cellEntry = &en
		}
	}
	if cellEntry == nil || cellEntry.OutputCut == nil || cellEntry.OutputCut.File != r.OutputCut.File {
		t.Errorf("the record's entry: %+v; want it to point at the reply's file, %s", cellEntry, r.OutputCut.File)
	}
	if limit := int64(size * 11 / 10); peak > limit || after > limit {
		t.Errorf("a %d MB print took %d MB of disk at its peak and %d MB after; want at most 1.1 times its size", size>>20, peak>>20, after>>20)
	}
	report(t, readersSection, "a cell prints 100 MB",
		"disk used by the session's files: %.2f× the bytes printed at the peak, %.2f× after (one copy: the cell's log, which the reply and the record point at)",
		float64(peak)/size, float64(after)/size)
}

// diskUse is the bytes the files under dirs take on disk.
func diskUse(dirs ...string) int64 {
	var n int64
	for _, d := range dirs {
		filepath.WalkDir(d, func(_ string, de fs.DirEntry, err error) error {
			if err == nil && de.Type().IsRegular() {
				if fi, err := de.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
	}
	return n
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestReliabilityAnAnswerIsInTheCellsLog: the echo of an answer to a
// cell's question is part of the cell's output log, where every reader
// and the whole-output file find it once, in its place.
func TestReliabilityAnAnswerIsInTheCellsLog(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	r := e.runJSON("exec", "qa", "x = input('q? ')\nprint('a' * 20000)\nprint('END')", "-t", "30")
	if r.Status != "input" {
		t.Fatalf("the question: %v", r)
	}
	a := e.runJSON("input", "qa", "hello")
	if a.Status != "done" || strings.Count(a.Output, "END") != 1 {
		t.Fatalf("the answer's reply: %v; want the cell done, END once", a)
	}
	want := "q? hello\n" + strings.Repeat("a", 20000) + "\nEND\n"
	if got := wholeOutput(t, a); !strings.HasSuffix(want, got) {
		t.Errorf("the answer's reply holds %d bytes that are not the end of the cell's output", len(got))
	}
	other := e.runJSONWith(runOpts{extra: []string{"POLYREPL_LABEL=bob"}}, "wait", "qa", "-t", "5")
	if got := wholeOutput(t, other); got != want {
		t.Errorf("another reader's whole: %d bytes, want the %d of the question, the answer and the output, once", len(got), len(want))
	}
}
