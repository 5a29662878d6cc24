package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

// daemons lists the test's daemon processes (`polyrepl daemon`).
func (e *env) daemons() []proctest.Process {
	var out []proctest.Process
	for _, p := range e.tagged() {
		f := strings.Fields(p.Cmdline)
		if len(f) == 2 && filepath.Base(f[0]) == "polyrepl" && f[1] == "daemon" {
			out = append(out, p)
		}
	}
	return out
}

// TestDaemon checks the daemon's life: status and stop when none runs
// start nothing; any client starts it, detached in its own process session
// with a log beside its socket, and it outlives the client; two clients
// starting it at once end with one daemon; stop ends it and every session,
// naming them.
func TestDaemon(t *testing.T) {
	t.Parallel()

	t.Run("none running", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		out, _, _ := e.run("status")
		wantContains(t, "status with no daemon", out, "No daemon")
		out, errOut, code := e.run("stop")
		if code != 0 {
			t.Errorf("stop with no daemon: exit %d, want 0: %s%s", code, out, errOut)
		}
		wantContains(t, "stop with no daemon", out, "No daemon")
		if ds := e.daemons(); len(ds) != 0 {
			t.Errorf("status or stop started a daemon:%s", proctest.Describe(ds))
		}
		if _, err := os.Stat(filepath.Join(e.socketDir(), "daemon.sock")); err == nil {
			t.Errorf("status or stop left a socket behind")
		}
	})

	t.Run("outlives the client", func(t *testing.T) {
		needPython(t)
		t.Parallel()
		e := newEnv(t)
		e.must(0, "exec", "one", "1")
		st := e.status()
		if st.PID <= 0 || st.Sessions != 1 {
			t.Fatalf("status --json: %+v", st)
		}
		if st.Socket != filepath.Join(e.socketDir(), "daemon.sock") {
			t.Errorf("status says the socket is %s, want %s", st.Socket, filepath.Join(e.socketDir(), "daemon.sock"))
		}
		if want := filepath.Join(e.socketDir(), "daemon.log"); st.Log != want {
			t.Errorf("status says the log is %s, want %s beside the socket", st.Log, want)
		}
		if _, err := os.Stat(filepath.Join(e.socketDir(), "daemon.log")); err != nil {
			t.Errorf("no daemon log beside the socket: %v", err)
		}
		if sid := proctest.StatField(st.PID, 6); sid != strconv.Itoa(st.PID) {
			t.Errorf("the daemon (pid %d) is not in its own process session (session id %s)", st.PID, sid)
		}
		e.must(0, "exec", "two", "2")
		if again := e.status(); again.PID != st.PID || again.Sessions != 2 {
			t.Errorf("a second client found daemon %+v, want the first one (pid %d) with 2 sessions", again, st.PID)
		}
		if ds := e.daemons(); len(ds) != 1 || ds[0].PID != st.PID {
			t.Errorf("want exactly the one daemon %d, found:%s", st.PID, proctest.Describe(ds))
		}
		out, _ := e.must(0, "status")
		wantContains(t, "status", out, fmt.Sprintf("pid %d", st.PID), st.Version, st.Socket, "2 sessions")
	})

	t.Run("racing clients", func(t *testing.T) {
		needPython(t)
		t.Parallel()
		e := newEnv(t)
		for round := range 3 {
			var wg sync.WaitGroup
			codes := make([]int, 4)
			outs := make([]string, 4)
			for i := range codes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					o, eo, c := e.run("exec", fmt.Sprintf("race%d", i), "1")
					codes[i], outs[i] = c, o+eo
				}()
			}
			wg.Wait()
			for i, c := range codes {
				if c != 0 {
					t.Errorf("round %d: racing client %d: exit %d: %s", round, i, c, outs[i])
				}
			}
			// A daemon that lost the race may take a moment to notice.
			if !waitFor(5*time.Second, func() bool { return len(e.daemons()) == 1 }) {
				t.Errorf("round %d: want exactly one daemon, found:%s", round, proctest.Describe(e.daemons()))
			}
			if st := e.status(); st.Sessions != len(codes) {
				t.Errorf("round %d: the daemon has %d sessions, want %d (one daemon serving every client)", round, st.Sessions, len(codes))
			}
			out, errOut, code := e.run("stop")
			if code != 0 {
				t.Errorf("round %d: stop: exit %d: %s%s", round, code, out, errOut)
			}
			if !waitFor(5*time.Second, func() bool { return len(e.daemons()) == 0 }) {
				t.Errorf("round %d: daemons still running after stop:%s", round, proctest.Describe(e.daemons()))
			}
		}
	})

	t.Run("stop names the ended sessions", func(t *testing.T) {
		needPython(t)
		t.Parallel()
		e := newEnv(t)
		for round := range 5 {
			e.must(0, "exec", "alpha", "a_name = 1")
			e.must(0, "exec", "beta", "b_name = 2")
			pid := e.status().PID
			out, errOut, code := e.run("stop")
			if code != 0 {
				t.Errorf("round %d: stop with two sessions: exit %d\nstdout: %s\nstderr: %s", round, code, out, errOut)
				continue
			}
			wantContains(t, fmt.Sprintf("round %d: stop", round), out, strconv.Itoa(pid), "alpha", "beta", "a_name", "b_name")
			if _, _, code := e.run("status"); code == 0 {
				t.Errorf("round %d: status still finds a daemon after stop", round)
			}
		}
	})

	t.Run("fallback socket directory", func(t *testing.T) {
		needPython(t)
		if fi, err := os.Lstat(fmt.Sprintf("/run/user/%d", os.Getuid())); err == nil && fi.IsDir() && fi.Mode().Perm()&0o077 == 0 {
			t.Skipf("this machine has a private /run/user/%d, which comes before the /tmp fallback", os.Getuid())
		}
		t.Parallel()
		e := newEnv(t)
		e.unsetenv("XDG_RUNTIME_DIR")
		e.setenv("TMPDIR", e.runtime)
		e.must(0, "exec", "fb", "1")
		dir := filepath.Join(e.runtime, fmt.Sprintf("polyrepl-%d", os.Getuid()))
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Fatalf("without XDG_RUNTIME_DIR, want the socket directory %s with mode 0700: %v %v", dir, fi, err)
		}
		if st := e.status(); st.Socket != filepath.Join(dir, "daemon.sock") {
			t.Errorf("status says the socket is %s, want it in %s", st.Socket, dir)
		}
		e.must(0, "stop")
		os.Chmod(dir, 0o755)
		out, errOut, code := e.run("exec", "fb", "1")
		if code != 2 {
			t.Errorf("an open fallback directory: exit %d, want 2: %s%s", code, out, errOut)
		}
		wantContains(t, "refusing an open fallback directory", errOut, dir, "0755")
		os.Chmod(dir, 0o700)
	})
}

// TestSocketDirRefused checks that a socket directory an attacker could
// have prepared — a symlink, one open to others, one owned by another
// user — is refused with a clear error and exit status 2.
func TestSocketDirRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		prepare func(t *testing.T, e *env, dir string)
		want    []string
	}{
		{"symlink", func(t *testing.T, e *env, dir string) {
			target := filepath.Join(e.home, "elsewhere")
			os.Mkdir(target, 0o700)
			if err := os.Symlink(target, dir); err != nil {
				t.Fatal(err)
			}
		}, []string{"symlink"}},
		{"mode 0755", func(t *testing.T, e *env, dir string) {
			os.Mkdir(dir, 0o700)
			os.Chmod(dir, 0o755)
		}, []string{"0755"}},
		{"foreign owner", func(t *testing.T, e *env, dir string) {
			if os.Getuid() != 0 {
				t.Skip("giving a directory to another uid needs root")
			}
			os.Mkdir(dir, 0o700)
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, []string{"owned by uid 65534"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			dir := e.socketDir()
			c.prepare(t, e, dir)
			for _, args := range [][]string{{"exec", "s", "1"}, {"status"}, {"start"}} {
				out, errOut, code := e.run(args...)
				if code != 2 {
					t.Errorf("%s with the socket directory a %s: exit %d, want 2\n%s%s", args, c.name, code, out, errOut)
				}
				wantContains(t, fmt.Sprintf("%s: stderr", args), errOut, append([]string{"polyrepl: error: ", dir}, c.want...)...)
			}
			if ds := e.daemons(); len(ds) != 0 {
				t.Errorf("a daemon started on a refused socket directory:%s", proctest.Describe(ds))
			}
			if c.name == "symlink" {
				if ents, _ := os.ReadDir(filepath.Join(e.home, "elsewhere")); len(ents) != 0 {
					t.Errorf("polyrepl wrote into the symlink's target: %v", ents)
				}
			}
			report(t, "5 Who gets in", "the socket directory is pre-planted as a "+c.name, "refused with exit 2 naming the problem (%q); no daemon started, nothing written through it", c.want[0])
		})
	}
}

// asNobody returns a command prefix that runs a program as user nobody, or
// skips the test.
func asNobody(t *testing.T) []string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("running a client as another user needs root")
	}
	if p, err := exec.LookPath("setpriv"); err == nil {
		return []string{p, "--reuid=65534", "--regid=65534", "--clear-groups", "--"}
	}
	if p, err := exec.LookPath("runuser"); err == nil {
		return []string{p, "-u", "nobody", "--"}
	}
	t.Skip("neither setpriv nor runuser is installed to run a client as nobody")
	return nil
}

// TestOtherUserRefused checks the uid check in both places: a client run
// as another user cannot use root's daemon, and the daemon itself refuses
// (and logs) a connection from another uid even when the filesystem lets
// it through.
func TestOtherUserRefused(t *testing.T) {
	needPython(t)
	t.Parallel()
	nobody := asNobody(t)
	e := newEnv(t)
	e.must(0, "exec", "mine", "secret = 42")

	out, errOut, code := e.runWith(runOpts{pre: nobody}, "sessions")
	if code != 2 {
		t.Errorf("sessions as nobody against root's daemon: exit %d, want 2\n%s%s", code, out, errOut)
	}
	wantContains(t, "sessions as nobody", errOut, "polyrepl: error: ")
	wantLacks(t, "sessions as nobody", out+errOut, "secret")

	// Open the way to the socket, so that only the daemon's SO_PEERCRED
	// check stands between nobody and the daemon.
	sock := filepath.Join(e.socketDir(), "daemon.sock")
	var restore []func()
	defer func() {
		for _, f := range restore {
			f()
		}
	}()
	for _, p := range []struct {
		path string
		mode os.FileMode
	}{{e.runtime, 0o711}, {e.socketDir(), 0o711}, {sock, 0o777}} {
		fi, err := os.Stat(p.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p.path, p.mode); err != nil {
			t.Fatal(err)
		}
		restore = append(restore, func() { os.Chmod(p.path, fi.Mode().Perm()) })
	}
	probe := `import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
try:
    s.sendall(b"GET /v1/sessions HTTP/1.0\r\nHost: polyrepl\r\n\r\n")
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
except OSError as e:
    print("error:", e)
    data = b""
sys.stdout.write(data.decode("utf-8", "replace"))
`
	argv := append(append([]string{}, nobody...), python, "-c", probe, sock)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = e.vars
	cmd.Dir = "/"
	b, err := cmd.CombinedOutput()
	for _, f := range restore {
		f()
	}
	restore = nil
	if err != nil {
		t.Fatalf("connecting as nobody through an opened path: %v\n%s", err, b)
	}
	if strings.Contains(string(b), "HTTP/1") || strings.Contains(string(b), "secret") || strings.Contains(string(b), "mine") {
		t.Errorf("the daemon answered a connection from uid 65534:\n%s", b)
	}
	logPath := filepath.Join(e.socketDir(), "daemon.log")
	if !waitFor(5*time.Second, func() bool {
		l, _ := os.ReadFile(logPath)
		return regexp.MustCompile(`refused.*uid 65534`).Match(l)
	}) {
		t.Errorf("the daemon log does not record refusing uid 65534:\n%s", tail(logPath, 20))
	}
	if out, _ := e.must(0, "exec", "mine", "secret"); !strings.Contains(out, "42") {
		t.Errorf("the owner lost the daemon after the refusal: %q", out)
	}
	report(t, "5 Who gets in", "another uid (nobody) connects to root's daemon", "refused by the client's check and, reaching the socket through an opened path, by the daemon's SO_PEERCRED check, which logs it; the owner's session is untouched")
}
