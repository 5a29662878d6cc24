package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/holder"
	"github.com/polyrepl/polyrepl/internal/limit"
	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/state"
	"github.com/polyrepl/polyrepl/internal/version"
)

// Taking up the sessions holders kept while no daemon ran: a daemon that
// starts finds each holder's socket, is told the session as the holder
// keeps it, and carries on with it, its cell in flight included, as if
// it had never left; and leaving them to their holders when it goes.

// adoptAtOnce bounds how many sessions a daemon takes up at once (the
// holders are dialled all at once: see pending.go).
const adoptAtOnce = 16

// AdoptAll takes up every session a holder keeps: every holder's socket
// is dialled at once, and AdoptAll waits at most wait for the holders
// that should answer at once: those a live note names that run (not
// stopped by a signal). It returns the names taken up by then; a holder
// that answers later is taken up when it does (RecoverLost lists its
// session as being taken up meanwhile), and a socket that no live note
// names (a holder's whose note could not be written, or anything else
// listening there) is dialled without being waited for. A holder this
// daemon cannot speak to is listed as unreachable, with what to do; none
// is ended.
func (m *Manager) AdoptAll(wait time.Duration) []string {
	socks := holder.Sockets(m.holdersDir)
	lives, _ := m.state.Lives()
	expect := map[string]bool{}
	for _, l := range lives {
		if l.Holder.PID <= 0 || !proc.Alive(l.Holder) {
			continue
		}
		sock := m.holderSocket(l)
		if filepath.Dir(sock) != m.holdersDir {
			// A live holder listening beside another daemon's socket,
			// which its live note names, is dialled there.
			socks = append(socks, sock)
		}
		expect[sock] = !proc.Stopped(l.Holder)
	}
	ds := make([]*dial, 0, len(socks))
	for _, path := range socks {
		d := m.dialAt(path)
		if expect[path] {
			ds = append(ds, d)
		}
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for _, d := range ds {
		select {
		case <-d.done:
		case <-timer.C:
			log.Printf("serving while live holders have not answered: each is taken up when it does")
			return m.takenUp(socks)
		}
	}
	if waiting := m.waitingDials(); waiting != "" {
		log.Printf("serving while the holders' sockets %s have not answered: each is taken up if it does", waiting)
	}
	return m.takenUp(socks)
}

// takenUp names the sessions taken up from the holders at socks.
func (m *Manager) takenUp(socks []string) []string {
	at := make(map[string]bool, len(socks))
	for _, s := range socks {
		at[s] = true
	}
	var names []string
	for _, s := range m.sessions() {
		s.mu.Lock()
		p := s.p
		s.mu.Unlock()
		if p != nil && at[p.Socket()] {
			names = append(names, s.Name)
		}
	}
	sort.Strings(names)
	return names
}

// adoptAt takes up the session of the holder at path, waiting for its
// hello until it comes or ctx ends (d dropped).
func (m *Manager) adoptAt(ctx context.Context, d *dial) (string, error) {
	path := d.path
	p, err := holder.DialContext(ctx, path)
	var pe *holder.ProtoError
	switch {
	case errors.As(err, &pe):
		hi := pe.Hello
		if ValidateName(hi.Name) != nil {
			return "", err
		}
		m.addUnreachable(&unreachable{
			info: api.SessionInfo{Name: hi.Name, Generation: hi.Generation, Runtime: hi.Runtime, PID: hi.Leader.PID,
				Cwd: hi.Spawn.Cwd, Sandbox: hi.Spawn.Sandbox, Enforced: hi.Enforced, Holder: pe.Holder.PID, HolderVersion: hi.Polyrepl,
				Problem: fmt.Sprintf("kept by a holder of polyrepl %s, which speaks holder protocol %d; this daemon (polyrepl %s) speaks %d to %d",
					hi.Polyrepl, hi.Proto, version.Version, holder.MinProto, holder.Proto)},
			tree: proc.Tree{Leader: hi.Leader, Cookie: hi.Cookie}, holder: pe.Holder, socket: pe.Socket,
		})
		return "", err
	case errors.Is(err, holder.ErrHeld):
		// Another daemon runs and holds it (one of a polyrepl that
		// takes no lock on the state directory): its session, not this
		// daemon's to list as unreachable or to end.
		m.mu.Lock()
		m.heldElsewhere[path] = true
		m.mu.Unlock()
		return "", err
	case errors.Is(err, syscall.ECONNREFUSED):
		// Nobody listens: its holder died without removing it. The
		// session is reported lost from its live note.
		os.Remove(path)
		return "", err
	case err != nil:
		return "", err
	}
	if !d.take() {
		// Killed, or the daemon leaves, while the hello came: the holder
		// is not taken up.
		p.Detach()
		return "", errDropped
	}
	m.adoptSlots <- struct{}{}
	defer func() { <-m.adoptSlots }()
	return m.adopt(p)
}

// adopt takes up the session holder p keeps.
func (m *Manager) adopt(p *holder.Process) (string, error) {
	hi := p.Hello()
	name := hi.Name
	if err := ValidateName(name); err != nil {
		p.Detach()
		return "", fmt.Errorf("its session's name: %v", err)
	}
	e := m.slot(name)
	e.life.Lock()
	defer e.life.Unlock()
	if old := m.get(name); old != nil {
		// Two holders keep lives of one name: the older one was still
		// ending when its daemon went. The newer is the session.
		if !old.Created.Before(hi.Created) {
			p.End()
			return "", fmt.Errorf("a newer life of %q (generation %s) is kept too; this one (generation %s) was ended", name, old.Generation, hi.Generation)
		}
		old.kill(api.ByStop, "ended: a newer life of the name was found as the daemon started", api.Client{})
		m.forgetDead(old)
	}
	keep := 0
	if c := hi.Cur; c != nil {
		keep = c.Seq
	}
	s := m.sessionOf(name, hi.Generation, hi.Created, hi.Spawn, m.openRecord(name, keep))
	s.setFacts(hi.Facts)
	s.state, s.p, s.cells, s.names, s.lastActive, s.limit = Idle, p, hi.Cells, boundNames(hi.Names), hi.LastActive, limit.Restore(hi.Limit)
	curN := 0
	if c := hi.Cur; c != nil {
		curN = c.Cell
		s.cur = s.takeUpCell(c)
		s.state = Running // until its result, which its holder sends again
		s.replaying = c.Done
	}
	if hi.IdleSeq != 0 && hi.IdleAfter == curN && s.entryIs(hi.IdleSeq, api.EntryIdle, 0) && s.rec.Rewrite(hi.IdleSeq, false) {
		s.adoptIdle = hi.IdleSeq
	}
	// An end under way when the last daemon ended (journalled as dying)
	// is the cause of the runtime's end, whatever signal it came by; one
	// the runtime outlived is finished below.
	var dying *api.Death
	if l, _ := m.state.Live(name); l != nil && l.Generation == hi.Generation && l.Dying != nil {
		dying = l.Dying
		if hi.Exited != nil {
			s.dying = interruptedEnd(dying, "the runtime had ended when the next daemon started")
			// What the end left of its tree goes, as the end would have
			// done (died does not, for an end asked for).
			if _, err := p.Tree().Kill(killGrace); err != nil {
				log.Printf("session %s: %v", name, err)
			}
		}
	}
	t, terr := state.OpenTranscript(s.Transcript)
	s.transcript, s.transcriptErr = t, terr
	m.set(e, s)
	if err := m.state.SaveLive(m.life(s)); err != nil {
		log.Printf("session %s: cannot record it as live: %v", name, err)
	}
	m.note(s, api.Client{}, api.Note{Kind: api.NoteAdopted, Session: name, PID: os.Getpid(), Version: version.Version})
	p.Start(s)
	how := "idle"
	if s.state == Running {
		how = fmt.Sprintf("cell %d in flight", curN)
	}
	log.Printf("session %s (generation %s, pid %d) taken up from its holder (pid %d, polyrepl %s): %s",
		name, s.Generation, p.PID(), p.Holder().PID, hi.Polyrepl, how)
	if dying != nil && hi.Exited == nil {
		// It was asked to end and still runs: the end is finished.
		d := interruptedEnd(dying, "the next daemon finished it")
		if err := s.kill(d.By, d.Cause, api.Client{}); err != nil {
			log.Printf("session %s: %v", name, err)
		}
		m.forgetDead(s)
	}
	return name, nil
}

// replayWait bounds how long a cell sent to a session just taken up
// waits for the result of a cell that had ended, which the holder sends
// again after its hello.
const replayWait = 2 * time.Second

// awaitReplayLocked waits, at most replayWait, while the session was just
// taken up with a finished cell whose result is still on its way from
// the holder: until it comes the session looks busy, and a client's cell
// would be refused for a cell that had ended. s.mu is held, and let go
// while waiting.
func (s *Session) awaitReplayLocked() {
	deadline := time.Now().Add(replayWait)
	for s.replaying && s.state == Running {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(left):
		}
		s.mu.Lock()
	}
	s.replaying = false
}

// takeUpCell is the cell in flight (or the last one) as its holder keeps
// it: its entry is written again from the cell's output log — read from
// its file here, the rest sent by the holder after its hello, then its
// result if it came — and each reader goes on from where it was.
func (s *Session) takeUpCell(c *holder.CellState) *cell {
	cl := &cell{n: c.Cell, seq: c.Seq, code: c.Code, client: c.Client, started: c.Started, ooms: c.OOMs,
		status: api.StatusRunning, prompt: c.Prompt}
	if q := cl.prompt; q != nil {
		*q = boundQuestion(*q)
	}
	// Bounded where they enter: a holder keeps no more, and a position is
	// within the output the holder says the cell printed.
	for k, at := range c.Read {
		if len(cl.readers) == holder.MaxReaders {
			break
		}
		if len(k) > holder.MaxReaderKey {
			continue
		}
		if cl.readers == nil {
			cl.readers = map[string]*reader{}
		}
		cl.readers[k] = &reader{at: min(max(at, 0), c.Bytes), final: c.Final[k]}
	}
	whole := ""
	if s.entryIs(c.Seq, api.EntryCell, c.Cell) && s.rec.Rewrite(c.Seq, true) {
		whole = s.rec.WholeElsewhere(c.Seq)
	} else {
		cl.seq = s.rec.Add(api.Entry{Kind: api.EntryCell, Generation: s.Generation, Runtime: s.Runtime, Cell: c.Cell,
			Who: c.Client.Who, How: c.Client.How, Conn: c.Client.Conn, Code: c.Code, Status: api.StatusRunning, Started: c.Started})
		s.rec.WholeElsewhere(cl.seq)
	}
	// The holder's file is read only where the record keeps it: its
	// hello names no other path to this daemon.
	if c.Whole != whole {
		whole = ""
	}
	cl.out = newCellOutput(whole)
	if c.LogErr != "" && !c.InFile {
		cl.out.cut(c.Kept, errors.New(api.Clip(c.LogErr, api.RefusalLimit, "error")))
	}
	if c.InFile && whole != "" {
		end := c.Bytes
		if c.LogErr != "" {
			end = min(end, c.Kept)
		}
		s.readLog(cl, end)
		if c.LogErr != "" {
			cl.out.cut(end, errors.New(api.Clip(c.LogErr, api.RefusalLimit, "error")))
		}
	}
	return cl
}

// readLog feeds the record and the cell's output from the cell's log
// file, up to byte end: what its holder does not send again.
func (s *Session) readLog(cl *cell, end int64) {
	f, err := paths.OpenFile(cl.out.whole, os.O_RDONLY)
	if err != nil {
		cl.out.cut(0, err)
		s.rec.WholeFailed(cl.seq, err)
		return
	}
	defer f.Close()
	buf := make([]byte, 256<<10)
	for cl.out.n < end {
		n, err := f.Read(buf[:min(int64(len(buf)), end-cl.out.n)])
		cl.out.write(buf[:n])
		s.rec.Output(cl.seq, buf[:n])
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("its file ends at byte %d of %d", cl.out.n, end)
			}
			cl.out.cut(cl.out.n, err)
			s.rec.WholeFailed(cl.seq, err)
			return
		}
	}
}

// entryIs reports whether record entry seq is of this life, of kind, and
// (for a cell) cell n.
func (s *Session) entryIs(seq int, kind string, n int) bool {
	e, ok := s.rec.Get(seq)
	return ok && e.Generation == s.Generation && e.Kind == kind && (kind != api.EntryCell || e.Cell == n)
}

// Leaving tells every call waiting on a cell to answer now that the cell
// still runs: the daemon is leaving its sessions to their holders. The
// calls' replies go out before Leave lets the holders go.
func (m *Manager) Leaving() {
	m.leaveOnce.Do(func() { close(m.leaving) })
}

// Leave lets every session go on in its holder, for a daemon that leaves
// (an upgrade, a signal, stop --keep-sessions): records are saved, the
// holders let go, and nothing is ended. It returns the sessions left.
func (m *Manager) Leave() []api.SessionInfo {
	m.Leaving()
	m.dropDials() // the holders not taken up yet keep their sessions for the next daemon
	defer m.closeLauncher()
	// The calls that were waiting take what they answer with first (and
	// the holders hear what the replies took).
	for deadline := time.Now().Add(time.Second); m.collecting.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	ss := m.sessions()
	var left []api.SessionInfo
	for _, s := range ss {
		s.mu.Lock()
		p, dead := s.p, s.state == Dead
		s.mu.Unlock()
		if p == nil || dead {
			continue
		}
		left = append(left, s.Info(false))
		p.Detach()
	}
	m.mu.Lock()
	for name, r := range m.records {
		if err := r.Close(); err != nil {
			log.Printf("session %s: %v", name, err)
		}
	}
	m.mu.Unlock()
	sort.Slice(left, func(i, j int) bool { return left[i].Name < left[j].Name })
	return left
}
