package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// One daemon per state directory (issue 33 item 0): clients whose
// XDG_RUNTIME_DIR differs — an MCP client that starts its server without
// it, WSLg's, a terminal that points it elsewhere — compute different
// socket paths but share the state directory, and reach one daemon; a
// second daemon on it refuses to start.

const oneDaemon = "4 Faults"

// otherRuntime is a second XDG_RUNTIME_DIR for the env's world, as another
// terminal's: the same state directory, another socket path.
func otherRuntime(t *testing.T) (runOpts, string) {
	t.Helper()
	dir := testenv.ShortDir(t)
	return runOpts{extra: []string{"XDG_RUNTIME_DIR=" + dir}}, dir
}

// sessionsWith lists the sessions as `polyrepl sessions --json` run with o
// sees them, and what it said on stderr.
func (e *env) sessionsWith(o runOpts) ([]sessionInfo, string) {
	e.t.Helper()
	stdout, stderr, code := e.runWith(o, "sessions", "--json")
	if code != 0 {
		e.t.Fatalf("polyrepl sessions --json: exit %d: %s%s", code, stdout, stderr)
	}
	var r struct {
		Sessions []sessionInfo `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		e.t.Fatalf("polyrepl sessions --json: %v: %q", err, stdout)
	}
	return r.Sessions, stderr
}

// lineWith is the first line of s that holds sub, or "".
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// TestReliabilityTwoRuntimeDirsOneDaemon is the reproduction: a
// session made under one XDG_RUNTIME_DIR, then `sessions`, `daemon`,
// `exec` and `stop` under another, on one state directory. The second
// environment reaches the first one's daemon (and says so), sees the
// session idle with its names, never starts a daemon of its own, and its
// stop is the one daemon's.
func TestReliabilityTwoRuntimeDirsOneDaemon(t *testing.T) {
	needPython(t)
	t.Parallel()
	b, other := otherRuntime(t) // before newEnv: removed after its teardown
	e := newEnv(t)
	otherSock := filepath.Join(other, "polyrepl", "daemon.sock")

	if r := e.runJSON("exec", "victim", "important = 42; important"); r.Value != "42" {
		t.Fatalf("exec victim: %v", r)
	}
	first := e.status()

	list, noted := e.sessionsWith(b)
	var victim *sessionInfo
	for i := range list {
		if list[i].Name == "victim" {
			victim = &list[i]
		}
	}
	if victim == nil || victim.State != "idle" || !slices.Contains(victim.Names, "important") {
		t.Fatalf("sessions under the other XDG_RUNTIME_DIR: %+v, want victim idle with the name important", list)
	}
	wantContains(t, "the note under the other XDG_RUNTIME_DIR", noted, "polyrepl: The daemon that keeps the state directory", first.Socket, otherSock, "reached it there")
	if n := strings.Count(noted, "reached it there"); n != 1 {
		t.Errorf("the note was said %d times in one command, want once: %q", n, noted)
	}

	stdout, stderr, code := e.runWith(b, "status", "--json")
	var st statusReply
	if code != 0 || json.Unmarshal([]byte(stdout), &st) != nil || st.PID != first.PID || st.Socket != first.Socket || st.StateDir != first.StateDir {
		t.Errorf("status --json under the other XDG_RUNTIME_DIR: exit %d %s %s; want the daemon pid %d at %s", code, stdout, stderr, first.PID, first.Socket)
	}
	stdout, _, _ = e.runWith(b, "status")
	wantContains(t, "status under the other XDG_RUNTIME_DIR", stdout, "socket: "+first.Socket+" (found through the state directory; this environment would look at "+otherSock+")", "state:  "+first.StateDir)

	// The first environment still has its names.
	if r := e.runJSON("exec", "victim", "important"); r.Value != "42" {
		t.Errorf("exec victim 'important' after the other environment listed it: %v", r)
	}

	// A daemon started by hand under the other environment refuses.
	_, stderr, code = e.runWith(b, "daemon")
	if code != 2 {
		t.Errorf("polyrepl daemon on a kept state directory: exit %d, want 2; stderr %q", code, stderr)
	}
	wantContains(t, "the refusal", stderr, fmt.Sprintf("another polyrepl daemon (pid %d) keeps the state directory %s and listens at %s", first.PID, first.StateDir, first.Socket), "not starting a second one")

	if r := e.runJSONWith(b, "exec", "victim", "important + 1"); r.Value != "43" {
		t.Errorf("exec victim under the other environment: %v", r)
	}
	if ds := e.daemons(); len(ds) != 1 || ds[0].PID != first.PID {
		t.Errorf("daemons: %s, want only pid %d", proctest.Describe(ds), first.PID)
	}
	if _, err := os.Lstat(filepath.Join(other, "polyrepl")); err == nil {
		t.Errorf("the other environment made %s: a daemon was started there", filepath.Join(other, "polyrepl"))
	}

	// Its stop is the one daemon's, asked for.
	stdout, _, code = e.runWith(b, "stop")
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("Stopped the daemon (pid %d); ended 1 session", first.PID)) || !strings.Contains(stdout, "victim") {
		t.Errorf("stop under the other environment: exit %d %q", code, stdout)
	}
	if _, _, code := e.run("status"); code != 1 {
		t.Errorf("status after the stop: exit %d, want 1 (no daemon)", code)
	}
	report(t, oneDaemon, "a session made under one XDG_RUNTIME_DIR; `sessions`, `status`, `daemon`, `exec`, `stop` under another, one state directory (the issue's reproduction)",
		"one daemon (pid %d): the other environment saw `victim` %s with its names (it said once: %q); `important` was still 42 for the first; `polyrepl daemon` there refused (exit 2); its stop stopped the one daemon",
		first.PID, victim.State, strings.TrimPrefix(lineWith(noted, "reached it there"), "polyrepl: "))
}

// TestReliabilityDaemonOnAKeptStateDir starts `polyrepl daemon` by hand
// on a state directory another daemon keeps, from the same environment
// and from another XDG_RUNTIME_DIR, also after the lock file was removed
// under the running daemon (a cleaner, a person), and on its socket with
// another state directory: each refuses and never serves, and the
// sessions go on.
func TestReliabilityDaemonOnAKeptStateDir(t *testing.T) {
	needPython(t)
	t.Parallel()
	b, other := otherRuntime(t) // before newEnv: removed after its teardown
	e := newEnv(t)
	e.must(0, "exec", "s", "n = 7")
	st := e.status()

	_, same, code := e.run("daemon")
	if code != 2 {
		t.Errorf("polyrepl daemon in the same environment: exit %d, want 2: %q", code, same)
	}
	wantContains(t, "the refusal in the same environment", same, fmt.Sprintf("pid %d", st.PID), st.Socket)

	lock := filepath.Join(e.stateDir(), "daemon.lock")
	if err := os.Remove(lock); err != nil {
		t.Fatalf("removing %s: %v", lock, err)
	}
	_, unlocked, code := e.runWith(b, "daemon")
	if code != 2 {
		t.Errorf("polyrepl daemon after the lock file was removed: exit %d, want 2: %q", code, unlocked)
	}
	wantContains(t, "the refusal with the lock file removed", unlocked, fmt.Sprintf("pid %d", st.PID), st.Socket, "its lock file there was removed, but it runs")
	if _, err := os.Lstat(filepath.Join(other, "polyrepl", "daemon.sock")); err == nil {
		t.Errorf("a socket was made under the other XDG_RUNTIME_DIR")
	}
	if ds := e.daemons(); len(ds) != 1 || ds[0].PID != st.PID {
		t.Errorf("daemons: %s, want only pid %d", proctest.Describe(ds), st.PID)
	}
	// Another state directory, the same socket: that socket, and the
	// holders' directory beside it, are the running daemon's.
	otherState := testenv.ShortDir(t)
	_, sameSocket, code := e.runWith(runOpts{extra: []string{"XDG_STATE_HOME=" + otherState}}, "daemon")
	if code != 2 {
		t.Errorf("polyrepl daemon on the same socket with another state directory: exit %d, want 2: %q", code, sameSocket)
	}
	wantContains(t, "the refusal on the same socket", sameSocket, fmt.Sprintf("another polyrepl daemon (pid %d) listens at %s", st.PID, st.Socket))
	if ds := e.daemons(); len(ds) != 1 || ds[0].PID != st.PID {
		t.Errorf("daemons: %s, want only pid %d", proctest.Describe(ds), st.PID)
	}
	if r := e.runJSONWith(b, "exec", "s", "n * 6"); r.Value != "42" {
		t.Errorf("the session after the refusals: %v", r)
	}
	report(t, oneDaemon, "`polyrepl daemon` started by hand on a state directory a daemon keeps: same environment, another XDG_RUNTIME_DIR, after the lock file was removed under the running daemon, and on its socket with another state directory",
		"each refused (exit 2), naming the running daemon and its socket: %q; the session went on", strings.TrimPrefix(lineWith(unlocked, "polyrepl: error: "), "polyrepl: error: "))
}

// TestReliabilityStrippedMCPReachesThePersonsDaemon is the TypeScript
// SDK's default environment (HOME, LOGNAME, PATH, SHELL, TERM, USER, and
// here the test's tag): no XDG_RUNTIME_DIR, no XDG_STATE_HOME. A person's
// terminal with its own XDG_RUNTIME_DIR made a session; the agent's
// server reaches the same daemon through the state directory, and sees
// the session idle with its names, not unreachable.
func TestReliabilityStrippedMCPReachesThePersonsDaemon(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.unsetenv("XDG_STATE_HOME") // the person's state is HOME's, as the stripped server's
	stripped := []string{
		"HOME=" + e.home,
		"LOGNAME=" + orDefault(os.Getenv("LOGNAME"), "tester"),
		"PATH=/usr/bin:/bin",
		"SHELL=" + orDefault(os.Getenv("SHELL"), "/bin/sh"),
		"TERM=" + orDefault(os.Getenv("TERM"), "dumb"),
		"USER=" + orDefault(os.Getenv("USER"), "tester"),
		"POLYREPL_TEST_TAG=" + e.tag,
	}
	stripped = append(stripped, coverVars()...) // GOCOVERDIR, when coverage is measured
	// Where the stripped environment's own socket is; a daemon already
	// answering there is someone's real one, which this test must not
	// touch.
	status := exec.Command(e.bin, "status", "--json")
	status.Env, status.Dir = stripped, e.home
	out, _ := status.Output()
	var none struct {
		Error string `json:"error"`
	}
	if status.ProcessState.ExitCode() != 1 || json.Unmarshal(out, &none) != nil {
		t.Skipf("a daemon answers where the stripped environment looks (a real one?): %s", out)
	}
	own, _, _ := strings.Cut(strings.TrimPrefix(none.Error, "no daemon is running (socket "), ", state directory ")
	wantState := filepath.Join(e.home, ".local", "state", "polyrepl")
	if !strings.Contains(none.Error, "state directory "+wantState) {
		t.Fatalf("the stripped environment's state directory: %q, want under %s", none.Error, wantState)
	}

	if r := e.runJSON("exec", "mine", "important = 42; important"); r.Value != "42" {
		t.Fatalf("the person's exec: %v", r)
	}
	person := e.status()

	s := e.startMCPWith(stripped)

	var list struct {
		Sessions []sessionInfo `json:"sessions"`
	}
	txt := s.call("sessions", nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].Name != "mine" || list.Sessions[0].State != "idle" || !slices.Contains(listedNames(txt, "mine"), "important") {
		t.Errorf("the agent's sessions: %+v (%q), want the person's session idle with its name", list.Sessions, txt)
	}
	if strings.Contains(txt, "unreachable") || strings.Contains(txt, "kill") {
		t.Errorf("the agent is told of an unreachable session or to kill: %q", txt)
	}
	r, rtxt := s.cell("exec", map[string]any{"session": "mine", "code": "important"})
	if r.Status != "done" || !strings.HasSuffix(rtxt, ": 42") {
		t.Errorf("the agent's exec in the person's session: %v, %q", r, rtxt)
	}
	if r2 := e.runJSON("exec", "mine", "important"); r2.Value != "42" {
		t.Errorf("the person's session after the agent: %v", r2)
	}
	s.close()
	said := s.stderr.String()
	wantContains(t, "the server's standard error", said, person.Socket, "reached it there")
	if n := strings.Count(said, "reached it there"); n != 1 {
		t.Errorf("the server said it %d times, want once: %q", n, said)
	}
	if own == "" || answers(own) {
		t.Errorf("a daemon answers at the stripped environment's own socket %q", own)
	}
	if ds := e.daemons(); len(ds) != 1 || ds[0].PID != person.PID {
		t.Errorf("daemons: %s, want only the person's, pid %d", proctest.Describe(ds), person.PID)
	}
	report(t, oneDaemon, "an MCP server started with the TypeScript SDK's environment (HOME, LOGNAME, PATH, SHELL, TERM, USER) while a person's terminal, with its own XDG_RUNTIME_DIR, keeps a session",
		"the server reached the person's daemon (pid %d) through the state directory, saw the session idle with its names and ran a cell in it (`important` = %s); it logged once where it found it; no daemon was started at %s", person.PID, r.Value, own)
}

// TestReliabilityHoldersBesideAnotherSocket leaves a session to its
// holder (stop --keep-sessions) under one XDG_RUNTIME_DIR, whose holder
// listens beside that daemon's socket, and starts the next daemon from
// another: the live note says where the holder listens, and the new
// daemon takes the session up there, names and all, instead of listing
// it unreachable (and ending it at its stop).
func TestReliabilityHoldersBesideAnotherSocket(t *testing.T) {
	needPython(t)
	t.Parallel()
	b, other := otherRuntime(t) // before newEnv: removed after its teardown
	e := newEnv(t)
	first := e.runJSON("exec", "kept", "important = 42; important")
	if first.Value != "42" {
		t.Fatalf("exec kept: %v", first)
	}
	before := e.session("kept")
	e.must(0, "stop", "--keep-sessions")

	r := e.runJSONWith(b, "exec", "kept", "important + 1")
	if r.Value != "43" || r.Generation != first.Generation {
		t.Fatalf("exec under the other XDG_RUNTIME_DIR after the daemon left: %v, want 43 in generation %s", r, first.Generation)
	}
	list, _ := e.sessionsWith(b)
	if len(list) != 1 || list[0].State != "idle" || list[0].PID != before.PID || !slices.Contains(list[0].Names, "important") {
		t.Errorf("sessions from the new daemon: %+v, want kept idle, pid %d, with its names", list, before.PID)
	}
	st := e.status() // the first environment finds the new daemon through the state directory
	if want := filepath.Join(other, "polyrepl", "daemon.sock"); st.Socket != want {
		t.Errorf("the new daemon listens at %s, want %s", st.Socket, want)
	}
	report(t, oneDaemon, "a session left to its holder (`stop --keep-sessions`) under one XDG_RUNTIME_DIR; the next daemon started from another",
		"it took the session up at the holder's socket beside the first daemon's, which the live note names: same pid %d, `important` + 1 = %s, listed %s", before.PID, r.Value, list[0].State)
}

// TestReliabilityPlantedStateDirFiles plants symlinks at the state
// directory's lock and at the file that says where the daemon listens:
// the lock is refused (the daemon does not start, and says what to do),
// the other is replaced, not written through; the targets stay as they
// were.
func TestReliabilityPlantedStateDirFiles(t *testing.T) {
	needPython(t)
	t.Parallel()
	var said []string
	for _, name := range []string{"daemon.lock", "daemon.json"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			dir := e.stateDir()
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			os.Chmod(filepath.Dir(dir), 0o700)
			to := filepath.Join(t.TempDir(), "target")
			os.WriteFile(to, []byte("precious\n"), 0o644)
			os.Chmod(to, 0o644)
			os.Symlink(to, filepath.Join(dir, name))
			_, stderr, code := e.run("exec", "r", "1")
			if name == "daemon.lock" {
				if code == 0 {
					t.Errorf("exec with %s planted as a symlink exited 0", name)
				}
				wantContains(t, "the refusal", stderr, "refusing "+filepath.Join(dir, name), "it is a symlink", "remove it")
				said = append(said, lineWith(stderr, "refusing"))
			} else {
				if code != 0 {
					t.Errorf("exec with %s planted as a symlink: exit %d: %s", name, code, stderr)
				}
				fi, err := os.Lstat(filepath.Join(dir, name))
				if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
					t.Errorf("%s after the daemon started: %v %v, want its own 0600 file", name, fi, err)
				}
			}
			if b, _ := os.ReadFile(to); string(b) != "precious\n" {
				t.Errorf("the target of %s now holds %q", name, b)
			}
			if fi, _ := os.Stat(to); fi.Mode().Perm() != 0o644 {
				t.Errorf("the target of %s now has mode %v", name, fi.Mode().Perm())
			}
		})
	}
	report(t, oneDaemon, "the state directory's `daemon.lock` and `daemon.json` planted as symlinks to a 0644 file",
		"the lock refused, the daemon not started (%q); `daemon.json` replaced by the daemon's own 0600 file; the targets untouched", strings.Join(said, ""))
}
