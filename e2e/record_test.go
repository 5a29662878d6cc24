package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/polyrepl/polyrepl/internal/testenv"
)

// activity is what a reply tells of other clients' work.
type activity struct {
	Session string  `json:"session"`
	Entries []entry `json:"entries"`
	// Told is, in MCP structured content, the ids of the entries the
	// text tells (the entries themselves are the text's).
	Told    []string `json:"told"`
	Updated []int    `json:"updated"`
	More    []string `json:"more"`
	Earlier int      `json:"earlier"`
}

// entry is one entry of a session's record, as --json prints it.
type entry struct {
	Seq       int    `json:"seq"`
	ID        string `json:"id"`
	Rev       int    `json:"rev"`
	Kind      string `json:"kind"`
	Cell      int    `json:"cell"`
	Who       string `json:"who"`
	How       string `json:"how"`
	Code      string `json:"code"`
	Output    string `json:"output"`
	Display   string `json:"display"`
	Status    string `json:"status"`
	Text      string `json:"text"`
	OutputCut *cut   `json:"output_cut"`
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// activityOf decodes the activity of a --json cell result.
func activityOf(t *testing.T, r cellResult) *activity {
	t.Helper()
	return r.Activity
}

// history reads a session's record through the CLI.
func (e *env) history(name string) []entry {
	e.t.Helper()
	out, stderr, code := e.run("history", name, "--json")
	if code != 0 {
		e.t.Fatalf("history %s: exit %d: %s", name, code, stderr)
	}
	var r struct {
		Entries []entry `json:"entries"`
		Dropped int     `json:"dropped"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		e.t.Fatalf("history --json: %v: %s", err, clip(out))
	}
	return r.Entries
}

// teller counts what each client was told, by entry id and rev, so a test
// can check that each entry is told once, and again only when it changed.
type teller struct {
	t    *testing.T
	told map[string]map[string][]int // client → entry id → revs told
}

func (tl *teller) add(client string, a *activity) {
	if a == nil {
		return
	}
	if tl.told[client] == nil {
		tl.told[client] = map[string][]int{}
	}
	entries := a.Entries
	for _, id := range a.Told {
		entries = append(entries, entry{ID: id})
	}
	for _, e := range entries {
		revs := tl.told[client][e.ID]
		// An entry told again must be said to be an update; the CLI's
		// whole entries also carry the rev that changed.
		_, seq, _ := strings.Cut(e.ID, "#")
		update := slices.Contains(a.Updated, atoi(seq))
		if len(revs) > 0 && (!update || e.Rev != 0 && revs[len(revs)-1] >= e.Rev) {
			tl.t.Errorf("%s was told %s again unchanged (rev %d)", client, e.ID, e.Rev)
		}
		tl.told[client][e.ID] = append(revs, e.Rev)
	}
}

// TestSharedRecord drives one session from two CLI labels and an MCP
// agent: each is told the others' cells, its own never, each entry once
// and again only when it changed (a timed-out cell's late output), within
// the bounds; the record keeps everything, survives the daemon and
// exports to Markdown and a notebook.
func TestSharedRecord(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	agent := e.startMCP()
	tl := &teller{t: t, told: map[string]map[string][]int{}}
	as := func(label string, args ...string) cellResult {
		t.Helper()
		r := e.runJSON(append([]string{"--label", label}, args...)...)
		tl.add(label, activityOf(t, r))
		return r
	}
	mcpCall := func(tool string, args map[string]any) (cellResult, string) {
		t.Helper()
		r, txt := agent.cell(tool, args)
		tl.add("agent", activityOf(t, r))
		return r, txt
	}

	as("alice", "exec", "lab", "x = 1\nprint('alice set x')")
	r, txt := mcpCall("exec", map[string]any{"session": "lab", "code": "y = x + 1\ny"})
	if r.Status != "done" || !strings.HasSuffix(txt, "Out[2]: 2") {
		t.Fatalf("agent: %v\n%s", r, txt)
	}
	// Its first contact tells it what is there: alice's cell and the
	// session's creation, without a second call; the structured content
	// names the two entries the text tells.
	if a := activityOf(t, r); a == nil || !slices.Equal(a.Told, []string{"lab#2", "lab#1"}) {
		t.Errorf("the agent's first call: activity %+v, want alice's cell and the created note", a)
	}
	wantContains(t, "the agent's text", txt, "Session 'lab' before your first call", "- lab#2 cell 1 · alice via cli", "alice set x", "- lab#1 note", "Created session 'lab'")

	r = as("alice", "exec", "lab", "y * 10")
	a := activityOf(t, r)
	if a == nil || len(a.Entries) != 1 || a.Entries[0].Who != "E2E Agent" || a.Entries[0].How != "mcp" || a.Entries[0].Code != "y = x + 1\ny" || a.Entries[0].Display != "Out[2]: 2" {
		t.Fatalf("alice was told %+v, want the agent's cell", a)
	}
	// Nothing new from the others: nothing is told.
	quiet, quietNotes := e.must(0, "--label", "alice", "exec", "lab", "'quiet'")
	wantLacks(t, "alice's text with nothing new", quiet+quietNotes, "Meanwhile")

	// Alice's cell times out; the agent collects part of it with wait and
	// is told of it; its late output reaches the record, and the agent is
	// told it again as an update.
	slow := as("alice", "exec", "lab", "import time\nprint('early')\ntime.sleep(1.5)\nprint('late')\n'slow done'", "-t", "0.5")
	if slow.Status != "running" {
		t.Fatalf("the slow cell: %v", slow)
	}
	r, _ = mcpCall("wait", map[string]any{"session": "lab", "timeout": 0.2})
	if !waitFor(10*time.Second, func() bool { return e.session("lab").Running == nil }) {
		t.Fatal("the slow cell did not finish")
	}
	var slowEntry entry
	for _, en := range e.history("lab") {
		if en.Kind == "cell" && en.Cell == slow.Cell {
			slowEntry = en
		}
	}
	if slowEntry.Output != "early\nlate\n" || slowEntry.Status != "done" || slowEntry.Display != "Out[5]: 'slow done'" {
		t.Errorf("the record of the timed-out cell: %+v, want its late output and value", slowEntry)
	}
	r, txt = mcpCall("exec", map[string]any{"session": "lab", "code": "z = 3"})
	a = activityOf(t, r)
	if a == nil || len(a.Told) == 0 || a.Told[0] != slowEntry.ID || len(a.Updated) != 1 || !strings.Contains(txt, "Out[5]: 'slow done'") {
		t.Errorf("the agent after the slow cell ended: %+v, want its update\n%s", a, txt)
	}

	// Bob joins, then alice runs 12 cells: bob's next reply tells at most
	// 10 entries and lists the rest by id.
	as("bob", "exec", "lab", "1")
	for i := 0; i < 12; i++ {
		as("alice", "exec", "lab", fmt.Sprintf("print(%d)", i))
	}
	r = as("bob", "exec", "lab", "2")
	if a := activityOf(t, r); a == nil || len(a.Entries) != 10 || len(a.More) < 2 {
		t.Errorf("bob after 12 of alice's cells: %+v, want 10 told and the rest listed", a)
	}
	// Quiet clients are not told.
	if r := e.runJSONWith(runOpts{extra: []string{"POLYREPL_ACTIVITY=off"}}, "--label", "carol", "exec", "lab", "3"); r.raw["activity"] != nil {
		t.Errorf("POLYREPL_ACTIVITY=off was told %v", r.raw["activity"])
	}

	// Nobody was told its own entries; everyone heard of everyone else's.
	whoIs := map[string]string{"agent": "E2E Agent", "alice": "alice", "bob": "bob"}
	byID := map[string]entry{}
	for _, en := range e.history("lab") {
		byID[en.ID] = en
	}
	for client, told := range tl.told {
		for id := range told {
			if en := byID[id]; en.Who == whoIs[client] {
				t.Errorf("%s was told its own entry %s", client, id)
			}
		}
	}
	if got := tl.told["alice"]; len(got) < 2 {
		t.Errorf("alice was told %v", got)
	}

	// The record survives the daemon.
	before := e.history("lab")
	e.must(0, "stop")
	after := e.history("lab")
	if len(after) != len(before)+1 || after[len(after)-1].Kind != "note" || !strings.Contains(after[len(after)-1].Text, "stopped") {
		t.Errorf("after stop: %d entries (before %d), last %+v; want the same and a note that it was stopped", len(after), len(before), after[len(after)-1])
	}
	// So do the clients' positions: after the restart alice is told what
	// bob did, not a count of earlier entries.
	as("alice", "exec", "lab", "'caught up'")
	e.must(0, "stop")
	e.runJSON("--label", "bob", "exec", "lab", "after_restart = 1")
	if a := activityOf(t, as("alice", "exec", "lab", "'back'")); a == nil || a.Earlier != 0 || len(a.Entries) == 0 || a.Entries[0].Code != "after_restart = 1" {
		t.Errorf("alice after a daemon restart was told %+v, want bob's cell since", a)
	}
	after = e.history("lab")

	// Markdown and notebook exports.
	md, _ := e.must(0, "export", "lab")
	wantContains(t, "markdown", md, "# Session `lab`", "E2E Agent via mcp", "alice via cli", "```python\ny = x + 1\ny\n```", "Out[2]: 2", "early\nlate")
	nbPath := filepath.Join(e.home, "lab.ipynb")
	e.must(0, "export", "lab", "--format", "ipynb", "-o", nbPath)
	if _, stderr, code := e.run("export", "lab", "-o", nbPath); code != 2 || !strings.Contains(stderr, "exists") {
		t.Errorf("export over an existing file: exit %d, %s; want a refusal", code, stderr)
	}
	validateNotebook(t, nbPath, len(after))
}

// mustText runs a command that must succeed and returns its stdout.
func (e *env) mustText(args ...string) string {
	e.t.Helper()
	out, _ := e.must(0, args...)
	return out
}

// validateNotebook checks a notebook against nbformat 4's schema with
// Debian's python3-nbformat.
func validateNotebook(t *testing.T, path string, cells int) {
	t.Helper()
	py := testenv.NeedPythonModule(t, "nbformat", "Debian: apt-get install python3-nbformat")
	out, err := exec.Command(py, "-c", `
import sys, nbformat
nb = nbformat.read(sys.argv[1], as_version=4)
nbformat.validate(nb)
print(len(nb.cells), nb.nbformat, nb.nbformat_minor)
`, path).CombinedOutput()
	if err != nil {
		t.Fatalf("the exported notebook is not valid nbformat 4: %v\n%s", err, out)
	}
	if want := fmt.Sprintf("%d 4 5", cells); strings.TrimSpace(string(out)) != want {
		t.Errorf("notebook: %s, want %s (cells, nbformat, minor)", out, want)
	}
}

// terminal is polyrepl run on a pseudo-terminal, as by a person at it.
type terminal struct {
	t    *testing.T
	tty  *os.File
	scr  *testenv.Buffer // its output, read in the background
	done chan error
}

// onTerminal starts polyrepl with args on a new pseudo-terminal; it is
// ended, if still running, when the test ends.
func (e *env) onTerminal(args ...string) *terminal {
	e.t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Env = append(append([]string{}, e.vars...), "TERM=xterm")
	cmd.Dir = e.home
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		e.t.Fatal(err)
	}
	c := &terminal{t: e.t, tty: tty, scr: &testenv.Buffer{}, done: make(chan error, 1)}
	go io.Copy(c.scr, tty)
	go func() { c.done <- cmd.Wait() }()
	e.t.Cleanup(func() {
		cmd.Process.Kill()
		err := <-c.done
		c.done <- err
		tty.Close()
	})
	return c
}

// expect waits for the screen to show every one of subs.
func (c *terminal) expect(what string, subs ...string) {
	c.t.Helper()
	if !waitFor(20*time.Second, func() bool {
		for _, sub := range subs {
			if !strings.Contains(c.scr.String(), sub) {
				return false
			}
		}
		return true
	}) {
		c.t.Fatalf("%s: the terminal does not show %q:\n%s", what, subs, c.scr.String())
	}
}

// type sends keys.
func (c *terminal) send(keys string) { c.tty.Write([]byte(keys)) }

// exit waits for polyrepl to end and returns how it ended.
func (c *terminal) exit(what string) error {
	c.t.Helper()
	select {
	case err := <-c.done:
		c.done <- err
		return err
	case <-time.After(10 * time.Second):
		c.t.Fatalf("%s: polyrepl did not end:\n%s", what, c.scr.String())
	}
	return nil
}

// TestAttach drives `polyrepl attach` through a pseudo-terminal as a
// person would: it shows other clients' cells as they run, sends what is
// typed as cells labelled as the person's, interrupts on Ctrl-C and
// detaches on Ctrl-D leaving the session running.
func TestAttach(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "--label", "alice", "exec", "lab", "x = 1")

	con := e.onTerminal("attach", "lab", "--label", "carol")
	expect := con.expect
	expect("start", "Attached to session 'lab'", "as carol", "x = 1")

	con.send("x + 41\r")
	expect("a typed cell", "Out[2]: 42")

	r := e.runJSON("--label", "alice", "exec", "lab", "print('from alice')")
	if a := activityOf(t, r); a == nil || len(a.Entries) != 1 || a.Entries[0].Who != "carol" || a.Entries[0].How != "attach" {
		t.Errorf("alice was told %+v, want carol's cell", activityOf(t, r))
	}
	expect("another client's cell", "alice via cli", "from alice")

	var typed *entry
	for _, en := range e.history("lab") {
		if en.Code == "x + 41" {
			en := en
			typed = &en
		}
	}
	if typed == nil || typed.Who != "carol" || typed.How != "attach" || typed.Display != "Out[2]: 42" {
		t.Errorf("the typed cell's entry: %+v, want carol via attach with its value", typed)
	}

	// A third client, an agent through MCP: it is told carol's and alice's
	// cells, and the console shows its cell.
	agent := e.startMCP()
	agent.cell("exec", map[string]any{"session": "lab", "code": "'agent joins'"})
	agent.cell("exec", map[string]any{"session": "lab", "code": "x * 2"})
	con.send("'carol again'\r")
	expect("the agent's cell", "E2E Agent via mcp", "Out[5]: 2", "'carol again'")
	ar, atxt := agent.cell("exec", map[string]any{"session": "lab", "code": "'after carol'"})
	if a := activityOf(t, ar); a == nil || len(a.Told) != 1 || !strings.Contains(atxt, "carol via attach") || !strings.Contains(atxt, "'carol again'") {
		t.Errorf("the agent was told %+v, want carol's cell once:\n%s", activityOf(t, ar), atxt)
	}

	// A cell that asks: the console says so, its prompt is the question,
	// and the next typed line answers it; a question an agent's cell asks
	// is answered the same way.
	con.send("input('colour? ')\r")
	expect("a typed cell's question", "asks for input. The line you type answers it")
	con.send("blue\r")
	expect("the typed answer", "colour? blue", "]: 'blue'")
	ar, _ = agent.cell("exec", map[string]any{"session": "lab", "code": "input('size? ')", "timeout": 0.5})
	if ar.Status != "input" {
		t.Errorf("the agent's question: %s", clip(ar.String()))
	}
	expect("the agent's question", "(E2E Agent via mcp) asks for input. The line you type answers it")
	con.send("big\r")
	expect("the answer to the agent's question", "size? big", "]: 'big'")

	// A block: the line ending in ':' continues until an empty line.
	con.send("import time\r")
	con.send("while True:\r")
	con.send("    time.sleep(0.05)\r")
	con.send("\r")
	// The loop itself runs before Ctrl-C, not the import before it: a
	// Ctrl-C while the loop waits in the console's queue drops it
	// instead (the run this was seen in: "import time" was running).
	if !waitFor(10*time.Second, func() bool {
		r := e.session("lab").Running
		return r != nil && strings.HasPrefix(r.Code, "while True")
	}) {
		t.Fatalf("the typed loop is not running:\n%s", con.scr.String())
	}
	con.send("\x03")
	expect("Ctrl-C", "KeyboardInterrupt", "interrupted]")

	con.send("\x04")
	if err := con.exit("Ctrl-D"); err != nil {
		t.Errorf("attach ended with %v after Ctrl-D, want exit 0", err)
	}
	expect("detach", "Detached from session 'lab'; it keeps running.")
	// The console's prompt is not drawn again after the words: the
	// shell's next prompt starts on a fresh line.
	if scr := con.scr.String(); !strings.HasSuffix(scr, "Detached from session 'lab'; it keeps running.\r\n") {
		t.Errorf("after detaching the console leaves %q, want its last line ended", scr[max(0, len(scr)-80):])
	}
	if s := e.session("lab"); s.State != "idle" {
		t.Errorf("after detaching, the session is %s", s.State)
	}
	if _, stderr, code := e.runIn("x\n", "attach", "lab"); code != 2 || !strings.Contains(stderr, "needs a terminal") {
		t.Errorf("attach without a terminal: exit %d, %s", code, stderr)
	}
}

// TestAttachThroughDeath: a console follows its session through a death
// and the new life: it shows the death, then the new life's creation,
// then the cells typed into the new life and their output.
func TestAttachThroughDeath(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "lab", "x = 1")
	con := e.onTerminal("attach", "lab", "--label", "carol")
	con.expect("start", "Attached to session 'lab'", "x = 1")

	e.must(1, "exec", "lab", "import os; os._exit(3)")
	con.expect("the death", "Session 'lab' ended", "exited with status 3")
	con.send("print('alive', 40 + 2)\r")
	con.expect("the new life", "Created session 'lab' again", "print('alive', 40 + 2)", "alive 42")
	con.send("'typed' * 2\r")
	con.expect("a second cell of the new life", "Out[2]: 'typedtyped'")
	e.must(0, "exec", "lab", "print('from another client')")
	con.expect("another client's cell in the new life", "from another client")

	// Dead again, by kill this time, and made afresh by another client.
	e.must(0, "kill", "lab")
	con.expect("killed", "killed by")
	e.must(0, "exec", "lab", "print('third life')")
	con.expect("the third life", "third life")
	con.send("\x04")
	if err := con.exit("Ctrl-D"); err != nil {
		t.Errorf("attach ended with %v, want exit 0", err)
	}
}

// TestAttachRaw attaches to the terminal of a session hosted on one (sh),
// as tmux would: typing runs there and is recorded as output while idle,
// cells from other clients show, and Ctrl-] detaches leaving it running.
func TestAttachRaw(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "term", "--runtime", "sh", "x=41")

	con := e.onTerminal("attach", "term", "--raw", "--label", "dana")
	expect := con.expect
	expect("start", "Attached to the terminal of session 'term' as dana")
	con.send("echo typed-$((x+1))\r")
	expect("typing", "echo typed-$((x+1))", "typed-42")
	e.must(0, "exec", "term", "echo from-a-cell")
	expect("another client's cell", "from-a-cell")

	var idle, attached bool
	for _, en := range e.history("term") {
		idle = idle || (en.Kind == "idle" && strings.Contains(en.Output, "typed-42"))
		attached = attached || (en.Kind == "note" && strings.Contains(en.Text, "dana via attach attached"))
	}
	if !idle || !attached {
		t.Errorf("the record lacks the typing as idle output (%v) or the attach note (%v): %+v", idle, attached, e.history("term"))
	}
	// The terminal is raw: every line the runtime printed starts at
	// column 0, each line feed with its carriage return.
	if scr := con.scr.String(); strings.Contains(strings.ReplaceAll(scr, "\r\n", ""), "\n") {
		t.Errorf("attach --raw printed a line feed without a carriage return (lines would staircase): %q", scr)
	}
	con.send("\x1d")
	if err := con.exit("Ctrl-]"); err != nil {
		t.Errorf("attach --raw ended with %v after Ctrl-], want exit 0", err)
	}
	if r := e.runJSON("exec", "term", "echo $x"); r.Output != "41\n" {
		t.Errorf("after detaching: %v", r)
	}
	needPython(t)
	if _, stderr, code := e.run("exec", "py", "1"); code != 0 {
		t.Fatalf("exec py: %s", stderr)
	}
	c2 := e.onTerminal("attach", "py", "--raw")
	c2.exit("a refused raw attach")
	s2 := c2.scr
	if !waitFor(5*time.Second, func() bool { return strings.Contains(s2.String(), "runs python over pipes") }) {
		t.Errorf("attach --raw to a Python session: %q, want a refusal that says why", s2.String())
	}
}

// TestIdleOutput: what a session prints while no cell runs (a background
// thread) reaches a client that hears activity as an idle entry of the
// record, and a client that asked not to hear activity as a note.
func TestIdleOutput(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	later := func(mark string) string {
		return fmt.Sprintf("import threading\nthreading.Timer(0.3, lambda: print(%q, flush=True)).start()", mark)
	}
	idleHas := func(mark string) bool {
		for _, en := range e.history("bg") {
			if en.Kind == "idle" && strings.Contains(en.Output, mark) {
				return true
			}
		}
		return false
	}
	quiet := runOpts{extra: []string{"POLYREPL_ACTIVITY=off"}}

	// A quiet client hears it as a note.
	e.runJSONWith(quiet, "exec", "bg", later("idle-one"))
	if !waitFor(10*time.Second, func() bool { return idleHas("idle-one") }) {
		t.Fatalf("the background print never reached the record: %+v", e.history("bg"))
	}
	r := e.runJSONWith(quiet, "exec", "bg", "1")
	if idle := r.notesOf("idle"); len(idle) != 1 || !strings.Contains(idle[0], "while no cell ran") || !strings.Contains(idle[0], "idle-one") || r.raw["activity"] != nil {
		t.Errorf("a quiet client after idle output: %v, want one idle note and no activity", r)
	}

	// A client that hears activity is told it from the record, once.
	e.runJSON("--label", "alice", "exec", "bg", later("idle-two"))
	if !waitFor(10*time.Second, func() bool { return idleHas("idle-two") }) {
		t.Fatalf("the second background print never reached the record")
	}
	r = e.runJSON("--label", "alice", "exec", "bg", "2")
	told := false
	if a := activityOf(t, r); a != nil {
		for _, en := range a.Entries {
			told = told || (en.Kind == "idle" && strings.Contains(en.Output, "idle-two"))
		}
	}
	if !told || len(r.notesOf("idle")) != 0 {
		t.Errorf("alice after idle output: %v, want it told as activity and no idle note", r)
	}
	if r := e.runJSON("--label", "alice", "exec", "bg", "3"); r.Activity != nil {
		t.Errorf("alice was told again: %+v", r.Activity)
	}
	// alice hearing it did not take it from the quiet client.
	r = e.runJSONWith(quiet, "exec", "bg", "4")
	if idle := r.notesOf("idle"); len(idle) != 1 || !strings.Contains(idle[0], "idle-two") || strings.Contains(idle[0], "idle-one") {
		t.Errorf("the quiet client after alice heard idle output: %v, want a note of idle-two only", r)
	}
}

// TestLogFollow: `log --follow` prints each entry's output as it grows,
// whole lines as printed (never cut in the middle of one), and
// `log --follow --json` sends a new entry once, then only what it
// printed next (with its offset), then its end: a script rebuilds the
// output from the chunks, and the stream is about the size of the output,
// not the whole entry again at every change.
func TestLogFollow(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "f", "x = 1") // entries 1 (created) and 2
	follow := func(args ...string) *testenv.Buffer {
		cmd := exec.Command(e.bin, append([]string{"log", "f", "--follow", "--since", "2"}, args...)...)
		cmd.Env = e.vars
		out := &testenv.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(os.Interrupt)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("log --follow %v ended with %v after SIGINT, want exit 0:\n%.2000s", args, err, out.String())
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Errorf("log --follow %v did not end on SIGINT", args)
			}
		})
		return out
	}
	js, text := follow("--json"), follow()

	const n = 20000
	code := fmt.Sprintf("import time\nfor i in range(%d): print('line', i)\nprint('50%%', end='', flush=True); time.sleep(0.5); print('\\r100%%')\n'end'", n)
	e.must(0, "exec", "f", code)
	var want strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	want.WriteString("100%\n")

	if !waitFor(20*time.Second, func() bool {
		return strings.Contains(js.String(), `"event":"end"`) && strings.Contains(text.String(), "[f#3 done]")
	}) {
		t.Fatalf("the followers did not see the cell end:\njson: %.3000s\ntext: %.3000s", js.String(), text.String())
	}

	type event struct {
		Event string `json:"event"`
		Entry *entry `json:"entry"`
		Out   *struct {
			ID      string `json:"id"`
			Seq     int    `json:"seq"`
			Offset  int    `json:"offset"`
			Text    string `json:"text"`
			Skipped int    `json:"skipped"`
			Pending string `json:"pending"`
		} `json:"output"`
	}
	var rebuilt strings.Builder
	var entries, ends int
	pending := false
	var last *entry
	for _, l := range strings.Split(strings.TrimSpace(js.String()), "\n") {
		var ev event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not a JSON event: %q: %v", l, err)
		}
		switch ev.Event {
		case "entry":
			entries++
			if ev.Entry.ID != "f#3" || ev.Entry.Status != "running" || ev.Entry.Output != "" {
				t.Errorf("the new entry: %+v, want f#3 running, its output to follow", ev.Entry)
			}
		case "output":
			o := ev.Out
			if o.ID != "f#3" || o.Offset != len([]rune(rebuilt.String())) || o.Skipped != 0 {
				t.Fatalf("an output chunk %s at offset %d (skipped %d), rebuilt so far %d characters", o.ID, o.Offset, o.Skipped, len([]rune(rebuilt.String())))
			}
			rebuilt.WriteString(o.Text)
			pending = pending || o.Pending == "50%"
		case "end":
			ends++
			last = ev.Entry
		default:
			t.Errorf("unknown event %q", l)
		}
	}
	if entries != 1 || ends != 1 {
		t.Errorf("%d entry events and %d end events, want one each", entries, ends)
	}
	if rebuilt.String() != want.String() {
		t.Errorf("the rebuilt output (%d characters) is not what the cell printed (%d)", rebuilt.Len(), want.Len())
	}
	if !pending {
		t.Errorf("the unfinished line '50%%' was never sent as pending")
	}
	if last == nil || last.Status != "done" || last.Output != "" || last.Display != "Out[2]: 'end'" {
		t.Errorf("the end event: %+v, want done with its value and without the output again", last)
	}
	if size := len(js.String()); size > 2*want.Len() {
		t.Errorf("the JSON stream is %d bytes for %d of output: entries are sent again whole", size, want.Len())
	}

	// The text follower printed every line whole, in order.
	scr := strings.ReplaceAll(text.String(), "50%\r", "")
	if !strings.Contains(scr, want.String()) {
		t.Errorf("log --follow did not print the output whole, line by line:\n%.3000s", text.String())
	}
	if !strings.Contains(scr, "── f#3 cell 2 · ") || !strings.Contains(scr, "Out[2]: 'end'\n[f#3 done]\n") {
		t.Errorf("log --follow lacks the entry's header or end:\n%.1000s", text.String())
	}

	// The entry in the record is cut at line ends, and says where its
	// whole output is.
	var en entry
	if err := json.Unmarshal([]byte(e.mustText("history", "f#3", "--json")), &en); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(en.Output, "\n") {
		if l != "" && !strings.HasPrefix(l, "line ") && !strings.HasPrefix(l, "[… ") && l != "100%" {
			t.Errorf("the recorded entry has a line cut in the middle: %q", l)
		}
	}
	if en.OutputCut == nil || en.OutputCut.File == "" {
		t.Fatalf("the recorded entry's cut %+v names no file", en.OutputCut)
	}
	if b, err := os.ReadFile(en.OutputCut.File); err != nil || !strings.HasPrefix(string(b), "line 0\n") || !strings.HasSuffix(string(b), "50%\r100%\n") {
		t.Errorf("the whole output's file %s: %v, %d bytes", en.OutputCut.File, err, len(b))
	}
	// So does the MCP history tool, showing the entry.
	agent := e.startMCP()
	if text := agent.call("history", map[string]any{"session": "f", "id": "f#3"}, nil); !strings.Contains(text, "the whole output is in "+en.OutputCut.File) {
		t.Errorf("the history tool does not say where the whole output is:\n%.500s", text[max(0, len(text)-500):])
	}
}
