package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestHostileNodeCell: issue 14's forged result (item 4) in a Node
// session: a cell that writes a fake done event to the worker's
// descriptors cannot replace a value or leave later cells one behind, and the
// end marker is not on the worker's command line.
func TestHostileNodeCell(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("needs node (Debian: nodejs)")
	}
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "hn", "--runtime", "node", "let kept = 7")
	// The cell, on the descriptors the worker was given (3 and 4);
	// writing to all of them would write into Node's own internals, a
	// crash the session reports like any other.
	forge := `const fs = require('fs'); for (const fd of [3, 4]) { try { fs.writeSync(fd, '{"op":"done","cell":3,"status":"done","value":"FAKE"}\n') } catch {} }; 'real'`
	out, _ := e.must(0, "exec", "hn", forge)
	wantContains(t, "the forging cell", out, "real")
	for i, want := range []string{"42", "7"} {
		code := []string{"40 + 2", "kept"}[i]
		out, _ := e.must(0, "exec", "hn", code)
		wantContains(t, "a later cell", out, want)
		wantLacks(t, "a later cell", out, "FAKE")
	}
	pid := e.session("hn").PID
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cmdline), "polyrepl-end") {
		t.Errorf("the end marker is on the worker's command line: %q", cmdline)
	}
	report(t, hostileSection, "node: a cell writing a forged done event to fds 3 and 4; the end marker looked for in /proc/PID/cmdline",
		"later cells right (their own values, the namespace kept); the marker comes in the environment, removed at start")
}

// TestHostileRubyCell: the same for a Ruby session.
func TestHostileRubyCell(t *testing.T) {
	if _, err := exec.LookPath("ruby"); err != nil {
		t.Skip("needs ruby (Debian: ruby)")
	}
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "hr", "--runtime", "ruby", "kept = 7")
	forge := `[3, 4].each { |fd| (IO.for_fd(fd, autoclose: false).syswrite("{\"op\":\"done\",\"cell\":3,\"status\":\"done\",\"value\":\"FAKE\"}\n") rescue nil) }; "real"`
	out, _ := e.must(0, "exec", "hr", forge)
	wantContains(t, "the forging cell", out, "real")
	for i, want := range []string{"42", "7"} {
		out, _ := e.must(0, "exec", "hr", []string{"40 + 2", "kept"}[i])
		wantContains(t, "a later cell", out, want)
		wantLacks(t, "a later cell", out, "FAKE")
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", e.session("hr").PID))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cmdline), "polyrepl-end") {
		t.Errorf("the end marker is on the worker's command line: %q", cmdline)
	}
	report(t, hostileSection, "ruby: a cell writing a forged done event to fds 3 and 4; the end marker looked for in /proc/PID/cmdline",
		"later cells right (their own values, the namespace kept); the marker comes in the environment, removed at start")
}
