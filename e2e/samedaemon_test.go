package e2e

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

// TestSameDaemonStrippedEnv is issue 13 #1: an MCP client that starts
// `polyrepl mcp` with only the six variables the TypeScript SDK passes
// (HOME, LOGNAME, PATH, SHELL, TERM, USER) and a person's terminal with
// XDG_RUNTIME_DIR=/run/user/<uid> reach one daemon and see one session.
//
// Unlike every other test it uses the real /run/user/<uid>, since the
// behaviour under test is finding that directory without being told. It
// skips when that directory is not the user's and 0700, or when a daemon
// already answers there (someone's real one); as root on a machine
// without it (CI) it makes it, 0700, and removes it afterwards.
func TestSameDaemonStrippedEnv(t *testing.T) {
	needPython(t)
	t.Parallel()
	uid := os.Getuid()
	runDir := filepath.Join("/run/user", strconv.Itoa(uid))
	switch _, err := os.Lstat(runDir); {
	case errors.Is(err, fs.ErrNotExist):
		if uid != 0 {
			t.Skipf("%s does not exist and only root may make it; this test needs the real runtime directory", runDir)
		}
		if err := os.Mkdir(runDir, 0o700); err != nil {
			t.Skipf("cannot make %s for this test: %v", runDir, err)
		}
		// Registered before newEnv, so it runs after the env's teardown
		// has stopped the daemon.
		t.Cleanup(func() { os.RemoveAll(runDir) })
	case err != nil:
		t.Skipf("cannot inspect %s: %v", runDir, err)
	default:
		if err := paths.CheckPrivateDir(runDir); err != nil {
			t.Skipf("%s is not usable as the runtime directory: %v", runDir, err)
		}
	}
	sockDir := filepath.Join(runDir, "polyrepl")
	sock := filepath.Join(sockDir, paths.SocketName)
	if answers(sock) {
		t.Skipf("a polyrepl daemon already answers on %s (a real one); this test will not share it", sock)
	}
	if _, err := os.Lstat(sockDir); errors.Is(err, fs.ErrNotExist) {
		t.Cleanup(func() { os.RemoveAll(sockDir) })
	}
	// The fallback a stripped environment used to reach: a daemon that
	// starts answering there during the test is the bug.
	fallback := filepath.Join(os.TempDir(), "polyrepl-"+strconv.Itoa(uid), paths.SocketName)
	fallbackBefore := answers(fallback)
	if _, err := os.Lstat(filepath.Dir(fallback)); errors.Is(err, fs.ErrNotExist) {
		t.Cleanup(func() { os.RemoveAll(filepath.Dir(fallback)) })
	}

	e := newEnv(t)
	e.setenv("XDG_RUNTIME_DIR", runDir) // the person's terminal, as a login session sets it
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon log (last lines):\n%s", tail(filepath.Join(sockDir, paths.LogName), 40))
		}
	})

	// The six variables and nothing else. PATH is one of them; its
	// value puts the test's Python first as python3, so that the session
	// runs it without POLYREPL_PYTHON.
	pybin := t.TempDir()
	if err := os.Symlink(python, filepath.Join(pybin, "python3")); err != nil {
		t.Fatal(err)
	}
	stripped := []string{
		"HOME=" + e.home,
		"LOGNAME=" + orDefault(os.Getenv("LOGNAME"), "tester"),
		"PATH=" + pybin + ":/usr/bin:/bin",
		"SHELL=" + orDefault(os.Getenv("SHELL"), "/bin/sh"),
		"TERM=" + orDefault(os.Getenv("TERM"), "dumb"),
		"USER=" + orDefault(os.Getenv("USER"), "tester"),
	}
	stripped = append(stripped, coverVars()...) // GOCOVERDIR, when coverage is measured
	// Whatever daemon the stripped environment reaches is stopped at the
	// end, also when the test fails: if it is not the person's, nothing
	// else would stop it.
	stopStripped := func() string {
		stop := exec.Command(e.bin, "stop")
		stop.Env, stop.Dir = stripped, e.home
		out, err := stop.CombinedOutput()
		if err != nil {
			t.Errorf("polyrepl stop with the stripped environment: %v: %s", err, out)
		}
		return string(out)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			stopStripped()
		}
	})
	s := e.startMCPWith(stripped)

	// The agent makes a session; the daemon it starts is the one the
	// person's terminal reaches.
	r, _ := s.cell("exec", map[string]any{"session": "shared", "code": "x = 41"})
	if r.Status != "done" || r.Generation == "" {
		t.Fatalf("exec through MCP: %v", r)
	}
	st := e.status()
	if st.Socket != sock {
		t.Errorf("the CLI's daemon is on %s, want %s", st.Socket, sock)
	}
	if env, err := os.ReadFile("/proc/" + strconv.Itoa(st.PID) + "/environ"); err != nil {
		t.Errorf("reading the daemon's environment: %v", err)
	} else if strings.Contains("\x00"+string(env), "\x00XDG_RUNTIME_DIR=") || strings.Contains(string(env), "POLYREPL_TEST_TAG=") {
		t.Errorf("daemon pid %d has XDG_RUNTIME_DIR or the test tag: the CLI started it, not the stripped MCP server", st.PID)
	}
	list := e.sessions()
	if len(list) != 1 || list[0].Name != "shared" || list[0].Generation != r.Generation {
		t.Fatalf("the CLI's sessions: %+v, want the one session 'shared' of generation %s that MCP made", list, r.Generation)
	}
	if out, _ := e.must(0, "exec", "shared", "x + 1"); !strings.Contains(out, "42") {
		t.Errorf("the CLI in the agent's session: %q, want 42", out)
	}
	// The same life: its generation, given once, is not given again.
	if r, txt := s.cell("exec", map[string]any{"session": "shared", "code": "x"}); !strings.HasSuffix(txt, ": 41") || r.Generation != "" {
		t.Errorf("the agent after the CLI's cell: %v, %q", r, txt)
	}
	if !fallbackBefore && answers(fallback) {
		t.Errorf("a second daemon answers on %s: the stripped environment did not find %s", fallback, sock)
	}

	// Stop it, and prove the daemon and the session's processes are gone
	// (they carry no test tag, being the stripped server's children).
	s.close()
	e.must(0, "stop")
	stopped = true
	if out := stopStripped(); !strings.Contains(out, "No daemon was running") {
		t.Errorf("after the CLI stopped its daemon, stop with the stripped environment said %q: it reached another", out)
	}
	ok := waitFor(5*time.Second, func() bool {
		return !proctest.Alive(st.PID) && len(proctest.WithVar("POLYREPL_SESSION="+r.Generation)) == 0
	})
	if !ok {
		left := proctest.WithVar("POLYREPL_SESSION=" + r.Generation)
		t.Errorf("after stop: daemon pid %d alive %v; session processes left:%s", st.PID, proctest.Alive(st.PID), proctest.Describe(left))
	}
}

// answers reports whether something accepts connections on the socket.
func answers(sock string) bool {
	c, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
