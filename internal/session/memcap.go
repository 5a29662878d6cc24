package session

import (
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// MemoryCap says how the cap on all sessions together stands, for the
// daemon's status and its start line: nil when none was asked for.
// Asking makes the daemon choose how it holds limits, if it has not.
func (m *Manager) MemoryCap() *api.MemoryCap {
	st := m.limits.Cap()
	if st.Bytes <= 0 {
		return nil
	}
	c := &api.MemoryCap{Bytes: st.Bytes, Enforced: st.Enforced, By: st.By, Group: st.Group, Why: st.Why, Counted: "cgroup"}
	if st.Enforced {
		c.InUse = max(st.Usage(), 0)
	}
	var tb *proc.Table
	if !st.Enforced {
		tb, _ = proc.ReadTable()
		c.Counted = "rss"
	}
	for _, s := range m.sessions() {
		s.mu.Lock()
		lim, p, state, remote := s.limit, s.p, s.state, s.Spawn.Gateway != ""
		s.mu.Unlock()
		if state == Dead || p == nil {
			continue
		}
		if st.Enforced && !lim.Capped(st.Group) {
			c.Outside = append(c.Outside, s.Name)
		}
		if !st.Enforced && !remote {
			c.InUse += int64(proc.RSS(p.Tree().MembersIn(tb)))
		}
	}
	return c
}

// ReleaseCap removes the cap's group once the sessions' groups under it
// are gone, waiting for them up to wait: for a daemon that stopped every
// session.
func (m *Manager) ReleaseCap(wait time.Duration) { m.limits.ReleaseCap(wait) }

// SettleCap makes the daemon choose how it holds limits now, when a
// session it took up is under the cap's group of an earlier daemon and
// this one has no cap: choosing lifts that cap (see limit.Limiter), which
// nobody asks for any more, instead of leaving it to hold the sessions
// unsaid.
func (m *Manager) SettleCap() {
	if m.limits.Total > 0 {
		return
	}
	for _, s := range m.sessions() {
		s.mu.Lock()
		capped := s.limit.UnderCap()
		s.mu.Unlock()
		if capped {
			m.limits.Prepare()
			return
		}
	}
}
