package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// fakeRuntime is the runtime name the fake driver registers under: the
// tests' sessions run it, so the state machine is tested without any
// interpreter.
const fakeRuntime = "fake"

func init() { driver.Register(fakeDriver{}) }

// TestMain checks, after every test, that no fake runtime process is
// left: each test's cleanup ends its own, and this is the last net.
func TestMain(m *testing.M) {
	code := m.Run()
	if left := fakes.alive(); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "fake runtime processes left behind: %v\n", left)
		code = 1
	}
	os.Exit(code)
}

// fakeDriver starts a fake runtime: a real, harmless process (sleep) in
// its own process group with the session's cookie in its environment, so
// that proc.Tree finds and kills it as it would a runtime; its cells do
// what their code says (see fakeProc.Run) or what the test makes them do.
type fakeDriver struct{}

func (fakeDriver) Info() driver.Info {
	return driver.Info{Name: fakeRuntime, Family: "worker", Ext: ".fake", Exes: []string{"sleep"}}
}

func (fakeDriver) Start(ctx context.Context, spec driver.Spec, h driver.Handler) (driver.Process, error) {
	cmd := exec.Command("sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), spec.Cookie)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	start, err := proc.StartTime(cmd.Process.Pid)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	_, gen, _ := strings.Cut(spec.Cookie, "=")
	f := &fakeProc{
		h: h, cmd: cmd, gen: gen, runtimeDir: spec.RuntimeDir,
		tree: proc.Tree{Leader: proc.Proc{PID: cmd.Process.Pid, Start: start}, Cookie: spec.Cookie},
		runs: make(chan fakeRun, 256), exitDone: make(chan struct{}),
	}
	fakes.add(f)
	go f.reap()
	return f, nil
}

// fakeRun is one call of Run.
type fakeRun struct {
	Cell int
	Code string
}

// fakeProc is one fake runtime process. Handler calls are made under hmu,
// one at a time, and none after Exited, as driver.Handler requires.
type fakeProc struct {
	h          driver.Handler
	cmd        *exec.Cmd
	gen        string
	runtimeDir string
	tree       proc.Tree
	runs       chan fakeRun  // every Run, in order, once it ran or blocked
	exitDone   chan struct{} // closed once Exited has returned

	hmu     sync.Mutex
	cell    int  // the cell running, or 0
	exited  bool // Exited was called
	deaf    bool // Interrupt does not stop the cell
	attempt []int

	mu       sync.Mutex
	scripted *driver.Exit // how the test made it exit, if it did
}

func (f *fakeProc) PID() int        { return f.tree.Leader.PID }
func (f *fakeProc) Tree() proc.Tree { return f.tree }
func (f *fakeProc) Version() string { return "1.0" }
func (f *fakeProc) Exe() string     { return "sleep" }
func (f *fakeProc) Note() string    { return "" }

// Run does what the cell's code says, one command a line, then ends the
// cell (done, or error if it raised), unless it blocks:
//
//	print TEXT       prints TEXT and a newline
//	value TEXT       the cell's value is TEXT
//	raise TYPE MSG   the cell raises TYPE with message MSG
//	names A B …      the namespace holds A, B, … afterwards
//	block            the cell runs on until the test ends it
//	exit N           the runtime exits with status N during the cell
//	signal N         the runtime is killed by signal N during the cell
func (f *fakeProc) Run(cell int, code string) error {
	// Told once the code has done what it says up to a block, so a test
	// that then ends the runtime knows the cell printed first.
	defer func() { f.runs <- fakeRun{Cell: cell, Code: code} }()
	f.hmu.Lock()
	defer f.hmu.Unlock()
	if f.exited {
		return errors.New("the fake runtime has exited")
	}
	f.cell = cell
	r := driver.Result{Cell: cell, Status: api.StatusDone}
	for _, line := range strings.Split(code, "\n") {
		cmd, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch cmd {
		case "print":
			f.h.Output([]byte(arg + "\n"))
		case "value":
			r.Value = arg
		case "raise":
			typ, msg, _ := strings.Cut(arg, " ")
			r.Status, r.Error = api.StatusError, &api.CellError{Type: typ, Message: msg}
		case "names":
			r.Names = strings.Fields(arg)
		case "block":
			return nil
		case "exit", "signal":
			n, _ := strconv.Atoi(arg)
			e := driver.Exit{Code: n}
			if cmd == "signal" {
				e = driver.Exit{Code: -1, Signal: n}
			}
			go f.exit(e)
			return nil
		}
	}
	f.doneLocked(r)
	return nil
}

// Interrupt ends the running cell as interrupted, unless the fake was
// made deaf to it.
func (f *fakeProc) Interrupt(attempt int) error {
	f.hmu.Lock()
	defer f.hmu.Unlock()
	f.attempt = append(f.attempt, attempt)
	if !f.deaf && f.cell != 0 && !f.exited {
		f.doneLocked(driver.Result{Cell: f.cell, Status: api.StatusInterrupted})
	}
	return nil
}

// Print makes the running cell (or the idle runtime) print text.
func (f *fakeProc) Print(text string) {
	f.hmu.Lock()
	defer f.hmu.Unlock()
	if !f.exited {
		f.h.Output([]byte(text))
	}
	f.hmu.Unlock()
	f.settle()
	f.hmu.Lock()
}

// settle returns once the session has heard all the fake told its
// holder: a test then sees what the session made of it.
func (f *fakeProc) settle() {
	if s := f.session(); s != nil {
		s.mu.Lock()
		p := s.p
		s.mu.Unlock()
		if p != nil {
			p.Sync()
		}
	}
}

// Finish ends the running cell with r; r.Cell and r.Status default to
// the running cell and done.
func (f *fakeProc) Finish(r driver.Result) {
	f.hmu.Lock()
	defer f.hmu.Unlock()
	if r.Cell == 0 {
		r.Cell = f.cell
	}
	if r.Status == "" {
		r.Status = api.StatusDone
	}
	if !f.exited {
		f.doneLocked(r)
	}
	f.hmu.Unlock()
	f.settle()
	f.hmu.Lock()
}

func (f *fakeProc) doneLocked(r driver.Result) {
	f.cell = 0
	f.h.CellDone(r)
}

// Exit makes the runtime end as e says, and returns once the session has
// been told (Exited returned): the process is really gone by then.
func (f *fakeProc) Exit(t *testing.T, e driver.Exit) {
	t.Helper()
	f.exit(e)
	f.waitExited(t)
	// The session hears of it through the holder: once it has, it has
	// written the death down.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if s := f.session(); s == nil || s.exitedDone() {
			return
		}
	}
	t.Fatalf("the session of fake runtime %s did not hear of its end", f.gen)
}

// session is the session the fake runs, while one does.
func (f *fakeProc) session() *Session {
	var s *Session
	testDirs.Range(func(k, v any) bool {
		if v.(managerDirs).runtime == f.runtimeDir {
			m := k.(*Manager)
			m.mu.Lock()
			for _, e := range m.slots {
				if e.s != nil && e.s.Generation == f.gen {
					s = e.s
				}
			}
			m.mu.Unlock()
			return false
		}
		return true
	})
	return s
}

// exitedDone reports whether s's death has been written down.
func (s *Session) exitedDone() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

func (f *fakeProc) exit(e driver.Exit) {
	f.mu.Lock()
	if f.scripted == nil {
		f.scripted = &e
	}
	f.mu.Unlock()
	_ = f.cmd.Process.Kill() // harmless once reaped: os.Process knows
}

// reap waits for the process and tells the session how it ended: as the
// test scripted, or as it really did (killed by the session's Kill).
func (f *fakeProc) reap() {
	err := f.cmd.Wait()
	e := driver.Exit{Code: f.cmd.ProcessState.ExitCode()}
	if ws, ok := f.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e = driver.Exit{Code: -1, Signal: int(ws.Signal())}
	} else if err != nil && e.Code == 0 {
		e.Err = err
	}
	f.mu.Lock()
	if f.scripted != nil {
		e = *f.scripted
	}
	f.mu.Unlock()
	f.hmu.Lock()
	f.exited = true
	f.cell = 0
	f.h.Exited(e)
	f.hmu.Unlock()
	close(f.exitDone)
}

func (f *fakeProc) waitExited(t testing.TB) {
	t.Helper()
	select {
	case <-f.exitDone:
	case <-time.After(10 * time.Second):
		t.Fatalf("fake runtime %s did not end", f.gen)
	}
}

// WaitRun returns the next cell the session sent.
func (f *fakeProc) WaitRun(t *testing.T) fakeRun {
	t.Helper()
	select {
	case r := <-f.runs:
		return r
	case <-time.After(10 * time.Second):
		t.Fatalf("fake runtime %s was sent no cell", f.gen)
		return fakeRun{}
	}
}

// Deaf makes Interrupt leave the running cell running.
func (f *fakeProc) Deaf() {
	f.hmu.Lock()
	f.deaf = true
	f.hmu.Unlock()
}

// Attempts is the attempts of every Interrupt so far.
func (f *fakeProc) Attempts() []int {
	f.hmu.Lock()
	defer f.hmu.Unlock()
	return append([]int(nil), f.attempt...)
}

// alive reports whether any process of the fake's tree still runs.
func (f *fakeProc) alive() bool { return len(f.tree.Members(true)) > 0 }

// fakeSet holds every fake started, by generation.
type fakeSet struct {
	mu    sync.Mutex
	byGen map[string]*fakeProc
}

var fakes = &fakeSet{byGen: map[string]*fakeProc{}}

func (s *fakeSet) add(f *fakeProc) {
	s.mu.Lock()
	s.byGen[f.gen] = f
	s.mu.Unlock()
}

// in lists the fakes started with runtimeDir, one manager's.
func (s *fakeSet) in(runtimeDir string) []*fakeProc {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*fakeProc
	for _, f := range s.byGen {
		if f.runtimeDir == runtimeDir {
			out = append(out, f)
		}
	}
	return out
}

// alive names the fakes whose processes still run, ending them.
func (s *fakeSet) alive() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var left []string
	for gen, f := range s.byGen {
		if f.alive() {
			left = append(left, gen)
			_, _ = f.tree.Kill(0)
		}
	}
	return left
}

// fakeOf is the fake runtime of the session generation gen.
func fakeOf(t *testing.T, gen string) *fakeProc {
	t.Helper()
	fakes.mu.Lock()
	defer fakes.mu.Unlock()
	f := fakes.byGen[gen]
	if f == nil {
		t.Fatalf("no fake runtime for generation %q", gen)
	}
	return f
}
