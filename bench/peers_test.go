package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A cell goes to a REPL as code and expression, to a fresh process with
// the expression printed.
func TestPeerCellForms(t *testing.T) {
	c := peerCell{body: "x = 2", expr: "x + 1"}
	if got := c.repl(); got != "x = 2\nx + 1" {
		t.Errorf("repl() = %q", got)
	}
	if got := c.script(); got != "x = 2\nprint(x + 1)" {
		t.Errorf("script() = %q", got)
	}
	if got := (peerCell{expr: "1"}).script(); got != "print(1)" {
		t.Errorf("script() of an expression = %q", got)
	}
	if got := (peerCell{body: "pass"}).script(); got != "pass" {
		t.Errorf("script() of a statement = %q", got)
	}
	// python3 -i ends a block only at a blank line: no cell may hold one.
	for _, cells := range []peerCells{peerCellsPandas, peerCellsLists} {
		all := append([]peerCell{cells.build, cells.mistake, cells.fix, cells.long, {body: cells.plot}}, cells.questions...)
		for _, c := range all {
			for _, line := range strings.Split(c.repl(), "\n") {
				if strings.HasPrefix(line, " ") || strings.HasSuffix(strings.TrimSpace(line), ":") {
					t.Errorf("%s: the line %q opens or continues a block", c.what, line)
				}
			}
		}
		if len(cells.questions) != 6 {
			t.Errorf("%d questions, want six", len(cells.questions))
		}
	}
}

// peerRunOf is a run whose calls cost what the test says.
func peerRunOf(name string, toolList int, calls ...peerCall) *peerRun {
	return &peerRun{name: name, keepsState: name != peerRunner, toolList: toolList, tools: 1, calls: calls}
}

// The targets compare polyrepl with desktop-commander on the phases both
// do; later rounds count for time only; a skipped peer leaves them
// unmeasured.
func TestPeersTargets(t *testing.T) {
	pr := peerRunOf(peerPolyrepl, 6000,
		peerCall{phase: "build", text: 250, sc: 50, secs: 1},
		peerCall{phase: "q1", text: 10, sc: 10, secs: 0.010},
		peerCall{phase: "q2", text: 10, sc: 10, secs: 0.012},
		peerCall{phase: "q1", round: 1, text: 999, secs: 0.011},
		peerCall{phase: "long", text: 5000, secs: 5}, // not a common phase
	)
	dc := peerRunOf(peerDC, 60000,
		peerCall{phase: "build", tool: "start_process", text: 150, secs: 1},
		peerCall{phase: "build", text: 100, secs: 2},
		peerCall{phase: "q1", text: 20, secs: 0.070},
		peerCall{phase: "q2", text: 20, secs: 0.072},
		peerCall{phase: "q1", round: 1, text: 999, secs: 0.071},
	)
	res := &peersResult{runs: []*peerRun{pr, dc}, rounds: 2, cells: peerCellsPandas, data: "pandas"}
	a := pr.totals()
	if a.common != 340 || a.all != 5340 || a.calls != 4 || a.questions.n() != 3 {
		t.Errorf("polyrepl totals %+v", a)
	}
	ts := peersTargets(res)
	if len(ts) != 3 {
		t.Fatalf("%d targets", len(ts))
	}
	if !ts[0].known || !ts[0].met {
		t.Errorf("median 11 ms against 71 ms: %+v", ts[0])
	}
	if !ts[1].known || ts[1].met || !strings.Contains(ts[1].measured, "340 vs 290") {
		t.Errorf("replies 340 against 290 is missed, and measured so: %+v", ts[1])
	}
	if !ts[2].known || !ts[2].met || !strings.Contains(ts[2].measured, "6,340 vs 60,290") {
		t.Errorf("conversation: %+v", ts[2])
	}

	md := peersMarkdown(res)
	for _, want := range []string{"| polyrepl | yes | 1 (6,000) | 4 |", "| build | 1 · 1.00 s · 300 | 2 · 3.00 s · 250 |", "| long | 1 · 5.00 s · 5,000 | – |", "**missed**"} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}

	dc.skipped = "set POLYREPL_BENCH_PEERS | to a node_modules"
	for _, tg := range peersTargets(res) {
		if tg.known {
			t.Errorf("a target measured without desktop-commander: %+v", tg)
		}
	}
	if md := peersMarkdown(res); !strings.Contains(md, "skipped: set POLYREPL_BENCH_PEERS \\| to a node_modules") {
		t.Errorf("a skipped peer's row does not say why:\n%s", md)
	}
	// A call that failed leaves the characters unjudged.
	dc.skipped = ""
	dc.calls = append(dc.calls, peerCall{phase: "q3", err: "timeout"})
	if ts := peersTargets(res); ts[1].known || ts[2].known {
		t.Errorf("characters judged though a call failed: %+v", ts)
	}
	if md := peersMarkdown(res); !strings.Contains(md, "1 · 0 µs · 0 ✗") {
		t.Errorf("a failed call is not marked:\n%s", md)
	}
}

// A section that fails is reported as failed, with its error on one
// line of the table, and the run goes on; a panic is one too.
func TestFailedSectionsReported(t *testing.T) {
	r := &report{}
	r.guard("fine", func() error { return nil })
	r.guard("taking sessions up", func() error {
		return errors.New("stopping the daemon (pid 12): dial unix d.sock: connect: connection refused; its log ends:\n  a | b")
	})
	r.guard("plots", func() error { panic("a nil map") })
	if len(r.failed) != 2 || r.failed[0].section != "taking sessions up" || r.failed[1].section != "plots" {
		t.Fatalf("failed = %+v", r.failed)
	}
	if !strings.Contains(r.failed[1].err, "panic: a nil map") {
		t.Errorf("the panic's failure: %q", r.failed[1].err)
	}
	md := failedMarkdown(r.failed)
	if !strings.Contains(md, "| taking sessions up | stopping the daemon (pid 12): dial unix d.sock: connect: connection refused; its log ends: a \\| b |") {
		t.Errorf("the failure's row:\n%s", md)
	}
	if failedMarkdown(nil) != "" {
		t.Error("a run without failures has a failures section")
	}

	// The whole report says it near the top, and still renders with the
	// sections that did not run missing.
	r.cfg.python = "/usr/bin/python3"
	body := r.body()
	i, j := strings.Index(body, "## Sections that failed"), strings.Index(body, "## Round trip of the trivial cell")
	if i < 0 || j < 0 || i > j {
		t.Errorf("the failures are not listed before the tables:\n%s", body)
	}
	if len(r.took) != 3 || !strings.Contains(body, "## Where the run's time went") || !strings.Contains(body, "| plots |") {
		t.Errorf("the sections' times (%+v) are not in the report:\n%s", r.took, body)
	}
	if !strings.Contains(body, "| (issue 40) A question through `polyrepl mcp`: median at most a fifth of desktop-commander's | – | not measured |") {
		t.Errorf("a target of a section that did not run is not 'not measured':\n%s", body)
	}
}

// The end of a daemon's log explains a failure: its last lines, the
// daemon's own last lines among its holders', and a crash the last lines
// would miss.
func TestLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.log")
	lines := []string{"polyrepl[7] started", "panic: runtime error: invalid memory address", "goroutine 1 [running]:", "polyrepl[7] leaving: the daemon received hangup"}
	for i := range 30 {
		lines = append(lines, "polyrepl holder[9] line "+strings.Repeat("x", i))
	}
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	got := logTail(path, 3, "polyrepl[7] ")
	want := "  panic: runtime error: invalid memory address\n  polyrepl[7] started\n  polyrepl[7] leaving: the daemon received hangup\n" +
		"  polyrepl holder[9] line " + strings.Repeat("x", 27) + "\n  polyrepl holder[9] line " + strings.Repeat("x", 28) + "\n  polyrepl holder[9] line " + strings.Repeat("x", 29)
	if got != want {
		t.Errorf("logTail =\n%s\nwant\n%s", got, want)
	}
	if got := logTail(filepath.Join(t.TempDir(), "none"), 3, ""); !strings.Contains(got, "no log") {
		t.Errorf("a missing log: %q", got)
	}
	if got := clipLong("ééé", 3); got != "é … (4 bytes more)" {
		t.Errorf("clipLong cut a rune: %q", got)
	}
}

// A killed daemon is gone once nothing takes connections at its socket.
func TestAccepts(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	if accepts(sock) {
		t.Error("a socket that does not exist accepts")
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	if !accepts(sock) {
		t.Error("a listening socket does not accept")
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if accepts(sock) {
		t.Error("a socket nothing listens on (its file left) accepts")
	}
}
