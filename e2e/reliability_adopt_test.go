// Adoption that waits for no one (issue 34 item 3): a daemon answers
// within 2 s of its start whatever is in runtimes/holders/, a holder
// that answers late is taken up when it does, its session listed as
// being taken up until then, and kill ends it.

package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/proc/proctest"
	"github.com/polyrepl/polyrepl/internal/state"
)

// holdersSection is where the holders' scenarios report.
const holdersSection = "8 Kernels and holders"

// holdersDir is where the env's holders listen.
func (e *env) holdersDir() string { return filepath.Join(e.socketDir(), "runtimes", "holders") }

// plantSilent puts n sockets in the holders' directory at which nobody
// answers: half are listened at and never accepted, half accepted and
// never answered. They go when the test ends.
func (e *env) plantSilent(n int) {
	t := e.t
	t.Helper()
	for _, d := range []string{e.socketDir(), filepath.Join(e.socketDir(), "runtimes"), e.holdersDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o700)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	for i := range n {
		ln, err := net.Listen("unix", filepath.Join(e.holdersDir(), silentGen(i)+".sock"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		if i%2 == 1 {
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					mu.Lock()
					conns = append(conns, c)
					mu.Unlock()
				}
			}()
		}
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
}

// refusal runs a command that must be refused, with --json: its exit
// status and the refusal.
func (e *env) refusal(args ...string) (int, struct{ Error, Hint, Code string }) {
	e.t.Helper()
	stdout, stderr, code := e.run(append(args, "--json")...)
	var ref struct{ Error, Hint, Code string }
	if err := json.Unmarshal([]byte(stdout), &ref); err != nil {
		e.t.Errorf("polyrepl %s --json: exit %d, not a refusal (%v): %q %q", strings.Join(args, " "), code, err, clip(stdout), stderr)
	}
	return code, ref
}

// silentGen is the generation the i-th silent socket is named for.
func silentGen(i int) string { return fmt.Sprintf("5113e%07d", i) }

// plantWedged writes live notes for the first n silent sockets, each
// naming a holder that runs (a sleep, and another as its runtime) and
// never answers: the worst a starting daemon can find, for it waits for
// a running holder its live notes name. They end with the daemon's stop.
func (e *env) plantWedged(n int) {
	t := e.t
	t.Helper()
	st, err := state.Open(filepath.Join(e.stateDir()))
	if err != nil {
		t.Fatal(err)
	}
	start := func(cookie string) proc.Proc {
		cmd := exec.Command("sleep", "600")
		cmd.Env = append(os.Environ(), "POLYREPL_TEST_TAG="+e.tag, cookie)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go cmd.Wait()
		t.Cleanup(func() { cmd.Process.Kill() })
		at, err := proc.StartTime(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		return proc.Proc{PID: cmd.Process.Pid, Start: at}
	}
	for i := range n {
		gen := silentGen(i)
		cookie := "POLYREPL_SESSION=" + gen
		rt := start(cookie)
		l := state.Life{Name: fmt.Sprintf("wedged%d", i), Generation: gen, Runtime: "python", PID: rt.PID, Start: rt.Start, Cookie: cookie,
			Cwd: e.home, Created: time.Now(), Holder: start("POLYREPL_HOLDER_OF=" + gen), Socket: filepath.Join(e.holdersDir(), gen+".sock")}
		if err := st.SaveLive(l); err != nil {
			t.Fatal(err)
		}
	}
}

// firstAnswer runs `polyrepl sessions`, which starts the daemon, and
// says how long it took and what it printed.
func (e *env) firstAnswer() (time.Duration, string) {
	e.t.Helper()
	t0 := time.Now()
	out, _ := e.must(0, "sessions")
	return time.Since(t0), out
}

// TestReliabilitySilentSockets plants 40 sockets in the holders'
// directory where nobody answers (20 listened at and never accepted, 20
// accepted and never answered) beside a live session left by a killed
// daemon: the next daemon answers `polyrepl sessions` within 2 s of the
// command's start, with the live session taken up. Then it does it again
// with 4 of the sockets named by live notes whose holders run (and never
// answer), which a starting daemon waits for, at most 1 s: they are
// listed as being taken up.
func TestReliabilitySilentSockets(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "kept", "x = 41")
	e.killDaemon()
	e.plantSilent(40)

	took, out := e.firstAnswer()
	if took > 2*time.Second {
		t.Errorf("the first answer of a daemon starting beside 40 silent sockets took %s, want under 2 s", took.Round(time.Millisecond))
	}
	if ss := e.sessions(); len(ss) != 1 || ss[0].Name != "kept" || ss[0].State != "idle" {
		t.Errorf("sessions: %+v\n%s", ss, out)
	}

	e.killDaemon()
	e.plantWedged(4)
	wedged, out := e.firstAnswer()
	if wedged > 2*time.Second {
		t.Errorf("the first answer of a daemon starting beside 4 running holders that never answer took %s, want under 2 s", wedged.Round(time.Millisecond))
	}
	wantContains(t, "sessions", out, "wedged0  being taken up from its holder (pid", "which has not answered yet", "`polyrepl kill wedged3` ends it")
	if ss := e.sessions(); len(ss) != 5 || ss[0].Name != "kept" || ss[0].State != "idle" || ss[1].State != "adopting" {
		t.Errorf("sessions: %+v\n%s", ss, out)
	}
	if r := e.runJSON("exec", "kept", "x + 1"); r.Value != "42" {
		t.Errorf("exec in the session taken up: %v", r)
	}
	t.Logf("first answer in %s; with 4 wedged holders, in %s", took, wedged)
	report(t, holdersSection, "40 sockets in `runtimes/holders/` where nobody answers (20 never accepted, 20 accepted and never answered), beside a session a killed daemon left; then 4 of them named by live notes whose holders run and never answer",
		"the next daemon answered `polyrepl sessions` %s after the command started (was 30.1 s), the live session taken up idle, its names kept; with the 4 running holders that never answer, which it waits for at most 1 s, in %s, listing them as being taken up; `stop` ended them",
		took.Round(10*time.Millisecond), wedged.Round(10*time.Millisecond))
}

// stoppedHolderLeft runs a cell that prints for a while in a new python
// session, stops (SIGSTOP) the session's holder and SIGKILLs the daemon:
// the session's holder has not answered when the next daemon starts, and
// the cell prints while nobody reads it.
func (e *env) stoppedHolderLeft(name string) (before sessionInfo, first cellResult) {
	t := e.t
	t.Helper()
	e.must(0, "exec", name, "kept = 'still here'")
	// It prints after its reply, so that the reply takes none of its
	// output: what a reply took, the holder hears a moment later, which
	// a holder stopped at once may not have heard.
	first = e.runJSON("exec", name, "import time\ntime.sleep(1)\nfor i in range(20):\n    print('tick', i, flush=True); time.sleep(0.1)\n'ticked'", "-t", "0.2")
	if first.Status != "running" {
		t.Fatalf("the printing cell: %v", first)
	}
	before = e.session(name)
	if before.Holder == 0 {
		t.Fatalf("no holder pid: %+v", before)
	}
	t.Cleanup(func() { syscall.Kill(before.Holder, syscall.SIGCONT) })
	if err := syscall.Kill(before.Holder, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	e.killDaemon()
	return before, first
}

// TestReliabilityLateHolder is the scenario: a holder is stopped
// (SIGSTOP), the daemon SIGKILLed and the next one started; the session
// is listed as being taken up, a call on it is told to retry; once the
// holder runs again (SIGCONT) the session is taken up with no other
// daemon, its cell's output whole, the lines printed while nobody could
// read them included.
func TestReliabilityLateHolder(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	before, first := e.stoppedHolderLeft("late")

	took, out := e.firstAnswer()
	if took > 2*time.Second {
		t.Errorf("the first answer beside a stopped holder took %s, want under 2 s", took.Round(time.Millisecond))
	}
	wantContains(t, "sessions", out, "late  being taken up from its holder (pid "+fmt.Sprint(before.Holder)+"), which is stopped by a signal (SIGSTOP)",
		"`polyrepl kill late` ends it")
	s := e.session("late")
	if s.State != "adopting" || s.Generation != before.Generation || s.PID != before.PID || s.Holder != before.Holder {
		t.Errorf("the session as listed: %+v, want adopting, generation %s, pid %d, holder %d", s, before.Generation, before.PID, before.Holder)
	}
	if code, ref := e.refusal("exec", "late", "kept"); code == 0 || ref.Code != "adopting" || !strings.Contains(ref.Error, "being taken up") || !strings.Contains(ref.Hint, "retry") {
		t.Errorf("exec while it is being taken up: exit %d %+v", code, ref)
	}
	daemon := e.status().PID

	t0 := time.Now()
	syscall.Kill(before.Holder, syscall.SIGCONT)
	if !waitFor(20*time.Second, func() bool { return e.session("late").State != "adopting" }) {
		t.Fatalf("the session is still being taken up 20 s after its holder was continued")
	}
	after := time.Since(t0)
	w := e.runJSON("wait", "late", "-t", "30")
	if w.Status != "done" || w.Value != "'ticked'" {
		t.Fatalf("wait once taken up: %v", w)
	}
	var want strings.Builder
	for i := range 20 {
		fmt.Fprintf(&want, "tick %d\n", i)
	}
	if got := wholeOutput(t, first) + wholeOutput(t, w); got != want.String() {
		t.Errorf("the cell's output across the stop and the daemon's death: %q, want %q", got, want.String())
	}
	if r := e.runJSON("exec", "late", "kept"); r.Value != "'still here'" {
		t.Errorf("exec once taken up: %v", r)
	}
	if s := e.session("late"); s.PID != before.PID || s.Generation != before.Generation {
		t.Errorf("the session was pid %d generation %s, is %+v", before.PID, before.Generation, s)
	}
	if st := e.status(); st.PID != daemon {
		t.Errorf("another daemon (pid %d) took it up, not the one started (pid %d)", st.PID, daemon)
	}
	t.Logf("first answer in %s; taken up %s after SIGCONT", took, after)
	report(t, holdersSection, "a session's holder stopped (SIGSTOP) mid-cell, the daemon SIGKILLed, the next one started, then the holder continued (SIGCONT)",
		"the next daemon answered in %s, listing the session as being taken up from its stopped holder, and refused an exec on it with `adopting` (retry shortly); %s after SIGCONT the same daemon had taken it up (was: unreachable for good); `wait` returned all 20 lines, those printed while the holder was stopped included, and the value; the session kept its names",
		took.Round(10*time.Millisecond), after.Round(10*time.Millisecond))
}

// TestReliabilityKillWhileAdopting kills a session being taken up: its
// holder and runtime end and nothing of it is left, and the holder
// being continued brings nothing back.
func TestReliabilityKillWhileAdopting(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	before, _ := e.stoppedHolderLeft("doomed")
	if s := e.session("doomed"); s.State != "adopting" {
		t.Fatalf("the session as listed: %+v, want adopting", s)
	}
	t0 := time.Now()
	e.must(0, "kill", "doomed")
	took := time.Since(t0)
	left := e.generation(before.Generation)
	if !waitFor(10*time.Second, func() bool { left = e.generation(before.Generation); return len(left) == 0 }) {
		t.Errorf("kill left the session's processes:%s", proctest.Describe(left))
	}
	if proctest.Alive(before.Holder) {
		t.Errorf("kill left the holder (pid %d)", before.Holder)
	}
	if ss := e.sessions(); len(ss) != 0 {
		t.Errorf("sessions after kill: %+v", ss)
	}
	if code, ref := e.refusal("wait", "doomed"); code == 0 || ref.Code != "dead" || !strings.Contains(ref.Error, "killed") {
		t.Errorf("wait after kill: exit %d %+v", code, ref)
	}
	t.Logf("kill took %s", took)
	report(t, holdersSection, "`polyrepl kill` of a session being taken up (its holder stopped by SIGSTOP, the daemon SIGKILLed)",
		"ended its holder and its runtime in %s; no process of it was left, and it is reported killed", took.Round(10*time.Millisecond))
}

// TestReliabilityManyHoldersTakenUp leaves 100 sh sessions to their
// holders (the daemon SIGKILLed): the next daemon's first answer, and
// when all 100 are taken up, are reported; every one is taken up idle.
func TestReliabilityManyHoldersTakenUp(t *testing.T) {
	if testing.Short() {
		t.Skip("creating 100 sessions is skipped with -short")
	}
	e := newEnv(t)
	n := 100
	var wg sync.WaitGroup
	work := make(chan int)
	var mu sync.Mutex
	var bad []string
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if _, stderr, code := e.run("exec", "--runtime", "sh", fmt.Sprintf("h%03d", i), fmt.Sprintf("x=%d", i)); code != 0 {
					mu.Lock()
					bad = append(bad, stderr)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("%d sessions failed, e.g. %s", len(bad), bad[0])
	}
	e.killDaemon()

	took, _ := e.firstAnswer()
	t0 := time.Now()
	var ss []sessionInfo
	all := waitFor(60*time.Second, func() bool {
		ss = e.sessions()
		idle := 0
		for _, s := range ss {
			if s.State == "idle" {
				idle++
			}
		}
		return idle == n
	})
	allIn := took + time.Since(t0)
	if !all {
		t.Errorf("of %d sessions, %d listed, not all idle a minute after the daemon started: %+v", n, len(ss), ss)
	}
	if r := e.runJSON("exec", "h042", "echo $x"); r.Output != "42\n" {
		t.Errorf("exec in a session taken up: %v", r)
	}
	t.Logf("first answer in %s, all %d taken up within %s", took, n, allIn)
	for _, line := range strings.Split(tail(filepath.Join(e.socketDir(), "daemon.log"), 400), "\n") {
		if strings.Contains(line, "took up") || strings.Contains(line, "serving while") || strings.Contains(line, "once their holders answer") {
			t.Log(clip(line))
		}
	}
	report(t, holdersSection, fmt.Sprintf("%d sh sessions left to their holders (the daemon SIGKILLed)", n),
		"the next daemon answered `polyrepl sessions` %s after the command started; all %d were listed idle within %s",
		took.Round(10*time.Millisecond), n, allIn.Round(10*time.Millisecond))
}

// TestReliabilityHolderHeldOpen has another process connect to a live
// holder's socket once the daemon is killed, and hold the connection:
// the holder serves it as its daemon and refuses the next one, which
// answers at once, leaving that session to whoever holds it. Once that
// connection is closed, a daemon started after it takes the session up.
func TestReliabilityHolderHeldOpen(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "mine", "x = 1")
	e.must(0, "exec", "theirs", "y = 2")
	gen := e.session("theirs").Generation
	e.killDaemon()
	c, err := net.Dial("unix", filepath.Join(e.holdersDir(), gen+".sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b := make([]byte, 1); func() bool { _, err := c.Read(b); return err != nil || b[0] != 'H' }() {
		t.Fatalf("the holder did not greet the connection that holds it")
	}

	took, out := e.firstAnswer()
	if took > 2*time.Second {
		t.Errorf("the first answer beside a holder another process holds took %s, want under 2 s", took.Round(time.Millisecond))
	}
	if ss := e.sessions(); len(ss) != 1 || ss[0].Name != "mine" || ss[0].State != "idle" {
		t.Errorf("sessions while another process holds theirs: %+v\n%s", ss, out)
	}
	c.Close()
	e.must(0, "stop", "--keep-sessions")
	if r := e.runJSON("exec", "theirs", "y + 1"); r.Value != "3" || r.Generation != gen {
		t.Errorf("exec once the connection was closed and another daemon started: %v", r)
	}
	t.Logf("first answer in %s", took)
	report(t, holdersSection, "another process connected to a live holder's socket (the daemon killed) and holding the connection",
		"the next daemon answered in %s, leaving that session to whoever holds it (not listed, not ended); once the connection was closed, the daemon started after it took the session up, its names kept",
		took.Round(10*time.Millisecond))
}
