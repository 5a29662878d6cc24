package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/holder"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// forkStart is how a session's life starts when it is a fork: its holder
// adopts a copy of another session's runtime instead of starting one.
type forkStart struct {
	brief holder.ForkBrief
	from  *holder.Process // the parent's holder, asked for the copy
}

// Fork makes a new session, req.New, whose runtime is a fork of name's,
// taken between cells: the same names, cwd, environment, memory limit
// and sandbox; its own holder, process, generation and record, whose
// first entry says what it was forked from. name goes on unchanged.
func (m *Manager) Fork(ctx context.Context, name string, req api.ForkRequest) (api.ForkReply, error) {
	if err := ValidateName(name); err != nil {
		return api.ForkReply{}, err
	}
	if err := api.ValidateName(req.New); err != nil {
		return api.ForkReply{}, badInput(api.FieldNew, "session names use "+api.NameChars+", at most 64 of them", "the fork's name: %v", err)
	}
	if req.New == name {
		return api.ForkReply{}, badInput(api.FieldNew, "name the fork anew", "a fork needs a name of its own, and %q is the session forked", name)
	}
	for _, n := range []string{name, req.New} {
		if err := m.checkReach(n, req.Client); err != nil {
			return api.ForkReply{}, err
		}
		if err := m.unreachableError(n); err != nil {
			return api.ForkReply{}, err
		}
	}
	// Both names' lives are held, in the order of their names, so that
	// two forks crossing each other cannot wait on each other.
	own := m.slot(req.New)
	first, second := m.slot(name), own
	if req.New < name {
		first, second = second, first
	}
	first.life.Lock()
	defer first.life.Unlock()
	second.life.Lock()
	defer second.life.Unlock()

	src, err := m.lookup(name, req.Generation, req.Client)
	if err != nil {
		return api.ForkReply{}, err
	}
	if src.isDead() {
		return api.ForkReply{}, src.deadError(req.Client)
	}
	src.mu.Lock()
	p, facts, spawn := src.p, src.facts(), src.Spawn
	names, namesTotal := slices.Clone(src.names), src.namesTotal
	spawn.Runtime = src.Runtime
	var busy error
	if c := src.cur; c != nil && !c.finished() {
		busy = src.busyErrorLocked(req.Client)
	}
	src.mu.Unlock()
	if err := forkable(name, src.Runtime, facts.Forks, facts.NoFork, p); err != nil {
		return api.ForkReply{}, err
	}
	if busy != nil {
		var e *Error
		if errors.As(busy, &e) {
			e.Code = api.CodeNoFork
			e.ErrorReply.Error += "; a fork is taken between cells"
			e.Hint = "wait for the cell, or interrupt it, then fork"
		}
		return api.ForkReply{}, busy
	}
	if old := m.get(req.New); old != nil {
		if !old.isDead() {
			return api.ForkReply{}, &Error{api.ErrorReply{Code: api.CodeBadRequest, Field: api.FieldNew,
				Error: fmt.Sprintf("session %q exists: a fork needs a name no live session has", req.New),
				Hint:  "choose another name, or kill that session first", Next: []api.Action{{Do: api.DoKill, Session: req.New}}}}
		}
		if !old.waitExited(5 * time.Second) {
			return api.ForkReply{}, fmt.Errorf("session %q: its death was not written down within 5s (see the daemon log)", req.New)
		}
		m.forgetDead(old)
	}

	hi := p.Hello()
	s := m.newSession(req.New, spawn)
	s.forking = &forkStart{brief: holder.ForkBrief{From: name, Dir: hi.ForkDir, Enforced: hi.Enforced}, from: p}
	if err := m.start(ctx, s); err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Code, e.Field, e.Hint, e.Next = api.CodeNoFork, "", "", nil
			e.ErrorReply.Error = fmt.Sprintf("cannot fork session %q: %s", name, e.ErrorReply.Error)
			return api.ForkReply{}, e
		}
		return api.ForkReply{}, fmt.Errorf("cannot fork session %q: %w", name, err)
	}
	s.mu.Lock()
	s.names, s.namesTotal = names, namesTotal // the copy's, until its first cell says
	s.mu.Unlock()
	m.set(own, s)
	fork := forkOf(s.p.Hello().Forked, true)
	created := api.Note{Kind: api.NoteCreated, Session: req.New, Runtime: s.Runtime, Version: s.p.Version(),
		Cwd: s.Spawn.Cwd, PID: s.p.PID(), Sandbox: s.Spawn.Sandbox, Enforced: s.p.Hello().Enforced, Fork: fork}
	m.note(s, req.Client, created)
	m.note(src, req.Client, api.Note{Kind: api.NoteForked, Session: name, Fork: &api.Fork{From: name, Into: req.New, Cell: fork.Cell}})
	return api.ForkReply{Session: req.New, Info: s.Info(true), Notes: append([]api.Note{created}, m.othersNotes(req.New, req.Client)...)}, nil
}

// forkable refuses a fork of a runtime that cannot be forked, or whose
// holder cannot (one of an older polyrepl), saying why.
func forkable(name, runtime string, forks bool, why string, p *holder.Process) error {
	switch {
	case !forks:
		if why == "" {
			why = "polyrepl forks the python, ipython, r and ruby runtimes"
		}
		return &Error{api.ErrorReply{Code: api.CodeNoFork, Field: api.FieldRuntime,
			Error: fmt.Sprintf("session %q cannot be forked: the %s runtime cannot fork: %s", name, runtime, why),
			Hint:  "start another session and rebuild the state there"}}
	case p == nil:
		return &Error{api.ErrorReply{Code: api.CodeNoFork, Error: fmt.Sprintf("session %q has no runtime to fork", name)}}
	case p.Hello().ForkDir == "":
		return &Error{api.ErrorReply{Code: api.CodeNoFork,
			Error: fmt.Sprintf("session %q is kept by a holder of polyrepl %s, which cannot fork", name, p.Hello().Polyrepl),
			Hint:  "restart the session (its names are lost) to fork it", Next: []api.Action{{Do: api.DoRestart, Session: name}}}}
	}
	return nil
}

// forkOf is how a session was forked, as its holder said it: with what
// its copy lacks or shares when full, else only whence (for listings).
func forkOf(fa *holder.ForkAnswer, full bool) *api.Fork {
	if fa == nil {
		return nil
	}
	f := &api.Fork{From: api.Clip(fa.From, 64, "name"), Cell: fa.Cell}
	if full {
		b := fa.Forked.Bounded()
		f.Threads, f.ThreadsTotal = b.Threads, b.ThreadsTotal
		f.Shared, f.SharedTotal = b.Shared, b.SharedTotal
		f.Children, f.ChildrenTotal = b.Children, b.ChildrenTotal
	}
	return f
}

// memoryOf is the memory of p's tree as tb saw it: its proportional set
// size when it shares pages with a fork (it is one, or gave one away), so
// the two do not each count the pages they share, else its RSS.
func memoryOf(p *holder.Process, tb *proc.Table) (bytes uint64, shared bool) {
	t := p.Tree()
	if p.Hello().Forked != nil || len(t.Spare) > 0 {
		return proc.PSS(t.MembersIn(tb)), true
	}
	return tb.RSS(t.MembersIn(tb)), false
}
