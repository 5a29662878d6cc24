package session

import (
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// What a reply tells besides its cell, and what the record is told: the
// record's note entries, other clients' activity, and the other sessions
// that need attention.

// note adds note n to the record of s, said by c.
func (m *Manager) note(s *Session, c api.Client, n api.Note) {
	s.rec.Add(api.Entry{Kind: api.EntryNote, Generation: s.Generation, Runtime: s.Runtime,
		Who: c.Who, How: c.How, Conn: c.Conn, Note: &n, Started: time.Now()})
}

// tell adds to a reply what other clients did in the session since the
// asker last heard, and what the session printed while idle, unless it
// asked not to hear (it then gets the idle note instead). A death it has
// heard of already is not told again (record.Told).
func (m *Manager) tell(r *api.CellResult, name string, asker api.Client) {
	if asker.Quiet {
		return
	}
	m.mu.Lock()
	rec := m.records[name]
	m.mu.Unlock()
	if rec == nil {
		return
	}
	r.Activity = m.told.Activity(rec, asker)
	if err := rec.SaveError(); err != nil {
		r.Notes = append(r.Notes, api.Note{Kind: api.NoteSave, Session: name, Saved: api.SavedRecord, Err: err.Error()})
	}
}

// othersNotes mentions the other sessions that have a cell running or
// something nobody collected, so no client forgets work in flight: each
// once to each client, when it begins (a cell starts; it ends with
// output or a result nobody collected), not again on every call while it
// lasts (record.Told.Others chooses). A note lists at most api.MaxOthers
// of them and counts the rest, which later replies list: with hundreds
// of sessions holding results, a reply stays small.
//
// A session that died with a cell nobody collected is mentioned with what
// its death lost, once to each client: it is the first this client hears
// of the death, so the reply that collects the cell does not tell it again.
func (m *Manager) othersNotes(except string, asker api.Client) []api.Note {
	tell, more := m.told.Others(asker, except, Reachable(m.glances(except), asker))
	if len(tell) == 0 {
		return nil
	}
	n := api.Note{Kind: api.NoteOthers, Count: more}
	for _, i := range tell {
		o := api.Other{Session: i.Name, State: i.State, Running: i.Running, Death: i.Death, Unread: i.Unread}
		if i.State == Dead {
			o.Names = i.Names
		}
		n.Others = append(n.Others, o)
		n.Next = append(n.Next, api.Action{Do: api.DoWait, Session: i.Name})
	}
	return []api.Note{n}
}

// mayNeedAttention reports whether the session's glance may be news to a
// client (record.Told.Others): a cell running, or output or a result
// nobody collected (as glance's Running and Unread say).
func (s *Session) mayNeedAttention() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cur
	return s.idleUnread || c != nil && (!c.finished() || c.unread())
}
