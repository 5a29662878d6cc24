package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The console a person uses beside an agent (issue 35, item 12), driven
// through a pseudo-terminal as a person would use it.

// TestAttachRawShowsAPrompt: attached raw to an sh session, a person sees
// a prompt where the shell waits for a command — at once, after their own
// command, and after another client's cell — and the prompt is not in the
// record (it is the console's, not the session's output).
func TestAttachRawShowsAPrompt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "term", "--runtime", "sh", "x=41")

	con := e.onTerminal("attach", "term", "--raw", "--label", "dana")
	con.expect("start", "Attached to the terminal of session 'term' as dana", "running).\r\n$ ")
	con.send("echo typed-$((x+1))\r")
	con.expect("a typed command", "$ echo typed-$((x+1))\r\n", "typed-42\r\n$ ")
	e.must(0, "exec", "term", "echo from-a-cell")
	con.expect("another client's cell", "from-a-cell\r\n$ ")
	prompts := strings.Count(con.scr.String(), "$ ")
	con.send("\x03")
	if !waitFor(10*time.Second, func() bool { return strings.Count(con.scr.String(), "$ ") > prompts }) {
		t.Errorf("Ctrl-C at the prompt shows no new prompt:\n%s", con.scr.String())
	}
	for _, en := range e.history("term") {
		if strings.Contains(en.Output, "$ ") {
			t.Errorf("the record holds the console's prompt: %+v", en)
		}
	}
	con.send("\x1d")
	if err := con.exit("Ctrl-]"); err != nil {
		t.Errorf("attach --raw ended with %v after Ctrl-], want exit 0", err)
	}
}

// after is what the screen shows after the last mark, or "".
func after(scr, mark string) string {
	i := strings.LastIndex(scr, mark)
	if i < 0 {
		return ""
	}
	return scr[i+len(mark):]
}

// TestAttachQueuesALineTypedWhileBusy: a line typed while another
// client's cell runs is kept, said to be queued (in the console's words,
// not a command), and runs when the cell ends; Ctrl-C drops the queue and
// leaves the other client's cell running.
func TestAttachQueuesALineTypedWhileBusy(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "q", "import time")
	con := e.onTerminal("attach", "q", "--label", "carol")
	con.expect("start", "Attached to session 'q'")

	e.must(124, "--label", "alice", "exec", "q", "time.sleep(4); print('alice done')", "-t", "0.5")
	con.expect("alice's cell shows", "time.sleep(4); print('alice done')")
	con.send("print('typed while busy')\r")
	con.expect("the line is queued", "[Queued: your line runs when cell 2 (alice via cli) ends. Ctrl-C drops it.]")
	con.expect("the queued line runs after alice's cell", "alice done", "typed while busy\r\n")
	if scr := con.scr.String(); strings.Index(scr, "alice done") > strings.LastIndex(scr, "typed while busy\r\n") {
		t.Errorf("the queued line ran before alice's cell ended:\n%s", scr)
	}
	var carol, alice int
	for _, en := range e.history("q") {
		switch en.Code {
		case "print('typed while busy')":
			carol = en.Seq
			if en.Who != "carol" || en.Status != "done" {
				t.Errorf("the queued line's entry: %+v", en)
			}
		case "time.sleep(4); print('alice done')":
			alice = en.Seq
		}
	}
	if carol == 0 || carol < alice {
		t.Errorf("the queued line's entry is %d, alice's %d: want it recorded after alice's", carol, alice)
	}

	// Two lines queued, then Ctrl-C: both dropped, alice's cell goes on.
	e.must(124, "--label", "alice", "exec", "q", "time.sleep(3); print('alice again')", "-t", "0.5")
	con.expect("alice's second cell shows", "print('alice again')")
	con.send("print('never one')\r")
	con.expect("the first line is queued", "[Queued: your line runs when cell 4 (alice via cli) ends. Ctrl-C drops it.]")
	con.send("print('never two')\r")
	con.expect("the second line is queued", "[Queued: 2 typed lines wait and run in order when cell 4 (alice via cli) ends. Ctrl-C drops them.]")
	con.send("\x03")
	con.expect("Ctrl-C drops the queue", "[Dropped 2 queued lines; they were not run. Ctrl-C again interrupts the running cell.]")
	con.expect("alice's cell is not interrupted", "alice again\r\n", "[q#5 done]")
	time.Sleep(time.Second)
	for _, en := range e.history("q") {
		if strings.Contains(en.Code, "never") {
			t.Errorf("a dropped line ran: %+v", en)
		}
	}
	if scr := con.scr.String(); strings.Contains(scr, "polyrepl wait") || strings.Contains(scr, "not run:") {
		t.Errorf("the console names a command or drops a line:\n%s", scr)
	}
	con.send("\x04")
	if err := con.exit("Ctrl-D"); err != nil {
		t.Errorf("attach ended with %v after Ctrl-D, want exit 0", err)
	}
}

// TestAttachShowsTheQuestionsPrompt: while a cell asks for input — the
// person's own or another client's — the console's prompt is the
// question's own, not the session's name, and the line typed answers it;
// a secret asked for is typed unseen.
func TestAttachShowsTheQuestionsPrompt(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "qa", "x = 1")
	con := e.onTerminal("attach", "qa", "--label", "carol")
	con.expect("start", "Attached to session 'qa'")

	con.send("name = input('name? ')\r")
	con.expect("the person's own cell asks", "[Cell 2 asks for input. The line you type answers it; Ctrl-C interrupts the cell.]\r\n")
	if !waitFor(10*time.Second, func() bool {
		return strings.HasSuffix(after(con.scr.String(), "interrupts the cell.]\r\n"), "name? ")
	}) {
		t.Fatalf("the prompt is not the question's own:\n%q", after(con.scr.String(), "asks for input"))
	}
	con.send("Ada\r")
	con.send("print('hello', name)\r")
	con.expect("the answer, then a cell", "hello Ada")
	// The answer as typed is erased (up a line, cleared): the record's
	// echo of it shows instead.
	got := after(con.scr.String(), "interrupts the cell.]\r\n")
	if n := strings.Count(got, "name? Ada") - strings.Count(got, "name? Ada\r\n\x1b[A\r\x1b[2K"); n != 1 {
		t.Errorf("the answer shows %d times, want once:\n%q", n, got)
	}

	// Another client's question: the console learns of it and shows its
	// prompt; the line typed answers it.
	if _, _, code := e.run("--label", "alice", "exec", "qa", "size = input('size? '); print('got', size)", "-t", "0.5"); code != 3 {
		t.Fatalf("alice's question: exit %d, want 3", code)
	}
	con.expect("another client's question", "[Cell 4 (alice via cli) asks for input. The line you type answers it; Ctrl-C interrupts the cell.]\r\n")
	if !waitFor(10*time.Second, func() bool {
		return strings.HasSuffix(after(con.scr.String(), "interrupts the cell.]\r\n"), "size? ")
	}) {
		t.Fatalf("the prompt is not alice's question:\n%q", after(con.scr.String(), "(alice via cli) asks"))
	}
	con.send("big\r")
	con.expect("alice's cell takes the answer", "got big")
	if !waitFor(10*time.Second, func() bool { return strings.HasSuffix(con.scr.String(), "qa> ") }) {
		t.Errorf("after the answer the prompt is not the session's again:\n%q", after(con.scr.String(), "got big"))
	}

	// A question for a secret: what is typed is not shown (backspace
	// still takes a character back), and the answer reaches the cell.
	con.send("import getpass; pw = getpass.getpass('pw? ')\r")
	con.expect("a secret's question", "It asks for a secret: what you type is not shown")
	con.send("hunterX\x7f2\r")
	con.send("print(len(pw), pw[::-1])\r")
	con.expect("the secret reached the cell", "7 2retnuh")
	if strings.Contains(con.scr.String(), "hunter") {
		t.Errorf("the console showed the secret:\n%s", con.scr.String())
	}
	con.send("\x04")
	if err := con.exit("Ctrl-D"); err != nil {
		t.Errorf("attach ended with %v after Ctrl-D, want exit 0", err)
	}
}

// TestAttachIndentsABlock: after a line ending in ':' the next line
// starts indented four spaces more, the line after keeps its indentation,
// the continuation prompt stays, and an empty line (or one of spaces
// alone) sends the block (an open brace, as in R, is in TestIndentAfter).
func TestAttachIndentsABlock(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "ind", "x = 1")
	con := e.onTerminal("attach", "ind", "--label", "carol")
	con.expect("start", "Attached to session 'ind'")

	con.send("for i in range(3):\r")
	con.expect("the block's first line", "for i in range(3):\r\n...> ")
	if !waitFor(10*time.Second, func() bool { return strings.HasSuffix(con.scr.String(), "...>     ") }) {
		t.Fatalf("the continuation line does not start indented:\n%q", after(con.scr.String(), "range(3):"))
	}
	con.send("if i:\r")
	if !waitFor(10*time.Second, func() bool { return strings.HasSuffix(con.scr.String(), "...>         ") }) {
		t.Fatalf("the line after 'if i:' does not start 8 spaces in:\n%q", after(con.scr.String(), "range(3):"))
	}
	con.send("print('row', i)\r")
	if !waitFor(10*time.Second, func() bool { return strings.HasSuffix(con.scr.String(), "...>         ") }) {
		t.Fatalf("the line after print does not keep its indentation:\n%q", after(con.scr.String(), "row"))
	}
	con.send("\r") // a line of the indentation alone ends the block
	con.expect("the block runs", "row 1\r\nrow 2\r\n")
	var code string
	for _, en := range e.history("ind") {
		if strings.HasPrefix(en.Code, "for i") {
			code = en.Code
		}
	}
	if want := "for i in range(3):\n    if i:\n        print('row', i)"; code != want {
		t.Errorf("the block sent is %q, want %q", code, want)
	}
	con.send("\x04")
	if err := con.exit("Ctrl-D"); err != nil {
		t.Errorf("attach ended with %v after Ctrl-D, want exit 0", err)
	}
}

// TestAttachSaysAFigureWasMade: a cell that made a figure — typed in the
// console, or run by another client, in Python or R — ends in the
// console with a line saying so and where the figure's file is (the
// record printer's, shared with log).
func TestAttachSaysAFigureWasMade(t *testing.T) {
	needPython(t)
	if err := exec.Command(python, "-c", "import matplotlib").Run(); err != nil {
		t.Skipf("%s has no matplotlib (Debian: python3-matplotlib)", python)
	}
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "figs", "import matplotlib.pyplot as plt")
	con := e.onTerminal("attach", "figs", "--label", "carol")
	con.expect("start", "Attached to session 'figs'")

	figure := regexp.MustCompile(`\[image 1: (\d+)×(\d+) PNG, [0-9.]+ [KM]?B → (\S+\.png)\]\r\n\[figs#(\d+) done\]`)
	con.send("plt.plot([1, 4, 9])\r")
	con.expect("a typed cell's figure", "]\r\n[figs#3 done]\r\n")
	m := figure.FindStringSubmatch(con.scr.String())
	if m == nil || m[4] != "3" {
		t.Fatalf("no figure line for the typed cell:\n%s", con.scr.String())
	}
	if fi, err := os.Stat(m[3]); err != nil || fi.Size() == 0 {
		t.Errorf("the figure's file %s: %v", m[3], err)
	}

	e.must(0, "--label", "alice", "exec", "figs", "plt.figure(); plt.plot([2, 1]); plt.show()")
	con.expect("another client's figure", ".png]\r\n[figs#4 done]")

	if found, _ := runtimeFound(e, "r"); found {
		e.must(0, "exec", "rfig", "--runtime", "r", "z <- c(3, 1, 2)")
		rc := e.onTerminal("attach", "rfig", "--label", "carol")
		rc.expect("start", "Attached to session 'rfig'")
		rc.send("plot(z)\r")
		rc.expect("R's figure", "[image 1: ", ".png]\r\n[rfig#3 done]")
		rc.send("\x04")
		rc.exit("Ctrl-D")
	}
	con.send("\x04")
	if err := con.exit("Ctrl-D"); err != nil {
		t.Errorf("attach ended with %v after Ctrl-D, want exit 0", err)
	}
}

// TestAttachCompletesNames: Tab completes the word before the cursor by
// the runtime's own completion on the live namespace (Python's
// rlcompleter: names, keywords, attributes after a dot, a DataFrame's
// columns) as far as the choices agree, then lists them; at the start of a
// line it indents. A completion is no cell: the record gains no entry and
// the session's output nothing. While a cell runs, Tab completes from the
// session's names.
func TestAttachCompletesNames(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "tab", "total_count = 41; total_sum = 2; word = 'abc'\nimport time")
	con := e.onTerminal("attach", "tab", "--label", "carol")
	con.expect("start", "Attached to session 'tab'")
	suffix := func(what, want string) {
		t.Helper()
		if !waitFor(10*time.Second, func() bool { return strings.HasSuffix(con.scr.String(), want) }) {
			t.Fatalf("%s: the line does not end in %q:\n%q", what, want, after(con.scr.String(), "tab> "))
		}
	}
	entries := len(e.history("tab"))

	con.send("tot\t")
	suffix("Tab to the names' common prefix", "total_")
	con.send("\t")
	con.expect("a second Tab lists the choices", "total_count  total_sum\r\n")
	con.send("c\t + 1\r")
	// Its end line too: the value shows before the end reaches the
	// daemon, and Tab then would complete from names alone.
	con.expect("the completed name runs", "total_count + 1\r\n", "Out[2]: 42", "[tab#3 done]")
	entries++

	con.send("word.upp\t")
	if !waitFor(10*time.Second, func() bool {
		scr := con.scr.String()
		return strings.HasSuffix(scr, "word.upper(") || strings.HasSuffix(scr, "word.upper()") // "()" where it takes no arguments (3.11)
	}) {
		t.Fatalf("an attribute after a dot: %q", after(con.scr.String(), "tab> "))
	}
	if !strings.HasSuffix(con.scr.String(), "()") {
		con.send(")")
	}
	con.send("\r")
	con.expect("the completed method runs", "Out[3]: 'ABC'")
	entries++

	con.send("impo\t")
	suffix("a keyword", "import ")
	con.send("\x15") // Ctrl-U: the line goes
	if n := len(e.history("tab")); n != entries {
		t.Errorf("the record has %d entries after completions, want %d: a completion is no cell", n, entries)
	}

	if exec.Command(python, "-c", "import pandas").Run() == nil {
		e.must(0, "exec", "tab", "import pandas as pd; df = pd.DataFrame({'colour': [1], 'count_': [2]})")
		con.send("df.colo\t")
		suffix("a DataFrame's column", "df.colour")
		con.send("\x15")
	}

	// While a cell runs, the session's names.
	e.must(124, "--label", "alice", "exec", "tab", "time.sleep(3)", "-t", "0.5")
	con.expect("alice's cell", "time.sleep(3)")
	con.send("total_s\t")
	suffix("Tab while a cell runs", "total_sum")
	con.send("\x15")

	con.send("\x04")
	if err := con.exit("Ctrl-D"); err != nil {
		t.Errorf("attach ended with %v after Ctrl-D, want exit 0", err)
	}
}

// TestAttachCompletesNode: Node's worker completes too: a top-level let,
// a keyword, a string's methods after a dot.
func TestAttachCompletesNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "node", "nodejs")
	e.must(0, "exec", "js", "--runtime", "node", "let totalCount = 41; const greeting = 'hi'")
	con := e.onTerminal("attach", "js", "--label", "carol")
	con.expect("start", "Attached to session 'js'")
	suffix := func(what, want string) {
		t.Helper()
		if !waitFor(10*time.Second, func() bool { return strings.HasSuffix(con.scr.String(), want) }) {
			t.Fatalf("%s: the line does not end in %q:\n%q", what, want, after(con.scr.String(), "js> "))
		}
	}
	con.send("totalC\t")
	suffix("a top-level let", "totalCount")
	con.send(" + 1\r")
	// The value shows before the cell's end reaches the daemon: Tab
	// then would complete from names alone; its end line says it is free.
	con.expect("the completed name runs", "42", "[js#3 done]")
	con.send("greeting.toUpp\t")
	suffix("a string's method", "greeting.toUpperCase")
	con.send("()\r")
	con.expect("the completed method runs", "'HI'")
	con.send("typeo\t")
	suffix("a keyword", "typeof")
	con.send("\x15\x04")
	if err := con.exit("Ctrl-D"); err != nil {
		t.Errorf("attach ended with %v after Ctrl-D, want exit 0", err)
	}
}
