package driver

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/plain"
)

// ExitOf turns what exec.Cmd.Wait returned into an Exit.
func ExitOf(err error) Exit {
	ex := Exit{Code: -1, At: time.Now()}
	var ee *exec.ExitError
	switch {
	case err == nil:
		ex.Code = 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			ex.Signal = int(ws.Signal())
		} else {
			ex.Code = ee.ExitCode()
		}
	default:
		ex.Err = err
	}
	return ex
}

// Describe says how the process ended, to follow "it": "exited with
// status 1", "was killed by signal 9 (killed)".
func (e Exit) Describe() string {
	switch {
	case e.Signal != 0:
		return fmt.Sprintf("was killed by signal %d (%s)", e.Signal, syscall.Signal(e.Signal))
	case e.Err != nil:
		return fmt.Sprintf("failed (%v)", e.Err)
	default:
		return fmt.Sprintf("exited with status %d", e.Code)
	}
}

// HeldBack is the length of the longest suffix of data that is a proper
// prefix of marker: bytes a reader splitting a stream at markers must hold
// back until its next read, as they may be the start of one.
func HeldBack(data, marker []byte) int {
	k := min(len(marker)-1, len(data))
	for ; k > 0; k-- {
		if bytes.Equal(data[len(data)-k:], marker[:k]) {
			return k
		}
	}
	return 0
}

// Splitter splits a stream at a marker across reads: the bytes between
// markers go to out and each marker calls mark, in order, whatever the
// reads' boundaries. The worker family splits cell output at its end
// marker with one.
type Splitter struct {
	Marker      []byte
	carry, work []byte
}

// Feed passes one read's data on.
func (s *Splitter) Feed(data []byte, out func([]byte), mark func()) {
	if len(s.carry) > 0 {
		s.work = append(append(s.work[:0], s.carry...), data...)
		data, s.carry = s.work, s.carry[:0]
	}
	for len(data) > 0 {
		i := bytes.Index(data, s.Marker)
		if i < 0 {
			k := HeldBack(data, s.Marker)
			if len(data) > k {
				out(data[:len(data)-k])
			}
			s.carry = append(s.carry[:0], data[len(data)-k:]...)
			return
		}
		if i > 0 {
			out(data[:i])
		}
		data = data[i+len(s.Marker):]
		mark()
	}
}

// Flush passes on what was held back, at the end of the stream.
func (s *Splitter) Flush(out func([]byte)) {
	if len(s.carry) > 0 {
		out(s.carry)
		s.carry = s.carry[:0]
	}
}

// outputGrace is how long a process's exit waits for the end of its
// output, which a child that outlives it may hold open.
const outputGrace = 300 * time.Millisecond

// OrSoon closes when done closes or a short grace after, whichever is
// first.
func OrSoon(done <-chan struct{}) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		defer close(c)
		select {
		case <-done:
		case <-time.After(outputGrace):
		}
	}()
	return c
}

// printedLimit bounds, in characters, what an error quotes of a
// runtime's output before it was ready.
const printedLimit = 2000

// Printed says what a runtime printed before it failed to start, to end
// an error message: "; it printed:\n…", or "" if nothing. The text is
// made plain (a terminal program's escape sequences — IPython sets the
// window title even on a pipe — would otherwise reach the terminal that
// shows the error) and bounded, the cut said.
func Printed(early []byte) string {
	t := strings.TrimSpace(plain.Text(strings.ToValidUTF8(string(early), "\uFFFD")))
	if t == "" {
		return ""
	}
	t, _ = bound.HeadTailLines(t, printedLimit)
	return "; it printed:\n" + t
}
