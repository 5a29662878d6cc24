package session

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/holder"
	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/state"
)

// The journal: what a session leaves on disk — its transcript, its live
// record (so a successor daemon can find its processes) and, once it has
// died, the note of what was lost — and the recovery of sessions a
// previous daemon left behind.

func (m *Manager) life(s *Session) state.Life {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := state.Life{
		Name: s.Name, Generation: s.Generation, Runtime: s.Runtime, Cwd: s.Spawn.Cwd,
		Created: s.Created, Cells: s.cells, Names: s.names, Transcript: s.Transcript,
		Cookie: CookieVar + "=" + s.Generation, Death: s.death, Dying: s.dying,
	}
	sp := s.Spawn
	sp.Runtime, sp.Env = s.Runtime, nil
	l.Spawn = &sp
	if s.p != nil {
		l.PID, l.Start = s.p.Tree().Leader.PID, s.p.Tree().Leader.Start
		l.Version, l.Exe = s.p.Version(), s.p.Exe()
		l.Holder, l.Socket = s.p.Holder(), s.p.Socket()
	}
	return l
}

// noteNames keeps the live record's names current, so a daemon that is
// killed still lets its successor say which names were lost.
func (m *Manager) noteNames(s *Session) {
	if s.isDead() {
		return
	}
	if err := m.state.SaveLive(m.life(s)); err != nil {
		log.Printf("session %s: cannot update its live record: %v", s.Name, err)
	}
}

// appendTranscript adds a cell to the session's transcript, and says why
// it could not.
func (m *Manager) appendTranscript(s *Session, c *cell) error {
	header := fmt.Sprintf("[%d] %s · %s", c.n, c.started.Format("2006-01-02 15:04:05"), c.client.Label())
	s.mu.Lock()
	t, terr := s.transcript, s.transcriptErr
	s.mu.Unlock()
	if t == nil {
		if terr != nil {
			return terr
		}
		return fmt.Errorf("the transcript %s could not be opened (see the daemon log)", s.Transcript)
	}
	if err := t.Append("#", header, c.code); err != nil {
		log.Printf("session %s: %v", s.Name, err)
		return err
	}
	return nil
}

// died is called once when a session's runtime has ended: it ends what is
// left of the tree and keeps the note of what was lost.
func (m *Manager) died(s *Session, d *api.Death) {
	if d.By != api.ByKill && d.By != api.ByRestart && d.By != api.ByStop {
		// The runtime ended by itself; its children must not outlive it.
		if survivors, err := s.p.Tree().Kill(killGrace); err != nil {
			log.Printf("session %s: %d processes survived: %v", s.Name, len(survivors), err)
		}
	}
	// Its checkpoints end with the life: its holder ends them as it
	// ends, but a holder that was lost cannot.
	for _, c := range s.p.Checkpoints() {
		proc.Signal(c.Proc, syscall.SIGKILL)
	}

	l := m.life(s)
	if d.By != api.ByRestart {
		s.mu.Lock()
		killer := s.killer
		s.mu.Unlock()
		m.note(s, killer, api.Note{Kind: api.NoteEnded, Session: s.Name, Death: d})
	}
	if d.By != api.ByRestart {
		if err := m.state.SaveLoss(l); err != nil {
			log.Printf("session %s: cannot save its death note: %v", s.Name, err)
		}
	}
	if err := m.state.RemoveLive(s.Name); err != nil {
		log.Printf("session %s: cannot remove its live record: %v", s.Name, err)
	}
	s.mu.Lock()
	if s.transcript != nil {
		s.transcript.Close()
		s.transcript = nil
	}
	s.mu.Unlock()
	// The death is written down: the holder, which kept it for a daemon
	// to hear, may go.
	if err := s.p.End(); err != nil {
		log.Printf("session %s: %v", s.Name, err)
	}
	holder.RemoveSpool(m.outputDir, s.Generation)
	log.Printf("session %s (generation %s, pid %d) died: %s", s.Name, s.Generation, l.PID, d.Cause)
}

// RecoverLost reports the sessions a previous daemon left live that no
// holder was there to keep (AdoptAll took up the others first): their
// processes are ended and each gets a death note, so nothing is silently
// forgotten. A holder that still runs is not ended: if it has not
// answered yet its session is listed as being taken up, and if it
// cannot be spoken to, as unreachable, with what to do.
func (m *Manager) RecoverLost() {
	lives, err := m.state.Lives()
	if err != nil {
		log.Printf("cannot read the live records: %v", err)
		return
	}
	for _, l := range lives {
		m.recoverLife(l)
	}
}

// recoverLife is RecoverLost for one live note: at a daemon's start, or
// once the dial of a holder that had not answered has ended.
func (m *Manager) recoverLife(l state.Life) {
	sock := m.holderSocket(l)
	alive := l.Holder.PID > 0 && proc.Alive(l.Holder)
	if alive && m.listAdopting(l, sock) {
		return // its holder has not answered yet: it is taken up when it does
	}
	if s := m.get(l.Name); s != nil && s.Generation == l.Generation {
		return // taken up from its holder
	}
	m.mu.Lock()
	u := m.unreach[l.Name]
	m.mu.Unlock()
	if u != nil && u.adopting == nil {
		return
	}
	tree := proc.Tree{Leader: proc.Proc{PID: l.PID, Start: l.Start}, Cookie: l.Cookie}
	if alive {
		m.mu.Lock()
		held := m.heldElsewhere[sock]
		m.mu.Unlock()
		if held {
			log.Printf("session %s (generation %s) is held by another daemon; left to it", l.Name, l.Generation)
			return
		}
		m.addUnreachable(&unreachable{
			info: api.SessionInfo{Name: l.Name, Generation: l.Generation, Runtime: l.Runtime, Version: l.Version, Exe: l.Exe,
				PID: l.PID, Created: l.Created, Cells: l.Cells, Cwd: l.Cwd, Names: l.Names, Transcript: l.Transcript, Holder: l.Holder.PID,
				Sandbox: lifeSandbox(l), Problem: fmt.Sprintf("kept by a holder (pid %d) that runs but does not answer at its socket", l.Holder.PID)},
			tree: tree, holder: l.Holder, socket: sock,
		})
		return
	}
	// Whatever listens where its dead holder did is not waited on.
	m.dropDial(sock)
	if l.Dying != nil {
		// It was being ended on request when its daemon ended: the
		// request is its cause, whatever signal ended it.
		if _, err := tree.Kill(killGrace); err != nil {
			log.Printf("session %s: processes left by the previous daemon survived: %v", l.Name, err)
		}
		l.Death = interruptedEnd(l.Dying, "its holder had ended too when the next daemon started")
		m.endLost(l)
		return
	}
	ended := ""
	if members := tree.Members(true); len(members) > 0 {
		if _, err := tree.Kill(killGrace); err != nil {
			log.Printf("session %s: processes left by the previous daemon survived: %v", l.Name, err)
		}
		ended = fmt.Sprintf("; its %d orphaned processes were ended", len(members))
	}
	cause := "lost when the daemon that owned it ended without stopping it (killed or crashed)"
	if l.Holder.PID > 0 {
		cause = fmt.Sprintf("lost: its holder process (pid %d) ended while no daemon was running", l.Holder.PID)
	}
	l.Death = &api.Death{By: api.ByDaemonLost, At: time.Now(), Cause: cause + ended}
	if l.Holder.PID > 0 {
		l.Death.By = api.ByHolder
	}
	m.endLost(l)
}

// holderSocket is where the holder of life l listens: where its live
// note says, if that is a socket of the user's in a private directory
// named as holders name theirs; else in this daemon's holders'
// directory.
func (m *Manager) holderSocket(l state.Life) string {
	own := holder.SocketName(m.holdersDir, l.Generation)
	s := l.Socket
	if s == "" || s == own || !filepath.IsAbs(s) || filepath.Clean(s) != s || filepath.Base(s) != filepath.Base(own) {
		return own
	}
	if err := paths.CheckSocket(s); err != nil {
		log.Printf("session %s: not taking it up at %s, where its live note says its holder listens: %v", l.Name, s, err)
		return own
	}
	return s
}

// interruptedEnd is the death of a session whose end, journalled as
// dying, was under way when its daemon ended: the end asked for, and
// what the next daemon found or did (how).
func interruptedEnd(dying *api.Death, how string) *api.Death {
	d := *dying
	d.At = time.Now()
	what := map[string]string{api.ByRestart: "restart", api.ByStop: "stop"}[d.By]
	if what == "" {
		what = "kill"
	}
	d.Cause += fmt.Sprintf(" (the daemon ended while the %s was under way; %s)", what, how)
	if d.By == api.ByRestart {
		// A death by restart is no loss: the new life would say what
		// the old one had. It never began, so this death is told.
		d.By = api.ByKill
		d.Cause += "; the new life was not started: the next exec starts one"
	}
	return &d
}

// endLost writes down the death of a life the previous daemon left live
// and no holder kept: its loss note, its record's note, its files gone.
func (m *Manager) endLost(l state.Life) {
	if err := m.state.SaveLoss(l); err != nil {
		log.Printf("session %s: cannot save its death note: %v", l.Name, err)
	}
	os.Remove(holder.SocketName(m.holdersDir, l.Generation))
	holder.RemoveSpool(m.outputDir, l.Generation)
	rec := m.record(l.Name)
	rec.Add(api.Entry{Kind: api.EntryNote, Generation: l.Generation, Runtime: l.Runtime, Started: time.Now(),
		Note: &api.Note{Kind: api.NoteEnded, Session: l.Name, Death: l.Death}})
	m.mu.Lock()
	if m.slots[l.Name] == nil || m.slots[l.Name].s == nil {
		delete(m.records, l.Name)
		rec.Close()
	}
	m.mu.Unlock()
	if err := m.state.RemoveLive(l.Name); err != nil {
		log.Printf("session %s: cannot remove its live record: %v", l.Name, err)
	}
	log.Printf("session %s was lost with the previous daemon: %s", l.Name, l.Death.Cause)
}

// lossNote says what a life's death lost, and where its code is.
func lossNote(l state.Life) api.Note {
	return api.Note{Kind: api.NoteLost, Session: l.Name, Death: l.Death, Names: l.Names, Cells: l.Cells, Transcript: l.Transcript}
}

// lossMsg is a dead refusal's message, for readers that do not word the
// note: what died and how, naming no command.
func lossMsg(n api.Note) string {
	if n.Death == nil {
		return fmt.Sprintf("session %q died", n.Session)
	}
	return fmt.Sprintf("session %q died at %s: %s", n.Session, n.Death.At.Format(time.RFC3339), n.Death.Cause)
}
