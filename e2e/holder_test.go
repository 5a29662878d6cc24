// Sessions outlive their daemon: each runtime is kept by a holder, so a
// daemon that is killed, stopped with --keep-sessions or upgraded loses
// nothing, and the next daemon takes every session up.

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

// killDaemon SIGKILLs the running daemon and waits until it is gone.
func (e *env) killDaemon() int {
	e.t.Helper()
	pid := e.status().PID
	syscall.Kill(pid, syscall.SIGKILL)
	if !waitFor(10*time.Second, func() bool { return !proctest.Alive(pid) }) {
		e.t.Fatalf("the daemon (pid %d) outlived SIGKILL", pid)
	}
	// Gone means its socket no longer takes connections for it: it
	// refuses, or another daemon (one an attach started) answers there. A
	// connection made while it was dying would be reset, and the next
	// command would say so.
	sock := filepath.Join(e.socketDir(), "daemon.sock")
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}
	defer hc.CloseIdleConnections()
	if !waitFor(5*time.Second, func() bool {
		resp, err := hc.Get("http://polyrepl/v1/status")
		if err != nil {
			return strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), "no such file")
		}
		defer resp.Body.Close()
		var st statusReply
		return json.NewDecoder(resp.Body).Decode(&st) == nil && st.PID != pid
	}) {
		e.t.Fatalf("the killed daemon's socket %s still takes connections for it", sock)
	}
	return pid
}

// wholeOutput is all a reply's output: the file its cut names, else its
// text.
func wholeOutput(t *testing.T, r cellResult) string {
	t.Helper()
	if r.OutputCut == nil {
		return r.Output
	}
	if r.OutputCut.File == "" {
		t.Fatalf("a cut reply names no file of the whole: %v", r)
	}
	b, err := os.ReadFile(r.OutputCut.File)
	if err != nil {
		t.Fatal(err)
	}
	if c := r.OutputCut; c.To > 0 {
		// The reply is a part of the cell's output: these bytes of it.
		if c.From > c.To || c.To > int64(len(b)) {
			t.Fatalf("a cut reply's part, bytes %d to %d, is not in its file of %d bytes", c.From, c.To, len(b))
		}
		return string(b[c.From:c.To])
	}
	return string(b)
}

// numbered is lines "line 00000" to "line N-1", each ended.
func numbered(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %05d\n", i)
	}
	return b.String()
}

// printsLines is a Python cell printing n numbered lines over about
// secs seconds, then giving a value.
func printsLines(n int, secs float64) string {
	every := 100
	return fmt.Sprintf("import time\nfor i in range(%d):\n    print(f'line {i:05d}', flush=True)\n    if i %% %d == %d: time.sleep(%g)\n'all %d printed'",
		n, every, every-1, secs/float64(n/every), n)
}

// TestReliabilityDaemonKilled SIGKILLs the daemon while a cell prints
// 10,000 numbered lines over 3 seconds and another session sits idle
// holding a value: the next daemon takes both up from their holders; wait
// returns every line, in order, and the value; the idle session keeps its
// value; both keep their pid and generation; the record holds the cell
// once, whole.
func TestReliabilityDaemonKilled(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "--memory", "900M", "idle1", "kept = 'still here'")
	first := e.runJSON("exec", "busy1", printsLines(10000, 3), "-t", "0.5")
	if first.Status != "running" {
		t.Fatalf("the long cell: %v", first)
	}
	before := map[string]sessionInfo{"idle1": e.session("idle1"), "busy1": e.session("busy1")}
	old := e.killDaemon()

	w := e.runJSON("wait", "busy1", "-t", "60")
	if w.Status != "done" || w.Value != "'all 10000 printed'" {
		t.Fatalf("wait after the daemon was killed: %v", w)
	}
	if got, want := wholeOutput(t, first)+wholeOutput(t, w), numbered(10000); got != want {
		t.Errorf("the cell's output across the daemon's death: %d bytes, want the %d of 10,000 lines in order:\n%s", len(got), len(want), clip(got))
	}
	if st := e.status(); st.PID == old {
		t.Errorf("the daemon is still pid %d", old)
	}
	if r := e.runJSON("exec", "idle1", "kept"); r.Value != "'still here'" {
		t.Errorf("the idle session after the daemon was killed: %v", r)
	}
	for name, b := range before {
		if a := e.session(name); a.PID != b.PID || a.Generation != b.Generation {
			t.Errorf("session %s was pid %d generation %s, is pid %d generation %s", name, b.PID, b.Generation, a.PID, a.Generation)
		}
	}
	if a, b := e.session("idle1"), before["idle1"]; b.MemoryLimit == 0 || a.MemoryLimit != b.MemoryLimit || a.LimitBy != b.LimitBy {
		t.Errorf("idle1's memory limit was %d by %s, is %d by %s", b.MemoryLimit, b.LimitBy, a.MemoryLimit, a.LimitBy)
	}
	var cells []entry
	for _, en := range e.history("busy1") {
		if en.Kind == "cell" && strings.Contains(en.Code, "range(10000)") {
			cells = append(cells, en)
		}
	}
	if len(cells) != 1 || cells[0].Status != "done" || cells[0].OutputCut == nil {
		t.Fatalf("the record's entries of the cell: %+v, want one, done, its whole output in a file", cells)
	}
	if b, err := os.ReadFile(cells[0].OutputCut.File); err != nil || string(b) != numbered(10000) {
		t.Errorf("the record's whole output of the cell: %d bytes (%v), want the 10,000 lines once, in order", len(b), err)
	}
	if left := len(e.working()); left != 5 {
		t.Errorf("after the new daemon took over: %d processes, want it, two holders and two runtimes:%s", left, proctest.Describe(e.working()))
	}
	report(t, "4 Faults", "the daemon is SIGKILLed while a cell prints 10,000 lines, another session idle",
		"the next call's daemon took both sessions up from their holders: same pids and generations; wait returned all 10,000 lines in order and the value; the idle session kept its value; the record holds the cell once, whole")
}

// TestUpgradeKeepsSessions makes sessions with one build and then uses a
// build of a newer version: it replaces the daemon, which leaves the
// sessions to their holders, and says so in one line; the new daemon
// takes them up, a running cell included, and nothing is lost. The
// sessions say they run on the older holder. An older client then only
// warns: it never replaces a newer daemon.
func TestUpgradeKeepsSessions(t *testing.T) {
	needPython(t)
	t.Parallel()
	newer, err := versionedBinary()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	out, _ := e.must(0, "--version")
	v := strings.TrimSpace(strings.TrimPrefix(out, "polyrepl "))
	if v == "9.9.9" {
		t.Fatalf("the binary under test already says 9.9.9")
	}
	e.must(0, "exec", "up1", "kept = [1, 2, 3]")
	if r := e.runJSON("exec", "up2", printsLines(2000, 2), "-t", "0.3"); r.Status != "running" {
		t.Fatalf("the long cell: %v", r)
	}
	before := map[string]sessionInfo{"up1": e.session("up1"), "up2": e.session("up2")}
	oldDaemon := e.status().PID

	out, errOut, code := e.runWith(runOpts{bin: newer}, "exec", "up1", "sum(kept)")
	if code != 0 || !strings.Contains(out, "6") {
		t.Fatalf("exec with the newer client: exit %d\n%s%s", code, out, errOut)
	}
	// Standard error carries the cell's notes too (another session's
	// running cell): the upgrade is said in one line of its own.
	var said []string
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if strings.Contains(l, "Replaced the daemon") {
			said = append(said, l)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "Replaced the daemon of polyrepl "+v+" with this 9.9.9") || !strings.Contains(said[0], "up1, up2") {
		t.Errorf("the newer client said %q, want one line naming both versions and the sessions kept", errOut)
	}
	e.bin = newer
	if st := e.status(); st.Version != "9.9.9" || st.PID == oldDaemon {
		t.Errorf("after the upgrade the daemon is %+v, want a new one of 9.9.9", st)
	}
	for name, b := range before {
		a := e.session(name)
		if a.PID != b.PID || a.Generation != b.Generation {
			t.Errorf("session %s was pid %d generation %s, is pid %d generation %s", name, b.PID, b.Generation, a.PID, a.Generation)
		}
	}
	listing, _ := e.must(0, "sessions")
	wantContains(t, "sessions after the upgrade", listing, "runs on the holder and worker of polyrepl "+v+" until it is restarted")
	w := e.runJSON("wait", "up2", "-t", "60")
	if w.Status != "done" || w.Value != "'all 2000 printed'" || !strings.HasSuffix(wholeOutput(t, w), "line 01999\n") {
		t.Errorf("the cell running through the upgrade: %v", w)
	}
	var cells int
	for _, en := range e.history("up2") {
		if en.Kind == "cell" {
			cells++
		}
	}
	if cells != 1 {
		t.Errorf("the record of up2 holds %d cells, want 1", cells)
	}

	// Restarted, a session runs this version's holder.
	e.must(0, "restart", "up1")
	listing, _ = e.must(0, "sessions", "up1")
	wantLacks(t, "a restarted session", listing, "runs on the holder")

	// The older client does not take the daemon back.
	_, errOut, code = e.runWith(runOpts{bin: binary}, "exec", "up2", "1")
	if code != 0 {
		t.Errorf("exec with the older client: exit %d: %s", code, errOut)
	}
	wantContains(t, "the older client", errOut, "warning", v, "9.9.9")
	if st := e.status(); st.Version != "9.9.9" {
		t.Errorf("the older client replaced the daemon: %+v", st)
	}
	report(t, "4 Faults", "polyrepl is upgraded with a cell running",
		"the newer client replaced the daemon and said so in one line; the new daemon took both sessions up (same pids, generations, values), the running cell finished with all its output, recorded once; `sessions` says they run on the older holder until restarted")
}

// TestRuntimeKilledWhileNoDaemon: a runtime that dies while no daemon
// runs is reported by the next one as if it had watched: the cause, the
// time it died, the names lost.
func TestRuntimeKilledWhileNoDaemon(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "gone", "lost_name = 1")
	pid := e.session("gone").PID
	out, _ := e.must(0, "stop", "--keep-sessions")
	wantContains(t, "stop --keep-sessions", out, "its 1 session go on in their holders: gone")
	killed := time.Now()
	syscall.Kill(pid, syscall.SIGKILL)
	waitFor(5*time.Second, func() bool { return !proctest.Alive(pid) })
	time.Sleep(1100 * time.Millisecond) // so the death's time differs from the new daemon's start

	_, errOut, code := e.runWith(runOpts{}, "wait", "gone", "--label", "bob")
	if code != 1 {
		t.Errorf("wait on the session that died: exit %d, want 1: %s", code, errOut)
	}
	wantContains(t, "wait on the session that died", errOut, "killed by signal 9", "lost_name")
	// The time it died is the holder's, not the new daemon's (a second
	// and more later); reaping may cross into the next second.
	if !strings.Contains(errOut, killed.Format("15:04:05")) && !strings.Contains(errOut, killed.Add(time.Second).Format("15:04:05")) {
		t.Errorf("the death's time is not when the runtime was killed (%s): %s", killed.Format("15:04:05"), errOut)
	}
	r := e.runJSON("exec", "gone", "1")
	if len(r.notesOf("created")) != 1 || r.Value != "1" {
		t.Errorf("the next exec: %v", r)
	}
	report(t, "4 Faults", "a runtime is SIGKILLed while no daemon runs",
		"the next daemon heard of it from the holder and reported it as if it had watched: cause, time of death, names lost")
}

// TestHolderKilled: a holder killed under its session ends the session,
// reported with that cause, and nothing of it is left.
func TestHolderKilled(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "hk", "x = 1")
	gen := e.session("hk").Generation
	h := e.session("hk").Holder
	syscall.Kill(h, syscall.SIGKILL)
	if !waitFor(10*time.Second, func() bool { return len(e.generation(gen)) == 0 }) {
		t.Errorf("the runtime outlived its holder:%s", proctest.Describe(e.generation(gen)))
	}
	_, errOut, code := e.run("wait", "hk")
	if code != 1 {
		t.Errorf("wait: exit %d, want 1", code)
	}
	wantContains(t, "the death of a session whose holder was killed", errOut, fmt.Sprintf("holder process (pid %d) was killed by signal 9", h), "the runtime was ended with it")
	if left := len(e.working()); left != 1 {
		t.Errorf("after the holder was killed: %d processes, want the daemon alone:%s", left, proctest.Describe(e.working()))
	}
	report(t, "4 Faults", "a session's holder is SIGKILLed",
		"the session is reported dead with that cause, and its runtime is ended with it")
}

// TestStopKeepSessions: stop --keep-sessions ends the daemon alone; the
// sessions go on and the next daemon takes them up; plain stop ends every
// session and its holder, verified, and leaves nothing of them.
func TestStopKeepSessions(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "k1", "a = 1")
	e.must(0, "exec", "--runtime", "sh", "k2", "b=2")
	pids := []int{e.session("k1").PID, e.session("k2").PID, e.session("k1").Holder, e.session("k2").Holder}
	daemon := e.status().PID
	out, _ := e.must(0, "stop", "--keep-sessions")
	wantContains(t, "stop --keep-sessions", out, "its 2 sessions go on in their holders: k1, k2")
	if !waitFor(5*time.Second, func() bool { return !proctest.Alive(daemon) }) {
		t.Errorf("the daemon is still running after stop --keep-sessions")
	}
	for _, p := range pids {
		if !proctest.Alive(p) {
			t.Errorf("pid %d ended with the daemon", p)
		}
	}
	if r := e.runJSON("exec", "k1", "a + 1"); r.Value != "2" {
		t.Errorf("k1 after stop --keep-sessions: %v", r)
	}
	if r := e.runJSON("exec", "k2", "echo $b"); r.Output != "2\n" {
		t.Errorf("k2 (sh, on a terminal) after stop --keep-sessions: %v", r)
	}
	out, _ = e.must(0, "stop")
	wantContains(t, "stop", out, "ended 2 sessions", "k1", "k2")
	for _, p := range pids {
		if proctest.Alive(p) {
			t.Errorf("pid %d outlived stop", p)
		}
	}
	if left := e.tagged(); len(left) > 0 {
		t.Errorf("after stop:%s", proctest.Describe(left))
	}
	if _, err := os.Stat(filepath.Join(e.socketDir(), "runtimes")); !os.IsNotExist(err) {
		t.Errorf("stop left the runtimes' directory: %v", err)
	}
	report(t, "4 Faults", "stop --keep-sessions, then stop",
		"the first ended the daemon alone (sessions, holders and a terminal runtime went on, taken up by the next daemon); the second ended every session and holder, checked, leaving none")
}

// TestManyLivesLeaveNothing: 200 sessions created and killed leave no
// holder, socket or spool behind.
func TestManyLivesLeaveNothing(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	n := 200
	if testing.Short() {
		n = 40
	}
	for i := range n {
		name := fmt.Sprintf("c%d", i%7)
		if stdout, stderr, code := e.run("exec", "--runtime", "sh", name, "true"); code != 0 {
			t.Fatalf("cycle %d: exec: exit %d: %s%s", i, code, stdout, stderr)
		}
		if _, stderr, code := e.run("kill", name); code != 0 {
			t.Fatalf("cycle %d: kill: %s", i, stderr)
		}
	}
	if left := len(e.working()); left != 1 {
		t.Errorf("after %d lives: %d processes, want the daemon alone:%s", n, left, proctest.Describe(e.working()))
	}
	if socks, _ := filepath.Glob(filepath.Join(e.socketDir(), "runtimes", "holders", "*")); len(socks) > 0 {
		t.Errorf("holders' sockets left: %v", socks)
	}
	if spools, _ := filepath.Glob(filepath.Join(e.stateDir(), "output", "holder-*")); len(spools) > 0 {
		t.Errorf("holders' spool files left: %v", spools)
	}
	st := e.status()
	if st.FDs > 40 {
		t.Errorf("the daemon holds %d descriptors after %d lives", st.FDs, n)
	}
	report(t, "4 Faults", fmt.Sprintf("%d sessions created and killed", n), "no holder, socket, spool file or descriptor left; the daemon holds %d descriptors", st.FDs)
}

// TestOtherUserRefusedAtHolder: a holder's socket is closed to other
// users by its directory and its mode, and behind those by its own
// SO_PEERCRED check, which refuses and logs.
func TestOtherUserRefusedAtHolder(t *testing.T) {
	needPython(t)
	t.Parallel()
	nobody := asNobody(t)
	e := newEnv(t)
	e.must(0, "exec", "mine", "secret = 42")
	gen := e.session("mine").Generation
	holders := filepath.Join(e.socketDir(), "runtimes", "holders")
	sock := filepath.Join(holders, gen+".sock")
	probe := `import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
try:
    s.connect(sys.argv[1])
    data = s.recv(65536)
    print("got", len(data), data[:200])
except OSError as e:
    print("error:", e)
`
	try := func() string {
		argv := append(append([]string{}, nobody...), python, "-c", probe, sock)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = e.vars
		cmd.Dir = "/"
		b, _ := cmd.CombinedOutput()
		return string(b)
	}
	if got := try(); !strings.Contains(got, "error:") {
		t.Errorf("nobody reached the holder's socket through its private directories: %s", got)
	}
	// Open the way, so the holder's own check is all that stands.
	var restore []func()
	for _, p := range []struct {
		path string
		mode os.FileMode
	}{{e.runtime, 0o711}, {e.socketDir(), 0o711}, {filepath.Dir(holders), 0o711}, {holders, 0o711}, {sock, 0o777}} {
		fi, err := os.Stat(p.path)
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(p.path, p.mode)
		restore = append(restore, func() { os.Chmod(p.path, fi.Mode().Perm()) })
	}
	got := try()
	for _, f := range restore {
		f()
	}
	if strings.Contains(got, "secret") || strings.Contains(got, "mine") || regexp.MustCompile(`got [1-9]`).MatchString(got) {
		t.Errorf("the holder answered uid 65534: %s", got)
	}
	logPath := filepath.Join(e.socketDir(), "daemon.log")
	if !waitFor(5*time.Second, func() bool {
		l, _ := os.ReadFile(logPath)
		return regexp.MustCompile(`holder.*refused a connection from uid 65534`).Match(l)
	}) {
		t.Errorf("the log does not record the holder refusing uid 65534:\n%s", tail(logPath, 20))
	}
	if r := e.runJSON("exec", "mine", "secret"); r.Value != "42" {
		t.Errorf("the owner's session after the refusal: %v", r)
	}
	report(t, "5 Who gets in", "another uid (nobody) connects to a session's holder",
		"refused by the private directories and, with the way opened, by the holder's SO_PEERCRED check, which logs it; the session is untouched")
}

// TestTerminalSessionThroughADaemonKill: a terminal runtime (sh, on a
// PTY) with a cell running goes on through a daemon's death; the cell's
// output arrives whole, and a person attaches to its terminal again.
func TestTerminalSessionThroughADaemonKill(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "--runtime", "sh", "tt", "x=41")
	r := e.runJSON("exec", "tt", "i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); [ $((i % 500)) -eq 0 ] && sleep 0.3; done; echo end-$x", "-t", "0.2")
	if r.Status != "running" {
		t.Fatalf("the long cell: %v", r)
	}
	e.killDaemon()
	w := e.runJSON("wait", "tt", "-t", "60")
	var want strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	want.WriteString("end-41\n")
	if got := wholeOutput(t, r) + wholeOutput(t, w); w.Status != "done" || got != want.String() {
		t.Errorf("the terminal cell through the daemon's death: %s, %d bytes of output, want all %d:\n%s", w.Status, len(got), want.Len(), clip(got))
	}
	con := e.onTerminal("attach", "tt", "--raw")
	con.expect("attach after the daemon was killed", "Attached to the terminal of session 'tt'")
	con.send("echo again-$((x+1))\r")
	con.expect("typing", "again-42")
	con.send("\x1d")
	if err := con.exit("Ctrl-]"); err != nil {
		t.Errorf("attach --raw ended with %v", err)
	}
}

// TestAttachThroughADaemonKill: a console attached to a session follows
// it through its daemon's death: it says so, shows the new daemon taking
// the session up, and runs what is typed next.
func TestAttachThroughADaemonKill(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "lab", "x = 1")
	con := e.onTerminal("attach", "lab", "--label", "carol")
	con.expect("start", "Attached to session 'lab'", "x = 1")
	e.killDaemon()
	con.expect("the daemon's death", "the daemon went away", "taken up by a new daemon")
	con.send("x + 41\r")
	con.expect("a cell typed after", "Out[2]: 42")
	con.send("\x04")
	if err := con.exit("Ctrl-D"); err != nil {
		t.Errorf("attach ended with %v after Ctrl-D, want exit 0", err)
	}
}
