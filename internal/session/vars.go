package session

import (
	"errors"
	"fmt"
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/holder"
)

// Vars is a look at what session name holds, without a cell: asked of
// its holder, which asks the runtime between cells and answers from the
// last look while a cell runs. It tells the asker nothing and is not in
// the record: a look is not activity.
func (m *Manager) Vars(name string, q holder.VarsArgs, asker api.Client) (api.VarsReply, error) {
	if err := ValidateName(name); err != nil {
		return api.VarsReply{}, err
	}
	if err := m.checkReach(name, asker); err != nil {
		return api.VarsReply{}, err
	}
	if len(q.Path) > api.VarPathLimit {
		return api.VarsReply{}, &Error{api.ErrorReply{Code: api.CodeBadRequest, Field: api.FieldPath,
			Error: fmt.Sprintf("a path of %d bytes is over the %d a look takes", len(q.Path), api.VarPathLimit)}}
	}
	s := m.get(name)
	if s == nil {
		return api.VarsReply{}, &Error{api.ErrorReply{Code: api.CodeNoSession,
			Error: fmt.Sprintf("no live session named %q", name)}}
	}
	s.mu.Lock()
	p, state := s.p, s.state
	s.mu.Unlock()
	if p == nil || state == Dead || state == Starting {
		return api.VarsReply{}, &Error{api.ErrorReply{Code: api.CodeNoLook,
			Error: fmt.Sprintf("session %q is %s: there is nothing to look at", name, state)}}
	}
	a, err := p.Vars(q)
	if err != nil {
		var he *holder.Error
		if !errors.As(err, &he) {
			return api.VarsReply{}, err
		}
		switch he.Code {
		case holder.CodeNoPath:
			return api.VarsReply{}, &Error{api.ErrorReply{Code: api.CodeBadRequest,
				Error: fmt.Sprintf("%s: %s", api.Clip(q.Path, 80, "path"), api.Clip(he.Msg, 400, "error")),
				Next:  []api.Action{{Do: api.DoVars, Session: name}}}}
		case holder.CodeUnknown:
			he.Msg = "the session's holder is of an earlier polyrepl that cannot look: restart the session"
		}
		return api.VarsReply{}, &Error{api.ErrorReply{Code: api.CodeNoLook, Error: api.Clip(strings.TrimSpace(he.Msg), 400, "error")}}
	}
	vars := a.Vars
	if vars == nil {
		vars = []api.Var{}
	}
	return api.VarsReply{Session: name, Generation: s.Generation, Runtime: s.Runtime, Path: q.Path, All: q.All,
		Vars: vars, Total: a.Total, Look: a.How, Cell: a.Cell, At: a.At}, nil
}
