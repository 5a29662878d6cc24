// Package drivertest holds what every runtime's driver tests share: a
// handler that records a process's events in order. It is imported only by
// tests.
package drivertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// Recorder is a driver.Handler that keeps every event in order: the
// output, and "output"/"done" marks to check that a cell's output came
// before its result.
type Recorder struct {
	mu     sync.Mutex
	events []string
	out    bytes.Buffer
	// Done receives each cell's result; Exit the process's end.
	Done chan driver.Result
	Exit chan driver.Exit
}

// NewRecorder makes a recorder.
func NewRecorder() *Recorder {
	return &Recorder{Done: make(chan driver.Result, 8), Exit: make(chan driver.Exit, 1)}
}

// Output implements driver.Handler.
func (r *Recorder) Output(p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out.Write(p)
	r.events = append(r.events, "output")
}

// CellDone implements driver.Handler.
func (r *Recorder) CellDone(res driver.Result) {
	r.mu.Lock()
	r.events = append(r.events, "done")
	r.mu.Unlock()
	r.Done <- res
}

// Exited implements driver.Handler.
func (r *Recorder) Exited(e driver.Exit) { r.Exit <- e }

// TakeOutput returns the output since the last call.
func (r *Recorder) TakeOutput() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.out.String()
	r.out.Reset()
	return s
}

// WaitOutput takes output until it contains want, failing after 10 s, or
// if a cell ends or the process exits first, with what never happened;
// it returns the output it took.
func WaitOutput(t testing.TB, rec *Recorder, want, what string) string {
	t.Helper()
	var got string
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(got, want); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q never appeared in the output within 10 s; output %q", what, want, got)
		}
		select {
		case r := <-rec.Done:
			t.Fatalf("%s: a cell ended (%+v) before %q appeared; output %q", what, r, want, got+rec.TakeOutput())
		case e := <-rec.Exit:
			rec.Exit <- e // for the cleanup, which waits for it
			t.Fatalf("%s: the process exited (%+v) before %q appeared; output %q", what, e, want, got+rec.TakeOutput())
		case <-time.After(10 * time.Millisecond):
		}
		got += rec.TakeOutput()
	}
	return got
}

// Has reports whether the output since the last TakeOutput contains s,
// leaving it there.
func (r *Recorder) Has(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Contains(r.out.String(), s)
}

// LastEvent is "output" or "done", whichever came last, or "".
func (r *Recorder) LastEvent() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) == 0 {
		return ""
	}
	return r.events[len(r.events)-1]
}

// Cookie is a session cookie unique to this test process and moment, so
// that tests of different runtimes running at once never kill each other's
// workers.
func Cookie(runtime string) string {
	return fmt.Sprintf("POLYREPL_TEST_COOKIE=%s-%d-%d", runtime, os.Getpid(), time.Now().UnixNano())
}

// Start starts a runtime's process with spec and a new Recorder, and ends
// its whole tree when the test ends, checking that it was reported exited
// and is gone.
func Start(t testing.TB, d driver.Driver, spec driver.Spec) (driver.Process, *Recorder) {
	t.Helper()
	rec := NewRecorder()
	p, err := d.Start(context.Background(), spec, rec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := p.Tree().Kill(time.Second); err != nil {
			t.Errorf("killing the worker: %v", err)
		}
		select {
		case <-rec.Exit:
		case <-time.After(5 * time.Second):
			t.Error("the worker was not reported as exited")
		}
		if proc.Alive(p.Tree().Leader) {
			t.Errorf("the worker %d is still alive", p.PID())
		}
	})
	return p, rec
}

// Run runs cell n and waits for its result.
func Run(t testing.TB, p driver.Process, rec *Recorder, n int, code string) driver.Result {
	t.Helper()
	if err := p.Run(n, code); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-rec.Done:
		return r
	case <-time.After(20 * time.Second):
		t.Fatalf("cell %d did not finish", n)
	}
	return driver.Result{}
}

// Exe finds a runtime's executable for a test: $envVar if set, else name
// on PATH; without one the test is skipped, saying what to install.
func Exe(t testing.TB, envVar, name, install string) string {
	t.Helper()
	if p := os.Getenv(envVar); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	t.Skipf("no %s: install %s or set $%s", name, install, envVar)
	return ""
}

// Options are what a runtime's tests vary when they start it. The zero
// value of each field takes the default: this process's environment
// without Drop's variables, a fresh directory, a 10,000-character value
// limit.
type Options struct {
	Env []string // the whole environment
	// Drop names variables of this process's environment to leave out
	// when Env is nil: ones that would add warnings or debuggers to the
	// tests' cells (NODE_OPTIONS, RUBYOPT).
	Drop       []string
	Cwd        string
	ValueLimit int
	Project    string
}

// StartExe starts d's runtime from exe with the default Options.
func StartExe(t testing.TB, d driver.Driver, exe string) (driver.Process, *Recorder) {
	t.Helper()
	return StartWith(t, d, exe, Options{})
}

// StartWith starts d's runtime from exe with o, as Start does.
func StartWith(t testing.TB, d driver.Driver, exe string, o Options) (driver.Process, *Recorder) {
	t.Helper()
	dir := t.TempDir()
	if o.Env == nil {
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			if !slices.Contains(o.Drop, k) {
				o.Env = append(o.Env, kv)
			}
		}
	}
	if o.Cwd == "" {
		o.Cwd = dir
	}
	if o.ValueLimit == 0 {
		o.ValueLimit = 10000
	}
	return Start(t, d, driver.Spec{
		Exe: exe, Cwd: o.Cwd, Env: o.Env, Cookie: Cookie(d.Info().Name),
		RuntimeDir: dir, ValueLimit: o.ValueLimit, Project: o.Project,
	})
}

// Interrupt runs code that never ends, interrupts it as a session does,
// with attempts every apart, and returns its result. A runtime that may
// print something of its own when a second attempt lands while it handles
// the first wants them further apart than the session's 250 ms.
func Interrupt(t testing.TB, p driver.Process, rec *Recorder, n int, code string, every time.Duration) driver.Result {
	t.Helper()
	return InterruptAt(t, p, rec, n, code, "", every)
}

// InterruptAt is Interrupt for code that prints mark when it is under
// way: the first attempt waits for mark, so that it lands in the loop and
// not while the runtime is still reading the cell (gnuplot can crash on a
// SIGINT there). With mark "" it waits 300 ms.
func InterruptAt(t testing.TB, p driver.Process, rec *Recorder, n int, code, mark string, every time.Duration) driver.Result {
	t.Helper()
	if err := p.Run(n, code); err != nil {
		t.Fatal(err)
	}
	if mark == "" {
		time.Sleep(300 * time.Millisecond)
	}
	for deadline := time.Now().Add(10 * time.Second); mark != "" && !rec.Has(mark); {
		select {
		case e := <-rec.Exit:
			rec.Exit <- e // for the cleanup, which waits for it
			t.Fatalf("cell %d: the process exited (%+v) before it printed %q; output %q", n, e, mark, rec.TakeOutput())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("cell %d never printed %q; output %q", n, mark, rec.TakeOutput())
		}
	}
	for attempt := 0; attempt < 20; attempt++ {
		if err := p.Interrupt(attempt); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-rec.Done:
			return r
		case <-time.After(every):
		}
	}
	select {
	case e := <-rec.Exit:
		rec.Exit <- e // for the cleanup, which waits for it
		t.Fatalf("cell %d: the process exited (%+v) instead, output %q", n, e, rec.TakeOutput())
	default:
	}
	t.Fatalf("cell %d was not stopped by 20 interrupts; output %q", n, rec.TakeOutput())
	return driver.Result{}
}

// Cell is a cell to run and what must come back: its status, value and
// output exactly (or, if OutputHas is set, output containing it), and a
// part of its error message.
type Cell struct {
	Code, Status, Value, Output, OutputHas, ErrorHas string
}

// Cells runs cells in order as cells 1, 2, … of p and checks each.
func Cells(t *testing.T, p driver.Process, rec *Recorder, cells []Cell) {
	t.Helper()
	for i, c := range cells {
		r := Run(t, p, rec, i+1, c.Code)
		out := rec.TakeOutput()
		msg := ""
		if r.Error != nil {
			msg = r.Error.Message
		}
		if c.Status == "" {
			c.Status = "done"
		}
		outOK := out == c.Output
		if c.OutputHas != "" {
			outOK = strings.Contains(out, c.OutputHas)
		}
		if r.Status != c.Status || r.Value != c.Value || !outOK || !strings.Contains(msg, c.ErrorHas) {
			t.Errorf("cell %q: %s, value %q, output %q, error %q;\nwant %s, value %q, output %q, error with %q",
				c.Code, r.Status, r.Value, out, msg, c.Status, c.Value, c.Output, c.ErrorHas)
		}
	}
}

// MustValue runs cell n, which must succeed, and returns its value.
func MustValue(t testing.TB, p driver.Process, rec *Recorder, n int, code string) string {
	t.Helper()
	r := Run(t, p, rec, n, code)
	if r.Status != "done" {
		t.Fatalf("cell %d %q: status %s, error %+v", n, code, r.Status, r.Error)
	}
	return r.Value
}

// IdleSignals sends the idle process SIGINT three times, as a person's
// stray Ctrl-C would: the session must live on (the caller's next cell
// checks its names).
func IdleSignals(t testing.TB, p driver.Process) {
	t.Helper()
	for i := 0; i < 3; i++ {
		if err := proc.Signal(p.Tree().Leader, syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// BenchCell measures one cell, code, run over and over in p: the pipe
// round trip, framing and marker scan, without the daemon.
func BenchCell(b *testing.B, p driver.Process, rec *Recorder, code string) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Run(b, p, rec, i+1, code)
	}
}

// BenchStart measures a session's start with spec: the runtime's boot and
// its greeting.
func BenchStart(b *testing.B, d driver.Driver, spec driver.Spec) {
	for i := 0; i < b.N; i++ {
		rec := NewRecorder()
		p, err := d.Start(context.Background(), spec, rec)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if _, err := p.Tree().Kill(time.Second); err != nil {
			b.Fatal(err)
		}
		<-rec.Exit
		b.StartTimer()
	}
}

// VarLines is a look's lines as "name:type:size", joined by spaces: what
// the runtimes' vars tests compare.
func VarLines(vars []api.Var) string {
	out := make([]string, 0, len(vars))
	for _, v := range vars {
		out = append(out, v.Name+":"+v.Type+":"+v.Size)
	}
	return strings.Join(out, " ")
}
