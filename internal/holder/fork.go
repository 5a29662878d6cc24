package holder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// A fork of a session is a new session whose runtime is a copy of
// another's, taken between cells. Holders never talk to each other: the
// daemon starts the new session's holder with a ForkBrief; that holder
// makes the channels the copy will speak on (in the parent runtime's
// driver directory, Hello.ForkDir, which a sandboxed runtime may open)
// and tells the daemon where they are (frameForkReady); the daemon asks
// the parent's holder to Fork into them and passes its answer on
// (frameForkFrom); the new holder adopts the copy and says hello as any
// new session's holder does. The parent's holder leaves the copy out of
// its runtime's tree from then on (proc.Tree.Spare).

// ForkBrief is what a new holder is told of the session it is a fork of.
type ForkBrief struct {
	From string `json:"from"` // the parent session's name
	Dir  string `json:"dir"`  // the parent's Hello.ForkDir
	// Enforced is what the kernel enforces of the parent's sandbox,
	// which the copy inherits.
	Enforced *api.Enforced `json:"enforced,omitempty"`
}

// ForkArgs are a fork's: where the copy goes.
type ForkArgs struct {
	Into driver.ForkInto `json:"into"`
}

// ForkAnswer is a fork as the parent's holder took it: the copy and
// what it lacks or shares (driver.Forked), the cells the parent had run,
// and the parent's generation.
type ForkAnswer struct {
	driver.Forked
	From       string `json:"from,omitempty"` // the parent session, as the fork's holder says it
	Cell       int    `json:"cell"`
	Generation string `json:"generation"`
	Err        string `json:"err,omitempty"` // on frameForkFrom: why there is no copy
}

// Why a holder makes no fork.
const (
	// CodeNoFork: the runtime cannot fork, or not now; Msg says why.
	CodeNoFork Code = "no-fork"
)

// forkWait bounds a fork: copying the page tables of a runtime holding
// tens of gigabytes takes a fraction of a second.
const forkWait = 10 * time.Second

func (v service) Fork(a ForkArgs) (ForkAnswer, error) {
	s := v.s
	f, ok := s.runtime().(driver.Forker)
	if !ok {
		return ForkAnswer{}, &Error{Code: CodeNoFork, Msg: fmt.Sprintf("the %s runtime cannot fork", s.sp.Spawn.Runtime)}
	}
	s.mu.Lock()
	running, ended, cells := 0, s.exit != nil, s.cells
	if s.cur != nil && !s.cur.Done {
		running = s.cur.Cell
	}
	s.mu.Unlock()
	switch {
	case ended:
		return ForkAnswer{}, &Error{Code: CodeNoFork, Msg: "the runtime has ended"}
	case running > 0:
		return ForkAnswer{}, &Error{Code: CodeNoFork, Msg: fmt.Sprintf("cell %d runs: a fork is taken between cells", running)}
	}
	got, err := f.Fork(a.Into, forkWait)
	if errors.Is(err, driver.ErrCellRuns) {
		return ForkAnswer{}, &Error{Code: CodeNoFork, Msg: "a cell runs: a fork is taken between cells"}
	}
	if err != nil {
		return ForkAnswer{}, &Error{Code: CodeNoFork, Msg: err.Error()}
	}
	return ForkAnswer{Forked: got, Cell: cells, Generation: s.sp.Generation}, nil
}

func (r remote) Fork(a ForkArgs) (ForkAnswer, error) {
	var fa ForkAnswer
	b, err := r.p.callReply("fork", a)
	if err != nil {
		return fa, err
	}
	if err := json.Unmarshal(b, &fa); err != nil {
		return fa, &Error{Code: CodeFailed, Msg: fmt.Sprintf("the holder's fork cannot be read: %v", err)}
	}
	fa.Forked = fa.Forked.Bounded()
	return fa, nil
}

// Fork asks the session's holder for a copy of its runtime, into the
// channels another holder made.
// The copy is left out of the runtime's tree from then on, as the holder
// leaves it out of its own.
func (p *Process) Fork(into driver.ForkInto) (ForkAnswer, error) {
	fa, err := p.remote().Fork(ForkArgs{Into: into})
	if err != nil {
		return fa, err
	}
	if start, err := proc.StartTime(fa.PID); err == nil {
		p.mu.Lock()
		p.spare = append(slices.DeleteFunc(p.spare, func(c proc.Proc) bool { return !proc.Alive(c) }), proc.Proc{PID: fa.PID, Start: start})
		p.mu.Unlock()
	}
	return fa, nil
}

// adoptFork is start's way for a fork: the copy the daemon has the
// parent's holder make, on channels made here, instead of a runtime
// started here.
func (s *server) adoptFork(ctx context.Context, w *wire, drv driver.Driver, spec driver.Spec, h driver.Handler) (driver.Process, *ForkAnswer, error) {
	ad, ok := drv.(driver.Adopter)
	if !ok {
		return nil, nil, fmt.Errorf("the %s runtime cannot fork", s.sp.Spawn.Runtime)
	}
	ch, err := ad.ForkChannels(s.sp.Fork.Dir)
	if err != nil {
		return nil, nil, err
	}
	defer ch.Close()
	into := ch.Into()
	into.Cookie = s.sp.Cookie
	if err := w.sendJSON(frameForkReady, into); err != nil {
		return nil, nil, fmt.Errorf("cannot tell the daemon the fork's channels: %w", err)
	}
	typ, b, err := w.read()
	if err != nil {
		return nil, nil, fmt.Errorf("the daemon did not say which copy to adopt: %w", err)
	}
	var fa ForkAnswer
	if typ != frameForkFrom || json.Unmarshal(b, &fa) != nil {
		return nil, nil, fmt.Errorf("the daemon answered the fork's channels with a frame of type %q", typ)
	}
	if fa.Err != "" {
		return nil, nil, errors.New(api.Clip(fa.Err, failureLimit, "why"))
	}
	ctx, cancel := context.WithTimeout(ctx, driver.StartTimeout)
	defer cancel()
	p, err := ch.Adopt(ctx, spec, fa.PID, h)
	if err != nil {
		return nil, nil, err
	}
	fa.From = s.sp.Fork.From
	return p, &fa, nil
}

// forkThrough answers a fork holder's frameForkReady on w: the daemon's
// side of a fork's start, asking the parent's holder through fork.
func forkThrough(w *wire, b []byte, fork func(driver.ForkInto) (ForkAnswer, error)) error {
	var into driver.ForkInto
	var fa ForkAnswer
	var err error
	if err = json.Unmarshal(b, &into); err != nil {
		fa.Err = fmt.Sprintf("the holder's fork channels cannot be read: %v", err)
	} else if fork == nil {
		fa.Err = "the daemon asked for no fork"
	} else if fa, err = fork(into); err != nil {
		fa.Err = err.Error()
	}
	if err := w.sendJSON(frameForkFrom, fa); err != nil {
		return err
	}
	if fa.Err != "" {
		return errors.New(fa.Err)
	}
	return nil
}
