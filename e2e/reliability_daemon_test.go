// The reliability suite's daemon failures: a daemon killed with a cell
// running, secrets in the environment, a full disk and a read-only state
// directory (the last two run the daemon under a wrapper, startDaemonUnder).

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReliabilitySecrets passes a secret in the caller's environment: it
// reaches the session, and no log line, record or transcript.
func TestReliabilitySecrets(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	secret := "s3cr3t-" + e.tag
	r := e.runJSONWith(runOpts{extra: []string{"POLYREPL_TEST_SECRET=" + secret}}, "exec", "env", "import os; os.environ['POLYREPL_TEST_SECRET'] == '"+secret+"'")
	if r.Value != "True" {
		t.Fatalf("the secret did not reach the session: %v", r)
	}
	e.must(0, "exec", "env", "1")
	e.must(0, "kill", "env")
	var found []string
	checked := 0
	for _, root := range []string{e.socketDir(), e.stateDir()} {
		filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() || fi.Mode()&os.ModeSocket != 0 {
				return nil
			}
			b, _ := os.ReadFile(path)
			checked++
			// The transcript and record hold the code, which names it here;
			// the value itself must appear nowhere but in that code.
			if n := strings.Count(string(b), secret); n > strings.Count(string(b), "== '"+secret) {
				found = append(found, path)
			}
			return nil
		})
	}
	if len(found) > 0 {
		t.Errorf("the caller's environment was written to %s", strings.Join(found, ", "))
	}
	// Every directory polyrepl made is private, every file it wrote too.
	var loose []string
	for _, root := range []string{e.socketDir(), filepath.Join(e.stateDir())} {
		filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
			switch {
			case err != nil:
			case fi.IsDir() && fi.Mode().Perm() != 0o700, !fi.IsDir() && fi.Mode().Perm()&0o077 != 0:
				loose = append(loose, fmt.Sprintf("%s %v", path, fi.Mode().Perm()))
			}
			return nil
		})
	}
	if len(loose) > 0 {
		t.Errorf("open to others: %s", strings.Join(loose, ", "))
	}
	report(t, "5 Who gets in", "the modes of the socket directory and state files", "every directory 0700 and every file and socket closed to others (%d open: %v)", len(loose), loose)
	report(t, "5 Who gets in", "the caller's environment passed with exec", "reached the session; found in %d of the %d log, record, transcript and state files", len(found), checked)
}

// TestReliabilityDiskFull runs the daemon with a file-size limit, as a
// full state disk behaves for it (writes fail): cells still run and
// return, and each reply says what could not be saved.
func TestReliabilityDiskFull(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) is not installed")
	}
	// 128 KB: the runtimes' own files fit (the Python worker is 72 KB),
	// what the test writes past it does not.
	e.startDaemonUnder("the daemon under a file-size limit", prlimit, "--fsize=131072", e.bin, "daemon")
	big := strings.Repeat("# padding\n", 16000) + "x = 42"
	r := e.runJSONWith(runOpts{stdin: big}, "exec", "full", "-") // over one argument's 128 KB
	saves := strings.Join(r.notesOf("save"), "\n")
	if r.Status != "done" || !strings.Contains(saves, "transcript") {
		t.Errorf("a cell whose transcript cannot be written: %v", r)
	}
	r = e.runJSON("exec", "full", "print('z' * 200000)")
	saves2 := strings.Join(r.notesOf("save"), "\n")
	if r.Status != "done" || r.OutputCut == nil || !strings.Contains(saves2, "could not be saved") {
		t.Errorf("a cell whose whole output cannot be spooled: %v", r)
	}
	for i := 0; i < 20; i++ {
		r = e.runJSON("exec", "full", "print('w' * 9000)")
	}
	var saves3 string
	for _, n := range r.notesOf("save") {
		if strings.Contains(n, "record") {
			saves3 = n
		}
	}
	if r.Status != "done" || !strings.Contains(saves3, "record could not be saved") {
		t.Errorf("a cell whose record entry cannot be saved: %v", r)
	}
	if r := e.runJSON("exec", "full", "x"); r.Value != "42" {
		t.Errorf("the session after the failed writes: %v", r)
	}
	report(t, "4 Faults", "the state disk is full (the daemon under a 128 KB file-size limit)",
		"cells ran and returned; replies said: %q; %q; %q", firstLine(saves), firstLine(saves2), firstLine(saves3))
}

// startDaemonUnder starts the env's daemon through a command that sets
// up its surroundings first (argv ends by running `polyrepl daemon`), and
// waits until it answers. It keeps the command's exit status and what it
// printed (the foreground daemon logs to stderr), so that a daemon that
// would not start, or died during the test, says why.
func (e *env) startDaemonUnder(what string, argv ...string) {
	e.t.Helper()
	out := filepath.Join(e.home, "daemon-under.out")
	f, err := os.Create(out)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = e.vars
	cmd.Dir = e.home
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Start()
	f.Close()
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	// status says how the command ended; read only once done is closed.
	status := func() string {
		if waitErr == nil {
			return "exit status 0"
		}
		return waitErr.Error()
	}
	exited := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	up := waitFor(10*time.Second, func() bool {
		if exited() {
			return true
		}
		_, _, code := e.run("status")
		return code == 0
	})
	switch {
	case exited():
		e.t.Fatalf("%s exited before it answered (%s); it printed:\n%s", what, status(), tail(out, 20))
	case !up:
		e.t.Fatalf("%s did not answer within 10 s (it still runs); it printed:\n%s", what, tail(out, 20))
	}
	// Runs before the env's teardown stops the daemon (and removes the
	// file): a failed test says whether the daemon had ended, how, and
	// what it printed.
	e.t.Cleanup(func() {
		if !e.t.Failed() {
			return
		}
		select { // a daemon told to stop may be on its way out
		case <-done:
		case <-time.After(time.Second):
		}
		if exited() {
			e.t.Logf("%s exited during the test (%s); it printed:\n%s", what, status(), tail(out, 20))
		} else {
			e.t.Logf("%s still ran when the test ended; it printed:\n%s", what, tail(out, 20))
		}
	})
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	if len(l) > 160 {
		l = l[:160] + "…"
	}
	return l
}

// TestReliabilityReadOnlyState runs the daemon with its state directory
// read-only (a bind mount in a mount namespace of its own): cells still
// run and return, and replies say what could not be saved.
func TestReliabilityReadOnlyState(t *testing.T) {
	needPython(t)
	t.Parallel()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	if err := exec.Command("unshare", "-m", "true").Run(); err != nil {
		t.Skipf("cannot make a mount namespace here (needs CAP_SYS_ADMIN): %v", err)
	}
	e := newEnv(t)
	e.must(0, "exec", "ro", "1")
	e.must(0, "stop")
	e.startDaemonUnder("the daemon with a read-only state directory", "unshare", "-m", "sh", "-c",
		`mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && exec "$2" daemon`, "sh", e.state, e.bin)
	r := e.runJSON("exec", "ro", "x = 6 * 7\nx")
	notes := strings.Join(r.notesOf("save"), "\n")
	if r.Value != "42" || !strings.Contains(notes, "transcript") || !strings.Contains(notes, "record could not be saved") {
		t.Errorf("a cell with the state read-only: %v", r)
	}
	r2 := e.runJSON("exec", "ro", "print('v' * 100000)")
	notes2 := strings.Join(r2.notesOf("save"), "\n")
	if r2.Status != "done" || r2.OutputCut == nil || !strings.Contains(notes2, "could not be saved") {
		t.Errorf("a long output with the state read-only: %v", r2)
	}
	report(t, "4 Faults", "the state directory is read-only (a read-only bind mount under the daemon)",
		"cells ran and returned (`x` = %s); replies said: %q", r.Value, firstLine(notes))
}
