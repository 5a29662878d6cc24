package session

import (
	"fmt"
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Glance describes the named session as the notes about other sessions
// read it — state, running cell and its question, names — without asking
// its holder or /proc, and without telling the asker anything: a console
// asks it often while a cell runs.
func (m *Manager) Glance(name string, asker api.Client) (api.SessionInfo, error) {
	if err := ValidateName(name); err != nil {
		return api.SessionInfo{}, err
	}
	if err := m.checkReach(name, asker); err != nil {
		return api.SessionInfo{}, err
	}
	s := m.get(name)
	if s == nil {
		return api.SessionInfo{}, &Error{api.ErrorReply{Code: api.CodeNoSession,
			Error: fmt.Sprintf("no live session named %q", name)}}
	}
	return s.glance(), nil
}

// Complete completes word for a console's Tab: the runtime's own
// completion on its live state while no cell runs (a call to the holder,
// never a cell), else the session's names that start with word.
func (m *Manager) Complete(name string, req api.CompleteRequest, asker api.Client) (api.CompleteReply, error) {
	if err := ValidateName(name); err != nil {
		return api.CompleteReply{}, err
	}
	if err := m.checkReach(name, asker); err != nil {
		return api.CompleteReply{}, err
	}
	if len(req.Word) > api.CompleteWord {
		return api.CompleteReply{}, &Error{api.ErrorReply{Code: api.CodeBadRequest, Field: "word",
			Error: fmt.Sprintf("a word of %d bytes is over the %d a completion takes", len(req.Word), api.CompleteWord)}}
	}
	s := m.get(name)
	if s == nil {
		return api.CompleteReply{}, &Error{api.ErrorReply{Code: api.CodeNoSession,
			Error: fmt.Sprintf("no live session named %q", name)}}
	}
	s.mu.Lock()
	p, idle := s.p, s.state == Idle
	names := s.names
	s.mu.Unlock()
	if p != nil && idle && req.Word != "" {
		if matches, err := p.Complete(req.Word); err == nil {
			return api.CompleteReply{Matches: nonNil(matches), By: api.CompletedByRuntime}, nil
		}
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, req.Word) && len(out) < 200 {
			out = append(out, n)
		}
	}
	return api.CompleteReply{Matches: nonNil(out), By: api.CompletedByNames}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
