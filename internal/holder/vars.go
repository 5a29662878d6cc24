package holder

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// A look at what the session holds, without a cell (driver.Inspector).
// The holder owns the last look at the session's own names — the one a
// cell's result carried, or a live one taken after it — and answers from
// it while a cell runs, saying which cell it was taken after: a look
// never waits behind a cell.

// VarsArgs are a look's: a path in the runtime's syntax ("" for the
// session's names) and whether to include imports and built-ins.
type VarsArgs struct {
	Path string `json:"path,omitempty"`
	All  bool   `json:"all,omitempty"`
}

// VarsAnswer is a look as the holder answers it.
type VarsAnswer struct {
	driver.Look
	How  string    `json:"look"` // api.LookLive, LookLast, LookDuring
	Cell int       `json:"cell,omitempty"`
	At   time.Time `json:"at"`
}

// Why a holder gives no look.
const (
	// CodeNoLook: the runtime cannot look without a cell, or not now.
	CodeNoLook Code = "no-look"
	// CodeNoPath: the path names nothing; Msg is the runtime's words.
	CodeNoPath Code = "no-path"
)

// varsWait bounds a look: the runtime lets each object of unknown type
// 0.2 s for its preview, and the look as a whole a little more than a
// second.
const varsWait = 10 * time.Second

// lastLook is the last look at the session's own names, and after which
// cell and when it was taken.
type lastLook struct {
	look driver.Look
	cell int
	at   time.Time
}

func (v service) Vars(a VarsArgs) (VarsAnswer, error) {
	s := v.s
	in, ok := s.runtime().(driver.Inspector)
	if !ok {
		return VarsAnswer{}, &Error{Code: CodeNoLook, Msg: fmt.Sprintf("the %s runtime cannot look at its names without a cell", s.sp.Spawn.Runtime)}
	}
	if len(a.Path) > api.VarPathLimit {
		return VarsAnswer{}, &Error{Code: CodeBadArgs, Msg: fmt.Sprintf("a path of %d bytes is over the %d a look takes", len(a.Path), api.VarPathLimit)}
	}
	s.mu.Lock()
	running := 0
	if s.cur != nil && !s.cur.Done {
		running = s.cur.Cell
	}
	ended := s.exit != nil
	last := s.look
	s.mu.Unlock()
	if ended {
		return VarsAnswer{}, &Error{Code: CodeNoLook, Msg: "the runtime has ended"}
	}
	q := driver.VarsQuery{Path: a.Path, All: a.All}
	l, err := in.Vars(q, varsWait)
	switch {
	case err == nil && running > 0:
		return VarsAnswer{Look: l, Cell: running, At: time.Now()}.as(api.LookDuring), nil
	case err == nil:
		now := time.Now()
		if a.Path == "" && !a.All {
			s.mu.Lock()
			s.look = &lastLook{look: l, cell: s.cells, at: now}
			s.mu.Unlock()
		}
		return VarsAnswer{Look: l, At: now}.as(api.LookLive), nil
	case errors.Is(err, driver.ErrCellRuns) && a.Path == "" && !a.All && last != nil:
		return VarsAnswer{Look: last.look, Cell: last.cell, At: last.at}.as(api.LookLast), nil
	case errors.Is(err, driver.ErrCellRuns):
		why := fmt.Sprintf("cell %d runs, and the %s runtime looks between cells", running, s.sp.Spawn.Runtime)
		switch {
		case a.Path != "":
			why += ": a look at a path waits for the cell to end (the names alone are answered from the last look)"
		case a.All:
			why += ": a look with all names waits for the cell to end (the session's own names are answered from the last look)"
		default:
			why += ", and no look was taken before it"
		}
		return VarsAnswer{}, &Error{Code: CodeNoLook, Msg: why}
	}
	var pe *driver.PathError
	if errors.As(err, &pe) {
		return VarsAnswer{}, &Error{Code: CodeNoPath, Msg: pe.Msg}
	}
	return VarsAnswer{}, &Error{Code: CodeNoLook, Msg: err.Error()}
}

func (a VarsAnswer) as(how string) VarsAnswer { a.How = how; return a }

// keepLook keeps the look a cell's result carried as the last look, and
// takes it out of the result: the daemon gets the names, and asks the
// holder for a look when it needs one. s.mu is held.
func (s *server) keepLook(r *driver.Result) {
	if r.Vars != nil {
		s.look = &lastLook{look: r.Vars.Bounded(), cell: r.Cell, at: r.At}
		r.Vars = nil
	}
}

func (r remote) Vars(a VarsArgs) (VarsAnswer, error) {
	var va VarsAnswer
	b, err := r.p.callReply("vars", a)
	if err != nil {
		return va, err
	}
	if err := json.Unmarshal(b, &va); err != nil {
		return va, &Error{Code: CodeFailed, Msg: fmt.Sprintf("the holder's look cannot be read: %v", err)}
	}
	va.Look = va.Look.Bounded()
	return va, nil
}

// Vars asks the holder for a look at the session (see Service.Vars): an
// *Error of CodeNoLook or CodeNoPath says why there is none, and
// CodeUnknown comes from a holder of a version that cannot look.
func (p *Process) Vars(a VarsArgs) (VarsAnswer, error) {
	return p.remote().Vars(a)
}
