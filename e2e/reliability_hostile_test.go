package e2e

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The hostile cells of issue 14: cells that attack the session's own
// plumbing, or raise errors of unusual size. Each must leave the session
// alive with its namespace, and the cells after it right.

const hostileSection = "6 Hostile cells"

// hostileSession starts a Python session holding kept = 41, for a test to
// check that a hostile cell left the namespace alone.
func hostileSession(t *testing.T, name string) (*env, sessionInfo) {
	t.Helper()
	needPython(t)
	e := newEnv(t)
	if r := e.runJSON("exec", name, "kept = 41"); r.Status != "done" {
		t.Fatalf("the first cell: %v", r)
	}
	return e, e.session(name)
}

// wantAlive checks that the session is the life it was, its namespace
// kept, and that it runs the next cell with the right number.
func wantAlive(t *testing.T, e *env, name string, before sessionInfo) cellResult {
	t.Helper()
	r := e.runJSON("exec", name, "kept + 1")
	if r.Status != "done" || r.Value != "42" || r.Generation != before.Generation {
		t.Errorf("the cell after: want 42 from the same life (generation %s): %v", before.Generation, r)
	}
	if s := e.session(name); s.PID != before.PID || s.State == "dead" {
		t.Errorf("the session after: pid %d (was %d), state %s", s.PID, before.PID, s.State)
	}
	return r
}

// vmRSS is a process's resident memory in kB, from /proc/PID/status.
func vmRSS(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the daemon's memory: %v", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return kb
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// procField is field n (1-based, as in proc(5)) of /proc/PID/stat.
func procField(pid, n int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if n-3 < 0 || n-3 >= len(f) {
		return ""
	}
	return f[n-3]
}

// TestReliabilityHostileHugeErrors raises errors and makes names far over
// every bound: the worker cuts them (saying so), the daemon never holds
// them, and the session lives on with its namespace.
func TestReliabilityHostileHugeErrors(t *testing.T) {
	t.Parallel()
	e, before := hostileSession(t, "huge")
	daemon := e.status().PID
	e.runJSON("exec", "huge", "raise ValueError('warm')") // the first error path, before measuring
	rss0 := vmRSS(t, daemon)

	r := e.runJSON("exec", "huge", `d = {"k": 1}; key = "é" * 6_000_000; d[key]`)
	if r.Status != "error" || r.Error == nil || r.Error.Type != "KeyError" ||
		!strings.Contains(r.Error.Message, "characters cut") || len([]rune(r.Error.Message)) > 20_000 {
		t.Errorf("a KeyError of a 6 M-character key: want status error, a KeyError whose message says what was cut: %.600s", r.String())
	}
	wantAlive(t, e, "huge", before)

	r = e.runJSON("exec", "huge", `raise ValueError("e" * 70_000_000)`)
	rss1 := vmRSS(t, daemon)
	message := 0
	if r.Error != nil {
		message = len([]rune(r.Error.Message))
	}
	if r.Status != "error" || r.Error == nil || r.Error.Type != "ValueError" ||
		!strings.Contains(r.Error.Message, "69,995,000 characters cut") || len(r.Error.Traceback) > 100_000 {
		t.Errorf("a 70 MB ValueError: want status error, its message cut and saying so: %.600s", r.String())
	}
	if grown := rss1 - rss0; grown > 20*1024 {
		t.Errorf("the daemon's memory grew by %d kB (from %d kB) after a 70 MB exception; want at most 20 MB", grown, rss0)
	}
	wantAlive(t, e, "huge", before)

	r = e.runJSON("exec", "huge", "for i in range(5): globals()[chr(97 + i) * 20_000_000] = i")
	if r.Status != "done" {
		t.Errorf("five globals with 20 MB names: %.600s", r.String())
	}
	wantAlive(t, e, "huge", before)
	s := e.session("huge")
	long := 0
	for _, n := range s.Names {
		if strings.HasPrefix(n, "aaaa") || strings.HasPrefix(n, "eeee") {
			long++
			if len(n) > 1000 || !strings.Contains(n, "characters cut") {
				t.Errorf("a 20 MB name is listed as %d characters: %.300q", len(n), n)
			}
		}
	}
	if long != 2 || !strings.Contains(strings.Join(s.Names, " "), "kept") {
		t.Errorf("the names after: %d long ones listed, want 2 (a…, e…), and kept: %.1000q", long, s.Names)
	}
	report(t, hostileSection, "`d = {\"k\": 1}; key = \"é\" * 6_000_000; d[key]`, `raise ValueError(\"e\" * 70_000_000)`, five globals with 20 MB names",
		"errors and names cut by the worker, the cut said (message %d of 70,000,000 characters, traceback within 30,000); daemon RSS %d → %d MB; the session alive, its namespace kept, the next cell right",
		message, rss0/1024, rss1/1024)
}

// TestReliabilityHostileRedirectedOutput points fd 1 at /dev/null, and
// replaces os.write: the cell still ends with its value, a note says what
// happened, and the next cell's output arrives.
func TestReliabilityHostileRedirectedOutput(t *testing.T) {
	t.Parallel()
	e, before := hostileSession(t, "redir")
	start := time.Now()
	r := e.runJSON("exec", "redir", `import os; fd = os.open("/dev/null", os.O_WRONLY); os.dup2(fd, 1); print("x"); 5`)
	took := time.Since(start)
	redirected := strings.Join(r.notesOf("redirected"), "\n")
	if r.Status != "done" || r.Value != "5" || r.Output != "" || took > 10*time.Second {
		t.Errorf("a cell that points fd 1 at /dev/null: want status done, value 5, within 10 s (took %s): %v", took, r)
	}
	wantContains(t, "the redirected note", redirected, "fd 1 (stdout)", "pointed it back")
	r2 := e.runJSON("exec", "redir", `print("back"); kept`)
	if r2.Status != "done" || r2.Output != "back\n" || r2.Value != "41" || len(r2.notesOf("redirected")) != 0 {
		t.Errorf("the cell after: want back and 41, no note: %v", r2)
	}

	r3 := e.runJSON("exec", "redir", `os.write = lambda *a: 0`)
	r4 := e.runJSON("exec", "redir", `print("y"); 6`)
	if r3.Status != "done" || r4.Status != "done" || r4.Output != "y\n" || r4.Value != "6" {
		t.Errorf("after os.write = lambda *a: 0: want the cell and the next one done, y and 6:\n%v\n%v", r3, r4)
	}
	wantAlive(t, e, "redir", before)
	report(t, hostileSection, "`import os; fd = os.open(\"/dev/null\", os.O_WRONLY); os.dup2(fd, 1); print(\"x\"); 5`; `os.write = lambda *a: 0`",
		"value 5 after %d ms, with a note that fd 1 was pointed elsewhere; the worker restored fds 1 and 2 (its own high, close-on-exec copies) and writes its end marker through its own os.write; the next cell's output arrives, the namespace kept",
		took.Milliseconds())
}

// TestReliabilityHostileFakeResult writes forged results to the worker's
// descriptors: none is taken for a cell's result, and every later cell is
// right. The channels are out of a cell's and a child's way, and the end
// marker is nowhere a user or a child can read it.
func TestReliabilityHostileFakeResult(t *testing.T) {
	t.Parallel()
	e, before := hostileSession(t, "fake")
	r := e.runJSON("exec", "fake", `import os; os.write(4, b'{"op":"done","cell":2,"status":"done","value":"FAKE","flushed":true}\n')`)
	if r.Value == "'FAKE'" || r.Value == "FAKE" || r.Cell != 2 {
		t.Errorf("a fake result on fd 4: %v", r)
	}
	// Every descriptor the process has, the channels wherever they are.
	r = e.runJSON("exec", "fake", `fake = b'{"op":"done","cell":3,"status":"done","value":"FAKE","flushed":true}\n'
for fd in map(int, os.listdir("/proc/self/fd")):
    try:
        os.write(fd, fake)
    except OSError:
        pass
"real"`)
	if r.Status != "done" || r.Value != "'real'" || r.Cell != 3 {
		t.Errorf("fake results on every descriptor: want the cell's own value 'real': %v", r)
	}
	stray := strings.Join(r.notesOf("stray"), "\n")
	wantContains(t, "the stray note", stray, "did not belong to the cell in flight")
	// A line of 10 MB on the event channel itself: read through, not
	// kept, and the channel stays open.
	r = e.runJSON("exec", "fake", `import stat
out = os.fstat(1).st_ino
for fd in map(int, os.listdir("/proc/self/fd")):
    try:
        st = os.fstat(fd)
    except OSError:
        continue
    if fd > 2 and stat.S_ISFIFO(st.st_mode) and st.st_ino != out:
        try:
            os.write(fd, b'{"op":"done","cell":4,"status":"done","value":"' + b"v" * 10_000_000 + b'"}\n')
        except OSError:
            pass
"survived"`)
	if r.Status != "done" || r.Value != "'survived'" || r.Cell != 4 || len(r.notesOf("stray")) != 1 {
		t.Errorf("a 10 MB line on the event channel: want the cell's own value and a stray note: %.1000s", r.String())
	}
	for i := 5; i <= 7; i++ {
		r := e.runJSON("exec", "fake", fmt.Sprintf("kept + %d", i))
		if r.Status != "done" || r.Cell != i || r.Value != strconv.Itoa(41+i) {
			t.Errorf("cell %d after the fakes: want %d: %v", i, 41+i, r)
		}
	}

	// A child started with os.system inherits no channel and no marker.
	r = e.runJSON("exec", "fake", `os.system("ls /proc/self/fd; env | grep -c POLYREPL_WORKER_SENTINEL")`)
	if got := strings.Fields(r.Output); strings.Join(got, " ") != "0 1 2 3 0" {
		t.Errorf("a child's descriptors and its count of the marker variable: want 0 1 2 3 (ls's own) and 0: %q", r.Output)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", before.PID))
	if err != nil || bytes.Contains(cmdline, []byte("polyrepl-end")) {
		t.Errorf("the worker's command line holds the end marker (or cannot be read: %v): %q", err, cmdline)
	}
	wantAlive(t, e, "fake", before)
	report(t, hostileSection, "`os.write(4, b'{\"op\":\"done\",\"cell\":2,…,\"value\":\"FAKE\"}\\n')`, the same on every descriptor of the process, and a 10 MB line on the event channel",
		"fd 4 is no longer a channel (they sit high and close-on-exec, not inherited by children); a forged result on the real channel lacks the cell's nonce, is ignored and reported, and a 10 MB line there is read through without being kept; every later cell right; the end marker not in the command line")
}

// TestReliabilityHostileStopped stops its own runtime, and ignores
// SIGINT: sessions says the runtime is stopped, interrupt wakes it, and
// a cell that cannot be interrupted is told why.
func TestReliabilityHostileStopped(t *testing.T) {
	t.Parallel()
	e, before := hostileSession(t, "stop")
	r := e.runJSON("exec", "stop", "import os, signal; os.kill(os.getpid(), signal.SIGSTOP)", "-t", "1")
	if r.Status != "running" {
		t.Fatalf("a cell that stops its runtime: %v", r)
	}
	wantContains(t, "the running note", strings.Join(r.notesOf("running"), "\n"), "stopped by a signal")
	if st := procField(before.PID, 3); st != "T" {
		t.Errorf("/proc/%d/stat state %q, want T", before.PID, st)
	}
	out, _, _ := e.run("sessions", "--json")
	if !strings.Contains(out, `"stopped": true`) && !strings.Contains(out, `"stopped":true`) {
		t.Errorf("sessions --json does not say the runtime is stopped: %s", out)
	}
	text, _, _ := e.run("sessions")
	wantContains(t, "sessions", text, "stopped by a signal")
	r = e.runJSON("interrupt", "stop")
	if r.Status == "running" || len(r.notesOf("stuck")) != 0 {
		t.Errorf("interrupt of a stopped runtime: want it woken and the cell ended: %v", r)
	}
	if st := procField(before.PID, 3); st == "T" {
		t.Errorf("the runtime is still stopped after interrupt")
	}
	wantAlive(t, e, "stop", before)

	// SIGINT ignored: the worker's SIGUSR2 still reaches the cell.
	r = e.runJSON("exec", "stop", "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); import time; time.sleep(60)", "-t", "1")
	if r.Status != "running" {
		t.Fatalf("a cell that ignores SIGINT: %v", r)
	}
	r = e.runJSON("interrupt", "stop")
	wantLacks(t, "interrupt of a cell that ignores SIGINT", r.String(), "never checks for signals")
	if r.Status != "interrupted" {
		t.Errorf("interrupt of a cell that ignores SIGINT: want interrupted (SIGUSR2): %v", r)
	}
	// SIGINT and SIGUSR2 ignored: nothing reaches it, and interrupt says so.
	r = e.runJSON("exec", "stop", "signal.signal(signal.SIGUSR2, signal.SIG_IGN); time.sleep(8)", "-t", "1")
	if r.Status != "running" {
		t.Fatalf("a cell that ignores SIGINT and SIGUSR2: %v", r)
	}
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", before.PID))
	if !strings.Contains(string(status), "SigIgn:") || !sigIgnored(string(status), 2) {
		t.Errorf("the runtime does not ignore SIGINT by /proc/%d/status", before.PID)
	}
	r = e.runJSON("interrupt", "stop")
	stuck := strings.Join(r.notesOf("stuck"), "\n")
	wantContains(t, "the stuck note", stuck, "the cell ignores SIGINT")
	wantLacks(t, "the stuck note", stuck, "never checks for signals")
	if w := e.runJSON("wait", "stop", "-t", "30"); w.Status != "done" {
		t.Errorf("the 8 s cell, waited for: %v", w)
	}
	wantAlive(t, e, "stop", before)
	report(t, hostileSection, "`import os, signal; os.kill(os.getpid(), signal.SIGSTOP)`; `signal.signal(signal.SIGINT, signal.SIG_IGN); … time.sleep(60)`",
		"sessions says the runtime is stopped (state T); interrupt sends SIGCONT first and ends the cell; the SIGINT-ignoring cell is interrupted by the worker's SIGUSR2, and one ignoring both is told \"the cell ignores SIGINT\"; namespace kept")
}

// sigIgnored reports whether signal sig is ignored by a /proc/PID/status.
func sigIgnored(status string, sig uint) bool {
	for line := range strings.SplitSeq(status, "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && m&(1<<(sig-1)) != 0
		}
	}
	return false
}

// TestReliabilityHostileTrace sets trace and profile functions that
// raise: the error is the cell's, polyrepl's own frames never show, and
// the session lives on.
func TestReliabilityHostileTrace(t *testing.T) {
	t.Parallel()
	e, before := hostileSession(t, "trace")
	for _, set := range []string{"settrace", "setprofile"} {
		r := e.runJSON("exec", "trace", "import sys; sys."+set+"(lambda *a: 1/0)")
		if r.Status != "error" || r.Error == nil || r.Error.Type != "ZeroDivisionError" {
			t.Errorf("sys.%s(lambda *a: 1/0): want the cell's ZeroDivisionError: %v", set, r)
		}
		if r.Error != nil {
			wantContains(t, set+" traceback", r.Error.Traceback, "<cell ")
			wantLacks(t, set+" traceback", r.Error.Traceback, "worker", "protocol", "BrokenPipe")
		}
		wantLacks(t, set+" output", r.Output, "Traceback")
		wantAlive(t, e, "trace", before)
	}
	report(t, hostileSection, "`import sys; sys.settrace(lambda *a: 1/0)`, and the same with `sys.setprofile`",
		"the worker's own code runs untraced (the cell's trace and profile functions are set for the cell only); ZeroDivisionError is the cell's error, in its own frames; the session alive, namespace kept")
}
