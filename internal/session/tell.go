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
// asked not to hear (it then gets the idle note instead).
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
	r.Activity = rec.Activity(asker)
	if a := r.Activity; a != nil && len(a.Entries) > 0 {
		// A death this client has heard of already is not told again.
		kept := a.Entries[:0]
		for _, e := range a.Entries {
			if e.Kind == api.EntryNote && e.Note != nil && e.Note.Kind == api.NoteEnded && m.told.has(name, e.Generation, asker) {
				continue
			}
			kept = append(kept, e)
		}
		a.Entries = kept
		if len(a.Entries) == 0 && a.Earlier == 0 {
			r.Activity = nil
		}
	}
	if err := rec.SaveError(); err != nil {
		r.Notes = append(r.Notes, api.Note{Kind: api.NoteSave, Session: name, Saved: api.SavedRecord, Err: err.Error()})
	}
}

// othersNotes mentions the other sessions that have a cell running or
// something nobody collected, so no client forgets work in flight.
//
// A session that died with a cell nobody collected is mentioned with what
// its death lost, once to each client: it is the first this client hears
// of the death, so the reply that collects the cell does not tell it again.
func (m *Manager) othersNotes(except string, asker api.Client) []api.Note {
	n := api.Note{Kind: api.NoteOthers}
	for _, i := range m.List(false) {
		if i.Name == except {
			continue
		}
		switch {
		case i.Running != nil:
		case i.State == Dead && i.Unread:
			if !m.told.first(i.Name, i.Generation, asker) {
				continue
			}
		case i.Unread:
		default:
			continue
		}
		o := api.Other{Session: i.Name, State: i.State, Running: i.Running, Death: i.Death, Unread: i.Unread}
		if i.State == Dead {
			o.Names = i.Names
		}
		n.Others = append(n.Others, o)
		n.Next = append(n.Next, api.Action{Do: api.DoWait, Session: i.Name})
	}
	if len(n.Others) == 0 {
		return nil
	}
	return []api.Note{n}
}
