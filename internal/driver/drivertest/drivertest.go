// Package drivertest holds what every runtime's driver tests share: a
// handler that records a process's events in order. It is imported only by
// tests.
package drivertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

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
