package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// Bounds at the door: what enters from outside — a cell's question, an
// answer, code on standard input, a client's label, the listing of other
// sessions — reaches every reply bounded, the cut said, or is refused
// with the limit and its real size.

const boundsSection = "9 Bounds at the door"

// replyBound is what a reply that carries a bounded text may weigh:
// 30,000 characters of output and 2,000 of a prompt, with room to spare.
const replyBound = 40 << 10

// promptOf is the prompt a --json cell result carries.
func promptOf(r cellResult) (text string, total int) {
	p, _ := r.raw["prompt"].(map[string]any)
	text, _ = p["text"].(string)
	t, _ := p["total"].(float64)
	return text, int(t)
}

// TestBoundsQuestion: a cell that asks a question of a million characters
// (Python's input("P"*1_000_000)) is answered small everywhere it shows:
// the exec that asked, sessions, an unrelated session's exec (its note
// about other sessions), wait, and the MCP server's wait and sessions.
// One of five million characters, whose event was once over the worker's
// limit and dropped, leaving the cell running with nobody told, asks as
// well, and its answer reaches the cell.
func TestBoundsQuestion(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "in5", "1")

	stdout, _, code := e.run("exec", "in5", `input("P"*1_000_000)`, "--json")
	var r cellResult
	json.Unmarshal([]byte(stdout), &r)
	json.Unmarshal([]byte(stdout), &r.raw)
	text, total := promptOf(r)
	if code != 3 || r.Status != "input" || total != 1_000_000 || !strings.Contains(text, "characters cut") || len(stdout) > replyBound {
		t.Errorf("exec --json: exit %d, status %s, %d bytes, prompt of %d bytes (total %d)", code, r.Status, len(stdout), len(text), total)
	}
	report(t, boundsSection, "`exec in5 'input(\"P\"*1_000_000)' --json`", "exit %d, %s of JSON (was 3.0 MB); the prompt %d characters, total %d, the cut said", code, kb(len(stdout)), len([]rune(text)), total)

	stdout, _, _ = e.run("sessions", "--json")
	if len(stdout) > replyBound || !strings.Contains(stdout, "characters cut") {
		t.Errorf("sessions --json: %d bytes: %s", len(stdout), clip(stdout))
	}
	people, _, _ := e.run("sessions")
	if len(people) > 4<<10 || !strings.Contains(people, "characters cut") {
		t.Errorf("sessions: %d bytes: %s", len(people), clip(people))
	}
	report(t, boundsSection, "`sessions` while in5 asks that question", "%s of JSON, %s of text (was 1.0 MB), the cut said", kb(len(stdout)), kb(len(people)))

	stdout, _, code = e.run("exec", "other", "2+2", "--json")
	if code != 0 || len(stdout) > replyBound || !strings.Contains(stdout, "waits for input") {
		t.Errorf("an unrelated exec: exit %d, %d bytes: %s", code, len(stdout), clip(stdout))
	}
	report(t, boundsSection, "an unrelated session's `exec --json` (its note about in5)", "exit %d, %s (was 1.0 MB)", code, kb(len(stdout)))

	stdout, _, code = e.run("wait", "in5", "--json")
	if code != 3 || len(stdout) > replyBound {
		t.Errorf("wait --json: exit %d, %d bytes", code, len(stdout))
	}
	report(t, boundsSection, "`wait in5 --json`", "exit %d, %s", code, kb(len(stdout)))

	m := e.startMCP()
	wr, wtext := m.cell("wait", map[string]any{"session": "in5", "timeout": 0})
	stxt := m.call("sessions", map[string]any{}, nil)
	if wr.Status != "input" || len(wtext) > 12<<10 || len(stxt) > 12<<10 {
		t.Errorf("MCP: wait %s, %d bytes of text; sessions %d bytes", wr.Status, len(wtext), len(stxt))
	}
	report(t, boundsSection, "MCP `wait` and `sessions` while in5 asks it", "wait: %s of text (was 1 MB), sessions: %s (was 2.0 MB)", kb(len(wtext)), kb(len(stxt)))
	m.close()

	r = e.runJSON("input", "in5", "yes")
	if r.code != 0 || r.Value != "'yes'" {
		t.Errorf("the answer: %s", r)
	}

	start := time.Now()
	stdout, _, code = e.run("exec", "in5", `input("Q"*5_000_000)`, "--json")
	r = cellResult{}
	json.Unmarshal([]byte(stdout), &r)
	json.Unmarshal([]byte(stdout), &r.raw)
	text, total = promptOf(r)
	if code != 3 || r.Status != "input" || total != 5_000_000 || len(stdout) > replyBound {
		t.Errorf("a 5 MB prompt: exit %d, status %s, %d bytes, total %d", code, r.Status, len(stdout), total)
	}
	asked := time.Since(start)
	r = e.runJSON("input", "in5", "ok")
	if r.code != 0 || r.Value != "'ok'" {
		t.Errorf("the answer to the 5 MB prompt: %s", r)
	}
	report(t, boundsSection, "`exec in5 'input(\"Q\"*5_000_000)'` (its event was over the 4 MiB limit and dropped: the cell ran on, nobody told)",
		"status input after %s, %s of JSON, total %d; answered, value %s", asked.Round(10*time.Millisecond), kb(len(stdout)), total, r.Value)
}

// TestBoundsStdin: code and answers on standard input reach the cell
// exactly, or are refused with the limit and their real size, exit 2,
// and nothing is sent.
func TestBoundsStdin(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	const limit = 2 << 20
	ask := func() {
		t.Helper()
		if r := e.runJSON("exec", "in", "x = input()\n(len(x), x[-3:])", "-t", "0"); r.Status != "input" && r.Status != "running" {
			t.Fatalf("the question: %s", r)
		}
		if !waitFor(20*time.Second, func() bool {
			s := e.session("in")
			return s.Running != nil && s.Running.Input != nil
		}) {
			t.Fatal("the cell did not ask")
		}
	}
	ask()
	line := strings.Repeat("y", 10<<20) + "END"
	_, stderr, code := e.runIn(line, "input", "in", "-")
	want := fmt.Sprintf("the answer on standard input is %d bytes; the limit is %d bytes", len(line), limit)
	if code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("a 10 MB answer: exit %d: %s", code, stderr)
	}
	s := e.session("in")
	if s.Running == nil || s.Running.Input == nil {
		t.Errorf("the question is gone after a refused answer: %+v", s.Running)
	}
	report(t, boundsSection, "`polyrepl input in -` with a 10 MB line ending END", "exit %d: %s; the cell still asks", code, strings.TrimPrefix(firstLine(strings.TrimSpace(stderr)), "polyrepl: error: "))

	exact := strings.Repeat("z", limit-3) + "END"
	r := e.runJSONWith(runOpts{stdin: exact + "\nnext line\n"}, "input", "in", "-")
	if wantValue := fmt.Sprintf("(%d, 'END')", limit); r.code != 0 || r.Value != wantValue {
		t.Errorf("an answer of exactly the limit: %s; want value %s", r, wantValue)
	}
	report(t, boundsSection, "`polyrepl input in -` with a line of exactly 2 MiB ending END", "exit %d, the cell read %s", r.code, r.Value)

	code3 := "# " + strings.Repeat("c", 3_000_010) + "\n"
	_, stderr, code = e.runIn(code3, "exec", "big", "-")
	want = fmt.Sprintf("the code on standard input is %d bytes; the limit is %d bytes", len(code3), limit)
	if code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("3 MB of code: exit %d: %s", code, stderr)
	}
	for _, s := range e.sessions() {
		if s.Name == "big" {
			t.Errorf("a session was made for refused code: %+v", s)
		}
	}
	report(t, boundsSection, "`polyrepl exec big -` with 3,000,013 bytes of code", "exit %d: %s", code, strings.TrimPrefix(firstLine(strings.TrimSpace(stderr)), "polyrepl: error: "))

	body := fmt.Sprintf(`{"code":%q,"client":{"who":"t","how":"api"}}`, "#"+strings.Repeat("c", 3<<20))
	resp, err := e.api().Post("http://polyrepl/v1/sessions/in/exec", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(msg), fmt.Sprintf("the code is %d bytes", 3<<20+1)) {
		t.Errorf("the daemon's refusal of 3 MiB of code: %d %s", resp.StatusCode, msg)
	}
	report(t, boundsSection, "3 MiB of code to the API", "%d: the code is %d bytes, the limit named", resp.StatusCode, 3<<20+1)
}

// TestBoundsLabel: a client's label of 3 MB (the API takes what a
// command line cannot) is cut where it enters, the cut said: sessions,
// a refused exec and the record name the sender in a few words.
func TestBoundsLabel(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "lab", "1")
	label := strings.Repeat("L", 3<<20)
	body := fmt.Sprintf(`{"code":"import time; time.sleep(60)","timeout":0,"client":{"who":%q,"how":"api"}}`, label)
	resp, err := e.api().Post("http://polyrepl/v1/sessions/lab/exec", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	reply, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	list, _, _ := e.run("sessions", "--json")
	_, busy, code := e.run("exec", "lab", "2")
	hist, _, _ := e.run("log", "lab")
	for what, text := range map[string]string{"the reply": string(reply), "sessions --json": list, "the busy refusal": busy, "log": hist} {
		if len(text) > 8<<10 {
			t.Errorf("%s is %d bytes: %s", what, len(text), clip(text))
		}
	}
	if !strings.Contains(list, "label cut: 3,145,728 characters in all") || !strings.Contains(busy, "label cut") || code != 2 {
		t.Errorf("the cut is not said: sessions %s; exec exit %d: %s", clip(list), code, busy)
	}
	e.must(0, "interrupt", "lab")
	report(t, boundsSection, "a 3 MB label (API client.who)", "reply %s, sessions --json %s, busy refusal %s, log %s; the label kept as 100 characters and \"[label cut: 3,145,728 characters in all; showing the first 100]\"",
		kb(len(reply)), kb(len(list)), kb(len(busy)), kb(len(hist)))

	long := strings.Repeat("M", 100_000)
	_, _, code = e.run("--label", long, "exec", "lab", "3")
	list, _, _ = e.run("log", "lab")
	if code != 0 || len(list) > 8<<10 {
		t.Errorf("a 100 KB --label: exit %d, log %d bytes", code, len(list))
	}
	report(t, boundsSection, "`--label` of 100,000 characters", "exit %d; log %s", code, kb(len(list)))
}

// TestBoundsOthersNote: with many sessions holding results nobody
// collected, a reply's note about other sessions lists ten and counts the
// rest, for the CLI and the MCP server alike; later replies list the rest.
func TestBoundsOthersNote(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "sh", "dash")
	const n = 40
	for i := range n {
		e.must(0, "exec", fmt.Sprintf("s%02d", i), "--runtime", "sh", "echo hi")
	}
	// Each now runs a cell nobody will collect: its result is news. The
	// cell outlasts its exec's timeout of 0, so no exec collects it.
	for i := range n {
		e.run("exec", fmt.Sprintf("s%02d", i), "-t", "0", "sleep 1; echo done")
	}
	if !waitFor(30*time.Second, func() bool {
		for _, s := range e.sessions() {
			if s.Running != nil {
				return false
			}
		}
		return true
	}) {
		t.Fatal("the cells did not end")
	}
	m := e.startMCP()
	_, mtext := m.cell("exec", map[string]any{"session": "mine2", "runtime": "sh", "code": "echo x"})
	// The note is polyrepl's words: on standard error.
	_, text, code := e.run("--label", "fresh", "exec", "mine", "--runtime", "sh", "echo x")
	if code != 0 || len(text) > 4<<10 || !strings.Contains(text, "30 more sessions need attention") {
		t.Errorf("the CLI's note: exit %d, %d bytes: %s", code, len(text), text)
	}
	if len(mtext) > 4<<10 || !strings.Contains(mtext, "more sessions need attention") || !strings.Contains(mtext, "the sessions tool") {
		t.Errorf("the MCP server's note: %d bytes: %s", len(mtext), mtext)
	}
	listed := strings.Count(text, "has output nobody collected")
	_, text2, _ := e.run("--label", "fresh", "exec", "mine", "echo y")
	report(t, boundsSection, fmt.Sprintf("%d sessions with results nobody collected: the note about other sessions", n),
		"CLI %s (was 8.9 KB for 150, growing with each), %d listed and \"30 more sessions need attention\"; the next reply lists the next %d; MCP %s",
		kb(len(text)), listed, strings.Count(text2, "has output nobody collected"), kb(len(mtext)))
	if listed != 10 || strings.Count(text2, "has output nobody collected") != 10 {
		t.Errorf("listed %d, then %d; want 10 and 10", listed, strings.Count(text2, "has output nobody collected"))
	}
}

// kb says a size for a report row.

// TestBoundsWorkerErrors: a cell that raises an error of 6 M characters
// in a worker runtime ends with the error cut and said, and the session
// goes on. The event carrying it was over the daemon's 4 MiB limit, its
// head named no nonce, and it was dropped as a stray: the cell stayed
// running for good (Ruby, Node) — each worker now cuts its error (and
// saves the whole where it can) and sends the cell, nonce and status
// first.
func TestBoundsWorkerErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ runtime, install, code, next, want string }{
		{"ruby", "ruby", `raise "x"*6_000_000`, "1+1", "2"},
		{"node", "nodejs", `throw new Error("x".repeat(6000000))`, "1+1", "2"},
		{"java", "default-jdk-headless", `throw new RuntimeException("x".repeat(6000000));`, "1+1", "2"},
	} {
		t.Run(c.runtime, func(t *testing.T) {
			e := newEnv(t)
			needRuntime(t, e, c.runtime, c.install)
			start := time.Now()
			r := e.runJSON("exec", "w", "--runtime", c.runtime, "-t", "120", c.code)
			took := time.Since(start)
			msgCut, _ := r.raw["error"].(map[string]any)
			cutInfo, _ := msgCut["message_cut"].(map[string]any)
			if cutInfo == nil {
				cutInfo, _ = msgCut["traceback_cut"].(map[string]any)
			}
			total, _ := cutInfo["total"].(float64)
			if r.Status != "error" || total < 6_000_000 || len(r.raw) == 0 {
				t.Errorf("the cell: %s", clip(r.String()))
			}
			n := e.runJSON("exec", "w", c.next)
			if n.Value != c.want && !strings.Contains(n.Output, c.want) {
				t.Errorf("the session after it: %s", n)
			}
			file, _ := cutInfo["file"].(string)
			report(t, boundsSection, fmt.Sprintf("%s: a cell raising an error of 6,000,000 characters (once left running for good)", c.runtime),
				"status %s after %s, the cut said (%d characters in all; whole file: %v); the next cell ran", r.Status, took.Round(100*time.Millisecond), int(total), file != "")
		})
	}
}
