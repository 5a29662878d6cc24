package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/holder"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// A checkpoint is a frozen fork of a session's runtime that its own
// holder keeps (holder/checkpoint.go); a rollback resumes one in the
// runtime's place. The session goes on as the same life: the same
// generation and record, its cells numbered on from the checkpoint's,
// a note saying which cells were rolled back.

// Checkpoint keeps a frozen fork of the named session's runtime, taken
// between cells.
func (m *Manager) Checkpoint(ctx context.Context, name string, req api.CheckpointRequest) (api.CheckpointReply, error) {
	s, p, release, err := m.checkpointable(name, req, "checkpoint")
	if err != nil {
		return api.CheckpointReply{}, err
	}
	defer release()
	ans, err := p.Checkpoint(req.Label)
	if err != nil {
		return api.CheckpointReply{}, checkpointError(name, "checkpoint", err)
	}
	ck := checkpointOf(ans.Checkpoint)
	n := api.Note{Kind: api.NoteCheckpoint, Session: name, Checkpoint: &ck, Again: ans.Replaced != nil, Fork: apartOf(name, ans.Checkpoint)}
	if ans.Dropped != nil {
		d := checkpointOf(*ans.Dropped)
		n.Dropped = &d
	}
	m.note(s, req.Client, n)
	return api.CheckpointReply{Session: name, Checkpoint: ck, Notes: append([]api.Note{n}, m.othersNotes(name, req.Client)...)}, nil
}

// Rollback ends the named session's runtime and resumes a checkpoint
// (req.Label, or the latest) in its place; the checkpoint stays.
func (m *Manager) Rollback(ctx context.Context, name string, req api.CheckpointRequest) (api.RollbackReply, error) {
	s, p, release, err := m.checkpointable(name, req, "rollback")
	if err != nil {
		return api.RollbackReply{}, err
	}
	defer release()
	ans, err := p.Rollback(req.Label)
	if err != nil {
		return api.RollbackReply{}, checkpointError(name, "rollback", err)
	}
	// The holder told the new runtime before it answered: the session
	// took its cells and names then (RuntimeChanged).
	// The journal names the new runtime, for a daemon after this one
	// that finds the holder gone.
	m.noteNames(s)
	ck := checkpointOf(ans.Checkpoint)
	n := api.Note{Kind: api.NoteRolledBack, Session: name, Checkpoint: &ck, PID: ans.Leader.PID, Cells: ans.Before,
		Count: markRolledBack(s, ck), Fork: apartOf(name, ans.Checkpoint)}
	m.note(s, req.Client, n)
	return api.RollbackReply{Session: name, Checkpoint: ck, PID: ans.Leader.PID, Cells: ans.Before,
		Notes: append([]api.Note{n}, m.othersNotes(name, req.Client)...)}, nil
}

// checkpointable finds a live session that can fork, between cells,
// holding its life until release.
func (m *Manager) checkpointable(name string, req api.CheckpointRequest, what string) (*Session, *holder.Process, func(), error) {
	if err := ValidateName(name); err != nil {
		return nil, nil, nil, err
	}
	if len(req.Label) > holder.MaxLabel || (req.Label != "" && api.ValidateName(req.Label) != nil) {
		return nil, nil, nil, badInput(api.FieldLabel, "labels use "+api.NameChars, "a checkpoint's label uses %s, at most %d of them", api.NameChars, holder.MaxLabel)
	}
	if err := m.checkReach(name, req.Client); err != nil {
		return nil, nil, nil, err
	}
	if err := m.unreachableError(name); err != nil {
		return nil, nil, nil, err
	}
	e := m.slot(name)
	e.life.Lock()
	s, err := m.lookup(name, req.Generation, req.Client)
	if err == nil && s.isDead() {
		err = s.deadError(req.Client)
	}
	if err != nil {
		e.life.Unlock()
		return nil, nil, nil, err
	}
	s.mu.Lock()
	p, facts := s.p, s.facts()
	var busy error
	if c := s.cur; c != nil && !c.finished() {
		busy = s.busyErrorLocked(req.Client)
	}
	s.mu.Unlock()
	if err := forkable(name, s.Runtime, facts.Forks, facts.NoFork, p); err != nil {
		var ee *Error
		if errors.As(err, &ee) {
			ee.ErrorReply.Error = fmt.Sprintf("session %q cannot %s: %s", name, verb(what), ee.ErrorReply.Error)
		}
		e.life.Unlock()
		return nil, nil, nil, err
	}
	if busy != nil {
		var ee *Error
		if errors.As(busy, &ee) {
			ee.Code = api.CodeNoFork
			ee.ErrorReply.Error += fmt.Sprintf("; a %s is taken between cells", what)
			ee.Hint = fmt.Sprintf("wait for the cell, or interrupt it, then %s", verb(what))
		}
		e.life.Unlock()
		return nil, nil, nil, busy
	}
	return s, p, e.life.Unlock, nil
}

// checkpointError is a holder's refusal as the caller is told it.
func checkpointError(name, what string, err error) error {
	var he *holder.Error
	if errors.As(err, &he) {
		code := api.CodeNoFork
		switch he.Code {
		case holder.CodeNoCheckpoint:
			code = api.CodeBadRequest
		case holder.CodeBadArgs:
			code = api.CodeBadRequest
		}
		r := api.ErrorReply{Code: code, Field: fieldOf(he.Code), Error: fmt.Sprintf("session %q: cannot %s: %s", name, verb(what), api.Clip(he.Msg, api.RefusalLimit, "error"))}
		if he.Code == holder.CodeNoCheckpoint {
			r.Hint = "the session's listing names its checkpoints"
			r.Next = []api.Action{{Do: api.DoSessions, Session: name}}
		}
		return &Error{r}
	}
	return fmt.Errorf("session %q: cannot %s: %w", name, verb(what), err)
}

// verb is what, a call's name, as the verb a sentence needs.
func verb(what string) string {
	if what == api.DoRollback {
		return "roll back"
	}
	return what
}

// checkpointOf is a holder's checkpoint as the API says it.
// apartOf is what a checkpoint's copy did not get or shares with the
// runtime it was taken from, as its notes say it: nil when nothing (a
// rollback's runtime lacks those threads too).
func apartOf(name string, c holder.Checkpoint) *api.Fork {
	if c.Apart == nil {
		return nil
	}
	f := forkOf(&holder.ForkAnswer{Forked: *c.Apart, From: name, Cell: c.Cell}, true)
	if f.ThreadsTotal == 0 && f.SharedTotal == 0 && f.ChildrenTotal == 0 {
		return nil
	}
	return f
}

func checkpointOf(c holder.Checkpoint) api.Checkpoint {
	return api.Checkpoint{Label: c.Label, Cell: c.Cell, At: c.At, PID: c.Proc.PID}
}

// checkpointsOf lists p's checkpoints, with their memory (PSS) if asked.
func checkpointsOf(p *holder.Process, withMemory bool) []api.Checkpoint {
	var out []api.Checkpoint
	for _, c := range p.Checkpoints() {
		a := checkpointOf(c)
		if withMemory && proc.Alive(c.Proc) {
			a.Memory = proc.PSS([]proc.Proc{c.Proc})
		}
		out = append(out, a)
	}
	return out
}

// RuntimeChanged implements holder.RuntimeChanger: after a rollback,
// the session's cells and names are the checkpoint's from then on.
func (s *Session) RuntimeChanged(rt holder.Runtime) {
	if rt.Rollback == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cur; c == nil || c.finished() {
		s.cells = rt.Cells // a cell sent as the rollback began runs on after it, numbered on
	}
	s.names = boundNames(rt.Names)
	s.namesTotal = len(rt.Names)
	s.lastActive = time.Now()
	s.notifyLocked()
}

func fieldOf(c holder.Code) string {
	if c == holder.CodeNoCheckpoint || c == holder.CodeBadArgs {
		return api.FieldLabel
	}
	return ""
}

// markRolledBack marks the cell entries a rollback to ck undid: those of
// this life recorded after ck was taken (its note), not marked before.
// It answers how many it marked; none when the record no longer holds
// ck's note (the note's range says the cells then).
func markRolledBack(s *Session, ck api.Checkpoint) int {
	entries, _, _ := s.rec.Since(0)
	from := 0
	for _, e := range entries {
		if n := e.Note; e.Kind == api.EntryNote && e.Generation == s.Generation && n != nil && n.Kind == api.NoteCheckpoint &&
			n.Checkpoint != nil && n.Checkpoint.Label == ck.Label && n.Checkpoint.PID == ck.PID {
			from = e.Seq
		}
	}
	marked := 0
	for _, e := range entries {
		if from > 0 && e.Seq > from && e.Kind == api.EntryCell && e.Generation == s.Generation && !e.RolledBack {
			s.rec.Update(e.Seq, func(x *api.Entry) { x.RolledBack = true })
			marked++
		}
	}
	return marked
}
