package session

import (
	"syscall"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// plumbingNotes are what a cell did to the session's own plumbing, as
// its driver saw it: events that were not its result, a result too long
// to take, its output pointed elsewhere, an end of output that never came.
// Each was survived; the notes say what it cost.
func plumbingNotes(session string, cell int, res *driver.Result) []api.Note {
	var notes []api.Note
	if res.Dropped > 0 {
		notes = append(notes, api.Note{Kind: api.NoteDropped, Session: session, Cell: cell, Count: res.Dropped})
	}
	if len(res.Redirected) > 0 || res.Unrestored != "" {
		notes = append(notes, api.Note{Kind: api.NoteRedirected, Session: session, Cell: cell, FDs: res.Redirected, Err: res.Unrestored})
	}
	if res.OutputLate {
		notes = append(notes, api.Note{Kind: api.NoteOutputLate, Session: session, Cell: cell, Elapsed: driver.MarkerWait.Seconds()})
	}
	if res.Stray > 0 {
		notes = append(notes, api.Note{Kind: api.NoteStray, Session: session, Cell: cell, Count: res.Stray})
	}
	return notes
}

// stoppedTree reports whether any process of the tree is stopped by a
// signal, so that an interrupt must wake it first.
func stoppedTree(t proc.Tree) bool {
	if proc.Stopped(t.Leader) {
		return true
	}
	for _, m := range t.Members(false) {
		if proc.Stopped(m) {
			return true
		}
	}
	return false
}

// stuckWhy says, if it can tell, what keeps the runtime's cell from
// stopping after an interrupt: one of the api.Stuck constants, or "".
func stuckWhy(leader proc.Proc) string {
	switch {
	case proc.Stopped(leader):
		return api.StuckStopped
	case proc.Ignores(leader, syscall.SIGINT):
		return api.StuckIgnoresSIGINT
	}
	return ""
}
