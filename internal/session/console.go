package session

import (
	"fmt"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Glance describes the named session as the notes about other sessions
// read it — state, running cell and its question, names — without asking
// its holder or /proc, and without telling the asker anything: a console
// asks it often while a cell runs.
func (m *Manager) Glance(name string) (api.SessionInfo, error) {
	if err := ValidateName(name); err != nil {
		return api.SessionInfo{}, err
	}
	s := m.get(name)
	if s == nil {
		return api.SessionInfo{}, &Error{api.ErrorReply{Code: api.CodeNoSession,
			Error: fmt.Sprintf("no live session named %q", name)}}
	}
	return s.glance(), nil
}
