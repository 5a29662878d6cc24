package session

import (
	"fmt"
	"log"
	"os"
	"sort"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/holder"
	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/state"
)

// unreachable is a session a holder keeps that this daemon cannot take
// up: its holder speaks another protocol, or does not answer. It is
// listed and refused with what to do, and ended only when asked: never
// silently. One being taken up (adopting: its holder has not answered
// yet) is listed and ended the same way, and refused until it answers.
type unreachable struct {
	info   api.SessionInfo
	tree   proc.Tree
	holder proc.Proc
	socket string
	// adopting is the dial waiting for its holder's hello, since when.
	adopting *dial
	since    time.Time
}

// addUnreachable lists a session this daemon cannot take up.
func (m *Manager) addUnreachable(u *unreachable) {
	u.info.State = api.StateUnreachable
	m.mu.Lock()
	m.unreach[u.info.Name] = u
	m.mu.Unlock()
	log.Printf("session %s (generation %s) is %s; `polyrepl kill %s` ends it", u.info.Name, u.info.Generation, u.info.Problem, u.info.Name)
}

// unreachableError refuses a call on a session this daemon cannot take
// up, or returns nil if name is not one.
func (m *Manager) unreachableError(name string) error {
	m.mu.Lock()
	u := m.unreach[name]
	m.mu.Unlock()
	if u != nil && u.adopting != nil {
		// Its holder may answer in a moment: a call waits for that
		// before it is refused.
		awaitAdoption(u)
		m.mu.Lock()
		u = m.unreach[name]
		m.mu.Unlock()
		if u != nil && u.adopting != nil {
			return adoptingError(name, u)
		}
	}
	if u == nil {
		return nil
	}
	return &Error{api.ErrorReply{Code: api.CodeForeign, Error: fmt.Sprintf("session %q is %s", name, u.info.Problem),
		Hint: "reach it with the polyrepl that started it, or end it", Next: []api.Action{{Do: api.DoKill, Session: name}}}}
}

// listUnreachable lists the sessions this daemon cannot take up.
func (m *Manager) listUnreachable() []api.SessionInfo {
	m.mu.Lock()
	us := make([]*unreachable, 0, len(m.unreach))
	for _, u := range m.unreach {
		us = append(us, u)
	}
	m.mu.Unlock()
	var out []api.SessionInfo
	for _, u := range us {
		out = append(out, u.listed()) // it reads the process table: not under the lock
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// listed is how the session is listed now.
func (u *unreachable) listed() api.SessionInfo {
	info := u.info
	if u.adopting != nil {
		info.Problem = adoptingProblem(u)
	}
	return info
}

// killUnreachable ends a session this daemon cannot take up: its holder,
// then its whole tree, and writes the death down (by and cause, as for
// any death). ok is false if name is not one.
func (m *Manager) killUnreachable(name string, asker api.Client, by, cause string) (reply api.KillReply, ok bool, err error) {
	m.mu.Lock()
	u := m.unreach[name]
	if u != nil && u.adopting != nil && !u.adopting.drop() {
		// Its holder answered: the session is being taken up, and is
		// ended as any session once it is.
		m.mu.Unlock()
		<-u.adopting.done
		return api.KillReply{}, false, nil
	}
	delete(m.unreach, name)
	m.mu.Unlock()
	if u == nil {
		return api.KillReply{}, false, nil
	}
	proc.Signal(u.holder, syscall.SIGTERM)
	// A stopped holder (SIGSTOP) ends only once it runs again.
	proc.Signal(u.holder, syscall.SIGCONT)
	survivors, kerr := u.tree.Kill(killGrace)
	for deadline := time.Now().Add(2 * time.Second); proc.Alive(u.holder) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if proc.Alive(u.holder) {
		proc.Signal(u.holder, syscall.SIGKILL)
	}
	os.Remove(u.socket)
	holder.RemoveSpool(m.outputDir, u.info.Generation)
	d := &api.Death{By: by, At: time.Now(), Cause: cause}
	l := state.Life{Name: name, Generation: u.info.Generation, Runtime: u.info.Runtime, PID: u.tree.Leader.PID, Start: u.tree.Leader.Start,
		Cookie: u.tree.Cookie, Cwd: u.info.Cwd, Created: u.info.Created, Death: d, Holder: u.holder}
	if err := m.state.SaveLoss(l); err != nil {
		log.Printf("session %s: cannot save its death note: %v", name, err)
	}
	m.mu.Lock()
	left := m.staleLeft[name]
	m.mu.Unlock()
	if left {
		m.record(name) // the cell it ran when its daemon ended ends with it
	}
	m.told.TellDeath(name, u.info.Generation, asker)
	if err := m.state.RemoveLive(name); err != nil {
		log.Printf("session %s: cannot remove its live record: %v", name, err)
	}
	info := u.info
	info.State, info.Death = Dead, d
	if kerr != nil {
		return api.KillReply{Session: name, Info: info}, true, fmt.Errorf("session %q: %d processes survived SIGKILL: %w", name, len(survivors), kerr)
	}
	return api.KillReply{Session: name, Info: info}, true, nil
}
