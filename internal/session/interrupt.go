package session

import (
	"context"
	"fmt"
	"log"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Interrupting a cell: the escalation, and whose reply gets the result.

// holderError is the refusal of a call the session's holder did not take
// (what failed: err). Mostly the session was ending meanwhile — a kill,
// a restart, its runtime's exit — and the call is refused as dead, as it
// would have been a moment later; else the holder fails, which is said
// without the transport's own words ("writev: broken pipe"), which go to
// the daemon log.
func (s *Session) holderError(what string, err error, asker api.Client) error {
	log.Printf("session %s: %s: %v", s.Name, what, err)
	if s.waitExited(holderGrace) {
		return s.deadError(asker)
	}
	s.mu.Lock()
	dying := s.dying
	s.mu.Unlock()
	if dying != nil {
		return &Error{api.ErrorReply{Code: api.CodeDead, Error: fmt.Sprintf("session %q: %s: the session is being ended (%s)", s.Name, what, dying.Cause),
			Next: []api.Action{{Do: api.DoExec, Session: s.Name}}}}
	}
	return &Error{api.ErrorReply{Code: api.CodeInternal, Error: fmt.Sprintf("session %q: %s: its holder process did not take it (the daemon log says why)", s.Name, what),
		Next: []api.Action{{Do: api.DoKill, Session: s.Name}}}}
}

// holderGrace is how long a call its holder did not take waits for the
// session's end to be written down, when that end is what it met.
const holderGrace = 2 * time.Second

// Interrupt stops the running cell, letting the driver escalate while
// the cell runs on, and returns the cell's result.
func (s *Session) Interrupt(ctx context.Context, asker api.Client) (api.CellResult, error) {
	s.mu.Lock()
	if s.state == Dead {
		s.mu.Unlock()
		return api.CellResult{}, s.deadError(asker)
	}
	c := s.cur
	if c != nil {
		c.prompt = nil // an interrupt ends a wait for input as Ctrl-C would
	}
	if c == nil || c.finished() {
		// Nothing happened now: the status is of this call, done, and the
		// note says how the last cell ended (it was told when it did).
		r := s.baseResultLocked(c)
		r.Status = api.StatusDone
		n := api.Note{Kind: api.NoteNotRunning, Session: s.Name}
		if c != nil {
			n.Cell, n.Status = c.n, c.status
		}
		r.Notes = append(r.Notes, n)
		s.mu.Unlock()
		return r, nil
	}
	p := s.p
	s.mu.Unlock()

	for attempt := 0; attempt < 3; attempt++ {
		// A stopped runtime runs no handler: SIGINT would only wait.
		// SIGCONT first, to the whole group (a stopped child holds the
		// cell as well).
		if stoppedTree(p.Tree()) {
			p.Tree().SignalGroup(syscall.SIGCONT)
		}
		if err := p.Interrupt(attempt); err != nil {
			return api.CellResult{}, s.holderError("the interrupt could not be given to the cell", err, asker)
		}
		if s.waitFinished(c, 250*time.Millisecond) {
			break
		}
	}
	// The interrupt's reply reads the cell from its asker's own position,
	// as any reader does: the exec that sent it still gets all of it.
	s.waitSettled(c, api.InterruptTimeout)
	r, err := s.collect(ctx, c, 0, asker, nil, 0)
	if err == nil && r.Status == api.StatusRunning {
		r.Notes = append(r.Notes, api.Note{Kind: api.NoteStuck, Session: s.Name, Cell: r.Cell, Elapsed: api.InterruptTimeout.Seconds(),
			Why: stuckWhy(p.Tree().Leader), Next: []api.Action{{Do: api.DoKill, Session: s.Name}}})
	}
	return r, err
}

// waitFinished waits up to d for cell c to finish.
func (s *Session) waitFinished(c *cell, d time.Duration) bool {
	return s.waitUntil(d, c.finished)
}

// waitSettled waits up to d for cell c to finish or ask for input.
func (s *Session) waitSettled(c *cell, d time.Duration) bool {
	return s.waitUntil(d, func() bool { return c.finished() || c.prompt != nil })
}

// waitUntil waits up to d for settled, checked under the session's lock
// at every change.
func (s *Session) waitUntil(d time.Duration, settled func() bool) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		done := settled()
		ch := s.changed
		s.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}
