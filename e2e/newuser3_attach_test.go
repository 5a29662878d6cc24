package e2e

import (
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
