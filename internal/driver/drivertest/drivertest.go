// Package drivertest holds what every runtime's driver tests share: a
// handler that records a process's events in order. It is imported only by
// tests.
package drivertest

import (
	"bytes"
	"sync"

	"github.com/polyrepl/polyrepl/internal/driver"
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
