package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

var (
	// binary is the polyrepl binary under test, built once by TestMain.
	binary string
	// binDir holds the binaries; it is world-readable so a client run as
	// another user can execute them.
	binDir string
	// moduleRoot is the directory holding go.mod.
	moduleRoot string
	// python is the interpreter sessions use, or "" with noPython saying why.
	python   string
	noPython string
)

// cmdTimeout bounds every command a test runs, so a hang fails instead of
// stalling the suite. It is an upper bound, never an expectation.
const cmdTimeout = 120 * time.Second

func TestMain(m *testing.M) {
	os.Exit(mainErr(m))
}

func mainErr(m *testing.M) int {
	root, err := findModuleRoot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	moduleRoot = root
	dir, err := os.MkdirTemp("", "prbin")
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	binDir = dir
	binary = filepath.Join(dir, "polyrepl")
	if coverage, err = startCover(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: coverage: %v\n", err)
		return 1
	}
	defer coverage.remove()
	if err := build(binary); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building polyrepl: %v\n", err)
		return 1
	}
	python, noPython = testenv.Python()
	code := m.Run()
	if err := coverage.end(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: coverage: %v\n", err)
		return 1
	}
	if err := writeReliability(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	return code
}

// findModuleRoot asks the go tool where go.mod is, falling back to "..".
func findModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err == nil {
		if mod := strings.TrimSpace(string(out)); mod != "" && mod != os.DevNull {
			return filepath.Dir(mod), nil
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return "", fmt.Errorf("cannot find the module root (no go.mod in %s)", root)
	}
	return root, nil
}

// build compiles cmd/polyrepl into out, statically, with extra go build
// arguments (such as -ldflags), instrumented when coverage is asked for.
func build(out string, extra ...string) error {
	args := append(append([]string{"build", "-o", out}, coverage.buildArgs()...), extra...)
	args = append(args, "./cmd/polyrepl")
	cmd := exec.Command("go", args...)
	cmd.Dir = moduleRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

var (
	versionedOnce sync.Once
	versioned     string
	versionedErr  error
)

// versionedBinary builds, once, a polyrepl that states version 9.9.9.
func versionedBinary() (string, error) {
	versionedOnce.Do(func() {
		versioned = filepath.Join(binDir, "polyrepl-9.9.9")
		versionedErr = build(versioned, "-ldflags", "-X github.com/polyrepl/polyrepl/internal/version.Version=9.9.9")
	})
	return versioned, versionedErr
}

// needPython skips a test that needs a Python interpreter the machine lacks.
func needPython(t *testing.T) {
	t.Helper()
	if python == "" {
		t.Skip(noPython)
	}
}

// env is one test's private world: its own socket and state directories,
// home, and a tag carried by every process the test causes.
type env struct {
	t       *testing.T
	bin     string // binary run by run(); tests may swap it
	runtime string // XDG_RUNTIME_DIR
	state   string // XDG_STATE_HOME
	home    string // HOME, and the default working directory
	tag     string // value of POLYREPL_TEST_TAG
	vars    []string
}

// newEnv prepares a test's world and registers its teardown: stop the
// daemon, then prove that no process carrying the tag is left.
func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{
		t:       t,
		bin:     binary,
		runtime: testenv.ShortDir(t),
		state:   testenv.ShortDir(t),
		home:    testenv.ShortDir(t),
		tag:     newTag(),
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "XDG_RUNTIME_DIR", k == "XDG_STATE_HOME", k == "HOME", k == "TMPDIR",
			strings.HasPrefix(k, "POLYREPL_"):
			continue
		}
		e.vars = append(e.vars, kv)
	}
	e.vars = append(e.vars, worldVars(e.runtime, e.state, e.home, e.tag)...)
	t.Cleanup(e.teardown)
	return e
}

// worldVars are the variables that give a test its own world: socket and
// state directories, home, the tag its processes carry, and the Python
// its sessions use.
func worldVars(runtime, state, home, tag string) []string {
	vars := []string{
		"XDG_RUNTIME_DIR=" + runtime,
		"XDG_STATE_HOME=" + state,
		"HOME=" + home,
		"POLYREPL_TEST_TAG=" + tag,
	}
	if python != "" {
		// IPython sessions use the same interpreter (Debian's ipython3
		// installs for it).
		vars = append(vars, "POLYREPL_PYTHON="+python, "POLYREPL_IPYTHON="+python)
	}
	return vars
}

// newTag returns a tag unique to one test, for POLYREPL_TEST_TAG.
func newTag() string {
	var buf [8]byte
	rand.Read(buf[:])
	return hex.EncodeToString(buf[:])
}

// setenv replaces or adds one variable in the env's environment.
func (e *env) setenv(k, v string) {
	e.unsetenv(k)
	e.vars = append(e.vars, k+"="+v)
}

func (e *env) unsetenv(k string) {
	out := e.vars[:0]
	for _, kv := range e.vars {
		if !strings.HasPrefix(kv, k+"=") {
			out = append(out, kv)
		}
	}
	e.vars = out
}

func (e *env) teardown() {
	t := e.t
	if t.Failed() {
		t.Logf("daemon log (last lines):\n%s", tail(filepath.Join(e.socketDir(), "daemon.log"), 40))
	}
	if _, stderr, code := e.runWith(runOpts{bin: binary}, "stop"); code != 0 {
		t.Logf("teardown: polyrepl stop exited %d: %s", code, stderr)
	}
	if left := leftovers(e.tag); len(left) > 0 {
		t.Errorf("processes left behind after the test (now killed):%s", proctest.Describe(left))
	}
}

// runOpts says how to run one command.
type runOpts struct {
	stdin string
	dir   string   // working directory; default the env's home
	bin   string   // binary; default e.bin
	pre   []string // a command prefix, such as setpriv …
	extra []string // extra environment variables
}

// run runs polyrepl with args and returns what it printed and its exit
// status.
func (e *env) run(args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	return e.runWith(runOpts{}, args...)
}

// runIn runs polyrepl with stdin as its standard input.
func (e *env) runIn(stdin string, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	return e.runWith(runOpts{stdin: stdin}, args...)
}

// runAt runs polyrepl in the working directory dir.
func (e *env) runAt(dir string, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	return e.runWith(runOpts{dir: dir}, args...)
}

func (e *env) runWith(o runOpts, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	bin := o.bin
	if bin == "" {
		bin = e.bin
	}
	argv := append(append(append([]string{}, o.pre...), bin), args...)
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append([]string{}, e.vars...), o.extra...)
	cmd.Dir = e.home
	if o.dir != "" {
		cmd.Dir = o.dir
	}
	cmd.Stdin = strings.NewReader(o.stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if ctx.Err() != nil {
		e.t.Errorf("polyrepl %s: no answer within %s", strings.Join(args, " "), cmdTimeout)
		code = -1
	} else if err != nil && code < 0 {
		e.t.Errorf("polyrepl %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

// cut is what a reply says it cut.
type cut struct {
	Total int    `json:"total"`
	Head  int    `json:"head"`
	Tail  int    `json:"tail"`
	File  string `json:"file"`
	From  int64  `json:"from"`
	To    int64  `json:"to"`
}

type note struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// cellResult is the cell result object of DESIGN.md, as --json prints it.
type cellResult struct {
	Session    string  `json:"session"`
	Generation string  `json:"generation"`
	Cell       int     `json:"cell"`
	Status     string  `json:"status"`
	Output     string  `json:"output"`
	Value      string  `json:"value"`
	Elapsed    float64 `json:"elapsed"`
	Error      *struct {
		Type      string `json:"type"`
		Message   string `json:"message"`
		Traceback string `json:"traceback"`
	} `json:"error"`
	OutputCut *cut      `json:"output_cut"`
	ValueCut  *cut      `json:"value_cut"`
	Notes     []note    `json:"notes"`
	Activity  *activity `json:"activity"`

	raw    map[string]any
	stderr string
	code   int
}

// notes returns the texts of the notes of one kind.
func (r cellResult) notesOf(kind string) []string {
	var out []string
	for _, n := range r.Notes {
		if n.Kind == kind {
			out = append(out, n.Text)
		}
	}
	return out
}

func (r cellResult) String() string {
	b, _ := json.Marshal(r.raw)
	return fmt.Sprintf("exit %d, %s, stderr %q", r.code, b, r.stderr)
}

// runJSON runs a command with --json and decodes its cell result.
func (e *env) runJSON(args ...string) cellResult {
	e.t.Helper()
	return e.runJSONWith(runOpts{}, args...)
}

func (e *env) runJSONWith(o runOpts, args ...string) cellResult {
	e.t.Helper()
	stdout, stderr, code := e.runWith(o, append(args, "--json")...)
	var r cellResult
	r.stderr, r.code = stderr, code
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		e.t.Fatalf("polyrepl %s --json: exit %d, not one JSON object (%v): stdout %q stderr %q",
			strings.Join(args, " "), code, err, clip(stdout), stderr)
	}
	json.Unmarshal([]byte(stdout), &r.raw)
	return r
}

// sessionInfo is one entry of `sessions --json`.
type sessionInfo struct {
	Name       string    `json:"name"`
	Generation string    `json:"generation"`
	Runtime    string    `json:"runtime"`
	Version    string    `json:"version"`
	Exe        string    `json:"exe"`
	PID        int       `json:"pid"`
	State      string    `json:"state"`
	Created    time.Time `json:"created"`
	LastActive time.Time `json:"last_active"`
	Cells      int       `json:"cells"`
	Memory     uint64    `json:"memory"`
	Cwd        string    `json:"cwd"`
	Where      string    `json:"where"`
	Names      []string  `json:"names"`
	Running    *struct {
		Cell  int    `json:"cell"`
		Code  string `json:"code"` // its first line
		Input *struct {
			Text string `json:"text"`
		} `json:"input"`
	} `json:"running"`
	Unread bool `json:"unread"`
	Death  *struct {
		Cause  string `json:"cause"`
		Signal int    `json:"signal"`
		By     string `json:"by"`
	} `json:"death"`
	Transcript  string `json:"transcript"`
	MemoryLimit int64  `json:"memory_limit"`
	LimitBy     string `json:"limit_by"`
	Holder      int    `json:"holder"` // the pid of the process that keeps the runtime
}

// sessions lists the daemon's sessions.
func (e *env) sessions() []sessionInfo {
	e.t.Helper()
	stdout, stderr, code := e.run("sessions", "--json")
	if code != 0 {
		e.t.Fatalf("polyrepl sessions --json: exit %d: %s", code, stderr)
	}
	var r struct {
		Sessions []sessionInfo `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		e.t.Fatalf("polyrepl sessions --json: %v: %q", err, stdout)
	}
	return r.Sessions
}

// session returns the named session, failing the test if there is none.
func (e *env) session(name string) sessionInfo {
	e.t.Helper()
	for _, s := range e.sessions() {
		if s.Name == name {
			return s
		}
	}
	e.t.Fatalf("no session %q in `polyrepl sessions`", name)
	return sessionInfo{}
}

// statusReply is `status --json`.
type statusReply struct {
	PID        int    `json:"pid"`
	Version    string `json:"version"`
	Socket     string `json:"socket"`
	Log        string `json:"log"`
	StateDir   string `json:"state_dir"`
	Sessions   int    `json:"sessions"`
	Goroutines int    `json:"goroutines"`
	FDs        int    `json:"fds"`
	Memory     string `json:"memory"`
}

func (e *env) status() statusReply {
	e.t.Helper()
	stdout, stderr, code := e.run("status", "--json")
	if code != 0 {
		e.t.Fatalf("polyrepl status --json: exit %d: %s%s", code, stdout, stderr)
	}
	var st statusReply
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		e.t.Fatalf("polyrepl status --json: %v: %q", err, stdout)
	}
	return st
}

// stateDir is where the daemon keeps this host's state.
func (e *env) stateDir() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return filepath.Join(e.state, "polyrepl", host)
}

// socketDir is where the daemon's socket and log are.
func (e *env) socketDir() string { return filepath.Join(e.runtime, "polyrepl") }

// must runs a command that has to exit with want, failing the test otherwise.
func (e *env) must(want int, args ...string) (stdout, stderr string) {
	e.t.Helper()
	stdout, stderr, code := e.run(args...)
	if code != want {
		e.t.Fatalf("polyrepl %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, clip(stdout), clip(stderr))
	}
	return stdout, stderr
}

// leftovers lists, and then SIGKILLs, the processes carrying tag that are
// still alive after a grace of up to 3 s: a process in the middle of
// exiting is not left behind, so the stragglers get a moment before they
// are called leftovers.
func leftovers(tag string) []proctest.Process {
	var left []proctest.Process
	waitFor(3*time.Second, func() bool {
		left = proctest.WithVar("POLYREPL_TEST_TAG=" + tag)
		return len(left) == 0
	})
	for _, p := range left {
		syscall.Kill(p.PID, syscall.SIGKILL)
	}
	return left
}

// tagged lists the live processes this test caused.
func (e *env) tagged() []proctest.Process {
	return proctest.Find(func(vars []string) bool { return proctest.HasVar(vars, "POLYREPL_TEST_TAG="+e.tag) })
}

// working lists the processes the test caused but for a spare holder
// (one the daemon starts ahead for the next session: `polyrepl holder`
// with no session name), which keeps no session.
func (e *env) working() []proctest.Process {
	var out []proctest.Process
	for _, p := range e.tagged() {
		if !strings.HasSuffix(p.Cmdline, "polyrepl holder") {
			out = append(out, p)
		}
	}
	return out
}

// generation lists the live processes of one session generation.
func (e *env) generation(gen string) []proctest.Process {
	return proctest.Find(func(vars []string) bool {
		return proctest.HasVar(vars, "POLYREPL_TEST_TAG="+e.tag) && proctest.HasVar(vars, "POLYREPL_SESSION="+gen)
	})
}

// waitFor polls cond until it holds or the upper bound passes.
func waitFor(bound time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(bound); ; {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// clip shortens long text for failure messages.
func clip(s string) string {
	if len(s) > 2000 {
		return s[:1000] + fmt.Sprintf("\n…[%d bytes]…\n", len(s)-2000) + s[len(s)-1000:]
	}
	return s
}

// wantContains fails the test for each substring text lacks.
func wantContains(t *testing.T, what, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(text, s) {
			t.Errorf("%s lacks %q:\n%s", what, s, clip(text))
		}
	}
}

// wantLacks fails the test for each substring text has.
func wantLacks(t *testing.T, what, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(text, s) {
			t.Errorf("%s has %q, which it should not:\n%s", what, s, clip(text))
		}
	}
}

// tail returns the last n lines of a file, for failure messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// peakRSS samples the resident memory of process pid every 20 ms until
// the returned function is called, which returns the highest seen.
func peakRSS(pid int) (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			if n, ok := proctest.RSS(pid); ok && n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		if n, ok := proctest.RSS(pid); ok && n > peak.Load() {
			peak.Store(n)
		}
		return peak.Load()
	}
}

// wantNowhere checks that no file under e's state and socket directories
// holds secret.
func wantNowhere(t *testing.T, e *env, secret string) {
	t.Helper()
	for _, dir := range []string{e.state, e.runtime} {
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Type()&os.ModeSocket != 0 {
				return nil
			}
			if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), secret) {
				t.Errorf("the secret is in %s", path)
			}
			return nil
		})
	}
}
