package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// A worker of a runtime with Inspects looks at its live state between
// cells, as it completes: the driver writes "vars NBYTES NONCE\n" and
// NBYTES of JSON on the command channel —
//
//	{"path": "df.columns", "all": false, "limit": 100, "preview": 80, "timeout": 0.2}
//
// (path "" for the session's own names; all: with imports and built-ins;
// limit: the lines to send; preview: a preview's characters; timeout:
// seconds a call on an object of unknown type may take to make its
// preview) — and the worker answers on the event channel, printing
// nothing, with
//
//	{"op": "vars", "nonce": NONCE, "vars": [{"name", "type", "size",
//	 "memory", "preview", "note", "members"}…], "total": N}
//
// or {"op": "vars", "nonce": NONCE, "error": "name 'df' is not defined"}
// for a path that names nothing. A cell's "done" event may carry "vars"
// too: the look at the session's own names as the cell ended, with
// previews made only from structure (no call of the objects' own code),
// from which its "names" come.

// looking is a look asked for.
type looking struct {
	nonce string
	ch    chan lookEvent
}

// lookEvent is a worker's answer to a look.
type lookEvent struct {
	Nonce string    `json:"nonce"`
	Vars  []api.Var `json:"vars"`
	Total int       `json:"total"`
	Error string    `json:"error"`
}

// lookTimeout is how long a worker lets an object of unknown type make
// its preview, in seconds.
const lookTimeout = 0.2

// Vars implements driver.Inspector.
func (p *process) Vars(q driver.VarsQuery, wait time.Duration) (driver.Look, error) {
	if !p.r.Inspects {
		return driver.Look{}, fmt.Errorf("the %s runtime cannot look at its names without a cell", p.r.Name)
	}
	if len(q.Path) > api.VarPathLimit {
		return driver.Look{}, fmt.Errorf("a path of %d bytes is over the %d a look takes", len(q.Path), api.VarPathLimit)
	}
	nonce, err := driver.Nonce(8)
	if err != nil {
		return driver.Look{}, err
	}
	l := &looking{nonce: nonce, ch: make(chan lookEvent, 1)}
	p.evMu.Lock()
	if p.inflight != nil || p.pending != nil {
		p.evMu.Unlock()
		return driver.Look{}, driver.ErrCellRuns
	}
	if p.look != nil {
		p.evMu.Unlock()
		return driver.Look{}, errors.New("another look is under way: ask again")
	}
	p.look = l
	p.evMu.Unlock()
	defer func() {
		p.evMu.Lock()
		if p.look == l {
			p.look = nil
		}
		p.evMu.Unlock()
	}()
	args, err := json.Marshal(map[string]any{"path": q.Path, "all": q.All, "limit": api.VarsLimit,
		"preview": api.VarPreview, "timeout": lookTimeout})
	if err != nil {
		return driver.Look{}, err
	}
	msg := append(fmt.Appendf(nil, "vars %d %s\n", len(args), nonce), args...)
	p.cmdMu.Lock()
	_, err = p.cmds.Write(msg)
	p.cmdMu.Unlock()
	if err != nil {
		return driver.Look{}, fmt.Errorf("cannot ask the worker to look (it may have died): %w", err)
	}
	select {
	case ev := <-l.ch:
		if ev.Error != "" {
			return driver.Look{}, &driver.PathError{Msg: api.Clip(ev.Error, api.VarNoteLimit*2, "error")}
		}
		return driver.Look{Vars: ev.Vars, Total: ev.Total}.Bounded(), nil
	case <-time.After(wait):
		return driver.Look{}, fmt.Errorf("the %s runtime did not look within %s", p.r.Name, wait)
	case <-p.evEOF:
		return driver.Look{}, fmt.Errorf("the %s runtime ended", p.r.Name)
	}
}

// looked takes a look's event, if line is one that was asked for (its
// nonce): true if line was a look's event at all.
func (p *process) looked(line []byte) bool {
	if eventHead(line).op != "vars" {
		return false
	}
	var ev lookEvent
	if json.Unmarshal(line, &ev) != nil {
		return true
	}
	if len(ev.Vars) > api.VarsWorkerMax {
		ev.Vars = ev.Vars[:api.VarsWorkerMax]
	}
	p.evMu.Lock()
	l := p.look
	if l != nil && l.nonce == ev.Nonce {
		p.look = nil
	} else {
		l = nil
	}
	p.evMu.Unlock()
	if l != nil {
		l.ch <- ev
	}
	return true
}

// cellLook is the look a cell's result carries, bounded, and the names
// it gives when the result says none.
func cellLook(vars []api.Var, total int) *driver.Look {
	if vars == nil {
		return nil
	}
	l := driver.Look{Vars: vars, Total: total}.Bounded()
	return &l
}
