// Package session owns the daemon's side of live sessions: the name
// table (Manager), and for each name one Session, a life of a runtime
// whose live state its holder owns (package holder) — the cell in
// flight, its output log, its question, the runtime's exit — and which
// the Session asks through a holder.Process: run a cell, read, interrupt,
// answer, end. A Session keeps what the daemon alone knows: the state
// machine starting → idle ⇄ running → dead(cause), each cell's readers
// (every client reads a cell from its own position: cellOutput reads the
// holder's log by byte position, and collecting takes nothing from
// anyone), the record's entries, and the notes of the dead.
//
// The parts: Manager's calls (Exec, Wait, Interrupt, Input, Kill,
// Restart, Stop); a life's creation and end (Manager.create, died); the
// holders a starting daemon takes up (AdoptAll, adopt, the dials of
// holders that have not answered, listed as adopting), and those it
// cannot speak to (unreachable); what a reply tells besides its cell
// (who was told what is record.Told's); what a session leaves on disk
// and the recovery of what no holder kept (RecoverLost); the runtime's
// events (Session's Output, CellDone, InputAsked, LogCut, Exited,
// HolderLost). docs/architecture.md walks one exec through them.
//
// Notes and errors leave this package as data (api.Note, Error with its
// Code, Field and Next): the words are written by render and mcp.
//
// Locks are taken in this order, never the reverse:
//
//  1. slot.life: one name's lifecycle (create, restart, kill, replacing a
//     dead session); held while a process starts or is ended.
//  2. Manager.mu: the name table and the open records; held briefly.
//  3. Session.mu: one session's state, cell and output. The holder's
//     events (Output, CellDone, Exited, HolderLost) take it, so nothing
//     that waits on the holder (Run, Interrupt) is called under it.
//  4. Leaves, which never take another lock: a record.Record's, a
//     record.Told's, a bound.Sink's, a holder.Process's, a dial's.
//
// A death is written down (Manager.died: the tree ended, the loss note
// saved, the live note removed, the holder ended) outside the event's
// handler; until it is, Session.exited stays open and kill, restart and
// a new life of the name wait on it.
package session

import (
	"context"
	"fmt"
	"log"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/holder"
	"github.com/polyrepl/polyrepl/internal/limit"
	"github.com/polyrepl/polyrepl/internal/plain"
	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/record"
	"github.com/polyrepl/polyrepl/internal/state"
	"github.com/polyrepl/polyrepl/internal/version"
)

// Session states.
const (
	Starting = api.StateStarting
	Idle     = api.StateIdle
	Running  = api.StateRunning
	Dead     = api.StateDead
)

// killGrace is how long a session's processes get between SIGTERM and
// SIGKILL: long enough to flush files, short enough that kill feels instant.
const killGrace = time.Second

// Session is one named life of a runtime process.
type Session struct {
	Name       string
	Generation string
	Created    time.Time
	Spawn      api.Spawn // what it was started with; restart reuses it
	Runtime    string
	Transcript string

	m       *Manager
	rt      driver.Info // the runtime's facts, as its holder told them (see facts)
	forking *forkStart  // how a life forked from another starts (fork.go); nil once it did

	mu         sync.Mutex
	changed    chan struct{}   // closed and replaced on every state change
	p          *holder.Process // the runtime, through the holder that keeps it
	state      string
	cells      int
	names      []string
	namesTotal int // how many names the runtime reported, when past api.MaxNames
	lastActive time.Time
	cur        *cell       // the running cell, or the last one
	idle       *bound.Sink // output printed while no cell ran, for quiet clients
	// quietAsked is set once a client that does not hear activity asked:
	// only such clients read the idle sink (the others are told idle
	// output from the record), so until one does it is not fed.
	quietAsked bool
	idleUnread bool // idle output came since the last reply to anyone
	replaying  bool // taken up with a finished cell whose result its holder sends again (adopt.go)
	death      *api.Death
	dying      *api.Death    // set by Kill before the process ends
	killer     api.Client    // who asked for it
	exited     chan struct{} // closed when the process has ended
	recent     []byte        // the last bytes the running cell printed, for progress
	transcript *state.Transcript
	// transcriptErr is why the transcript could not be opened, told with
	// every cell it misses (a planted link is refused, not followed).
	transcriptErr error
	rec           *record.Record // the name's shared record
	told          *record.Told   // what each client was told (the Manager's)
	limit         *limit.Limit   // its memory limit, or nil
	idleSeq       int            // the record entry of output while idle, or 0
	// adoptIdle is the record entry of the output printed while idle that
	// an earlier daemon began, which this one goes on with (0: none).
	adoptIdle int
}

// Progress reports on a running cell while a call waits for it.
type Progress func(api.Progress)

// recentMax bounds what is kept to find the latest line for progress.
const recentMax = 512

// cell is one run of code.
type cell struct {
	n       int
	seq     int // its entry in the record
	code    string
	client  api.Client
	started time.Time
	ended   time.Time
	// out is its output, which its holder owns; readers says how far
	// each client read it, and whether it was given the result.
	out     *cellOutput
	readers map[string]*reader
	result  *driver.Result
	status  string
	// collecting counts the calls waiting for this cell: its result is
	// theirs, not an uncollected note for whoever runs the next cell.
	collecting int
	// ooms counts the session's processes killed for memory before the
	// cell; oomNote says, once it ended, how many it lost.
	ooms    int
	oomNote *api.Note
	// errSaveErr says why its error, cut for the reply, could not be
	// saved whole.
	errSaveErr error
	// valueSaveErr says why its value, cut by the runtime, has no file
	// holding the whole.
	valueSaveErr error
	// richErrs say why rich outputs could not be kept.
	richErrs []error
	// prompt is the question the cell waits on, if it asked one that was
	// not answered yet.
	prompt *driver.Prompt
}

// reader is how far one client has read a cell's output, and whether it
// was given the cell's result.
type reader struct {
	at    int64
	final bool
}

// A cell keeps the positions of at most holder.MaxReaders clients: past
// it, another reader's position goes (not the sender's), and that reader
// reads the cell from its start if it asks again.

// readerKey identifies a client as a reader: its label, how it comes,
// and its connection.
func readerKey(c api.Client) string { return c.How + "\x00" + c.Who + "\x00" + c.Conn }

// readerOf is client c's position in the cell, made if it has none.
func (c *cell) readerOf(cl api.Client) (string, *reader) {
	k := readerKey(cl)
	r := c.readers[k]
	if r == nil {
		if c.readers == nil {
			c.readers = map[string]*reader{}
		}
		if len(c.readers) >= holder.MaxReaders {
			for other := range c.readers {
				if other != readerKey(c.client) {
					delete(c.readers, other)
					break
				}
			}
		}
		r = &reader{}
		c.readers[k] = r
	}
	return k, r
}

// collectedBy reports whether client cl has read all of the finished
// cell, its result included.
func (c *cell) collectedBy(cl api.Client) bool {
	r := c.readers[readerKey(cl)]
	return c.finished() && r != nil && r.final && r.at >= c.out.n
}

// collected reports whether any client was given the finished cell's
// result.
func (c *cell) collected() bool {
	for _, r := range c.readers {
		if r.final {
			return true
		}
	}
	return false
}

// unread reports whether the cell holds what its sender has not read.
func (c *cell) unread() bool {
	if c.finished() {
		return !c.collected()
	}
	r := c.readers[readerKey(c.client)]
	return r == nil || r.at < c.out.n
}

func (c *cell) finished() bool { return c.status != api.StatusRunning }

// notifyLocked wakes everyone waiting for a change.
func (s *Session) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Exec starts a cell and waits for it up to timeout.
func (s *Session) Exec(ctx context.Context, code string, client api.Client, timeout time.Duration, prog Progress, every time.Duration) (api.CellResult, error) {
	s.mu.Lock()
	s.awaitReplayLocked()
	switch s.state {
	case Running:
		err := s.busyErrorLocked(client)
		if q := s.cur.prompt; q != nil && !s.cur.finished() {
			// Code is never fed to a question as its answer by accident.
			text, _ := api.BoundPrompt(q.Text, q.Total, api.PromptBrief)
			asked := fmt.Sprintf("it asked %q", text)
			if q.Text == "" {
				asked = "on its standard input"
			}
			err = &Error{api.ErrorReply{Code: api.CodeInput,
				Error: fmt.Sprintf("session %q: cell %d waits for input (%s); this code was not run", s.Name, s.cur.n, asked),
				Next:  []api.Action{{Do: api.DoInput, Session: s.Name}, {Do: api.DoInterrupt, Session: s.Name}}}}
		}
		s.mu.Unlock()
		return api.CellResult{}, err
	case Dead:
		s.mu.Unlock()
		return api.CellResult{}, s.deadError(client)
	}
	s.cells++
	c := &cell{
		n: s.cells, code: code, client: client, started: time.Now(),
		status: api.StatusRunning,
		// Its sender collects it: held from now, so that a fast cell's
		// result is not taken by the next exec before collect begins.
		collecting: 1,
		ooms:       s.limit.OOMKills(),
	}
	// What nobody collected of the previous cell is not dropped: it goes
	// out as a note with this cell's reply.
	var pending []api.Note
	if prev := s.cur; prev != nil && prev.collecting == 0 && !prev.collected() {
		prevResult := s.takeLocked(prev, client)
		pending = append([]api.Note{{Kind: api.NoteUncollected, Session: s.Name, Cell: prev.n, Result: api.EarlierOf(prevResult),
			Client: clientRef(prev.client)}}, prevResult.Notes...)
	}
	c.seq = s.rec.Add(api.Entry{Kind: api.EntryCell, Generation: s.Generation, Runtime: s.Runtime, Cell: c.n,
		Who: client.Who, How: client.How, Conn: client.Conn, Code: code, Status: api.StatusRunning, Started: c.started})
	c.out = newCellOutput(s.rec.WholeElsewhere(c.seq))
	c.readerOf(client)
	s.idleSeq = 0
	s.cur = c
	s.recent = s.recent[:0]
	s.state = Running
	s.lastActive = c.started
	s.notifyLocked()
	p := s.p
	s.mu.Unlock()

	terr := s.m.appendTranscript(s, c)
	meta := holder.CellMeta{Cell: c.n, Seq: c.seq, Code: firstLine(code), Client: client, Started: c.started, OOMs: c.ooms, Whole: c.out.whole}
	if err := p.Run(meta, code); err != nil {
		// The worker is gone; Exited will follow and mark the cell dead.
		s.waitExited(2 * time.Second)
	}
	r, err := s.collect(ctx, c, timeout, client, prog, every)
	s.mu.Lock()
	c.collecting--
	s.mu.Unlock()
	if err == nil && pending != nil {
		r.Notes = append(pending, r.Notes...)
	}
	if err == nil && terr != nil {
		r.Notes = append(r.Notes, api.Note{Kind: api.NoteSave, Session: s.Name, Cell: c.n, Saved: api.SavedTranscript, Err: terr.Error()})
	}
	return r, err
}

// clientRef is a copy of c for a note to point at.
func clientRef(c api.Client) *api.Client { return &c }

// Wait collects the running cell, or whatever of the last one nobody has
// collected yet.
func (s *Session) Wait(ctx context.Context, timeout time.Duration, asker api.Client, prog Progress, every time.Duration) (api.CellResult, error) {
	s.mu.Lock()
	c := s.cur
	if c == nil {
		r := s.baseResultLocked(nil)
		r.Status = api.StatusDone
		r.Notes = append(r.Notes, api.Note{Kind: api.NoteCollected, Session: s.Name})
		s.idleNoteLocked(&r, asker)
		s.mu.Unlock()
		return r, nil
	}
	if c.collectedBy(asker) {
		// Nothing new for this client: the status is of this call, done;
		// the note says how the last cell ended.
		r := s.baseResultLocked(c)
		r.Status = api.StatusDone
		ended := c.ended
		r.Notes = append(r.Notes, api.Note{Kind: api.NoteCollected, Session: s.Name, Cell: c.n, Status: c.status, At: &ended})
		s.idleNoteLocked(&r, asker)
		s.mu.Unlock()
		return r, nil
	}
	s.mu.Unlock()
	return s.collect(ctx, c, timeout, asker, prog, every)
}

// collect waits for cell c to finish, up to timeout, and returns what it
// printed since the asker last read it. A cancelled ctx (the client went
// away) returns without moving the asker's position, so its next wait
// gets it all. If prog is set, it is called every so often while the
// cell runs.
func (s *Session) collect(ctx context.Context, c *cell, timeout time.Duration, asker api.Client, prog Progress, every time.Duration) (api.CellResult, error) {
	s.mu.Lock()
	c.collecting++
	s.mu.Unlock()
	s.m.collecting.Add(1)
	defer func() {
		s.m.collecting.Add(-1)
		s.mu.Lock()
		c.collecting--
		s.mu.Unlock()
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var tick <-chan time.Time
	if prog != nil && every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		s.mu.Lock()
		if c.finished() || c.prompt != nil {
			r := s.takeLocked(c, asker)
			s.mu.Unlock()
			return r, nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-tick:
			s.mu.Lock()
			p := api.Progress{Cell: c.n, Elapsed: time.Since(c.started).Seconds(), LastLine: lastLine(s.recent)}
			s.mu.Unlock()
			prog(p)
		case <-timer.C:
			s.mu.Lock()
			r := s.takeLocked(c, asker)
			s.mu.Unlock()
			return r, nil
		case <-s.m.leaving:
			// The daemon leaves the session to its holder: the cell goes
			// on, and the next daemon collects it.
			s.mu.Lock()
			r := s.takeLocked(c, asker)
			s.mu.Unlock()
			return r, nil
		case <-ctx.Done():
			return api.CellResult{}, ctx.Err()
		}
	}
}

// lastLine is the latest non-empty line in b, bounded and valid UTF-8.
func lastLine(b []byte) string {
	t := strings.TrimRight(string(b), "\r\n \t")
	if i := strings.LastIndexAny(t, "\r\n"); i >= 0 {
		t = t[i+1:]
	}
	t = strings.ToValidUTF8(t, "\uFFFD")
	if r := []rune(t); len(r) > 200 {
		t = "…" + string(r[len(r)-199:])
	}
	return t
}

// takeLocked builds asker's reply for cell c: what it printed since the
// asker last read it, and, if it finished, its result. Another client's
// position is not moved: each reads the whole cell from where it left
// off, and is told whose cell it is.
func (s *Session) takeLocked(c *cell, asker api.Client) api.CellResult {
	r := s.baseResultLocked(c)
	key, rd := c.readerOf(asker)
	text, cut, end, err := c.out.read(rd.at, api.OutputLimit, c.finished())
	part := c.out.part(rd.at, end, text)
	rd.at = end
	// The holder keeps the position for the daemon after this one.
	defer func() { s.p.MarkRead(c.n, key, rd.at, rd.final) }()
	r.Output = plain.Text(text)
	r.OutputCut = cut
	if err != nil {
		r.Notes = append(r.Notes, api.Note{Kind: api.NoteSave, Session: s.Name, Cell: c.n, Saved: api.SavedOutput, Err: err.Error()})
	}
	if readerKey(c.client) != key {
		r.Notes = append(r.Notes, api.Note{Kind: api.NoteSentBy, Session: s.Name, Cell: c.n, Client: clientRef(c.client)})
	}
	r.Status = c.status
	if q := c.prompt; q != nil && !c.finished() {
		r.Status = api.StatusInput
		r.Elapsed = time.Since(c.started).Seconds()
		r.Prompt = &api.Prompt{Text: q.Text, Password: q.Password, NoEOF: q.NoEOF, Total: q.Total}
		n := api.Note{Kind: api.NoteInput, Session: s.Name, Cell: c.n, Said: q.Text,
			Next: []api.Action{{Do: api.DoInput, Session: s.Name}, {Do: api.DoInterrupt, Session: s.Name}}}
		switch {
		case q.Password:
			n.Why = "password"
		case q.NoEOF:
			n.Why = "lines"
		}
		r.Notes = append(r.Notes, n)
		s.fitLocked(&r, c, asker, part)
		s.idleNoteLocked(&r, asker)
		return r
	}
	if !c.finished() {
		r.Elapsed = time.Since(c.started).Seconds()
		n := api.Note{Kind: api.NoteRunning, Session: s.Name, Cell: c.n, Elapsed: r.Elapsed,
			Next: []api.Action{{Do: api.DoWait, Session: s.Name}, {Do: api.DoInterrupt, Session: s.Name}}}
		if s.p != nil && proc.Stopped(s.p.Tree().Leader) {
			n.Why = api.StuckStopped // it will not go on by itself
		}
		r.Notes = append(r.Notes, n)
		s.fitLocked(&r, c, asker, part)
		s.idleNoteLocked(&r, asker)
		return r
	}
	rd.final = true
	if res := c.result; res != nil {
		r.Value = res.Value
		if res.Value != "" {
			r.Display = s.facts().Display(c.n, res.ValueName, res.Value)
		}
		r.Error = res.Error
		r.ValueCut = res.ValueCut
		r.Rich, r.RichMore = res.Rich, res.RichMore
		for _, err := range c.richErrs {
			r.Notes = append(r.Notes, api.Note{Kind: api.NoteSave, Session: s.Name, Cell: c.n, Saved: api.SavedRich, Err: err.Error()})
		}
		if c.valueSaveErr != nil {
			r.Notes = append(r.Notes, api.Note{Kind: api.NoteSave, Session: s.Name, Cell: c.n, Saved: api.SavedValue, Err: c.valueSaveErr.Error()})
		}
		if c.errSaveErr != nil {
			r.Notes = append(r.Notes, api.Note{Kind: api.NoteSave, Session: s.Name, Cell: c.n, Saved: api.SavedError, Err: c.errSaveErr.Error()})
		}
		if res.Note != "" {
			r.Notes = append(r.Notes, api.Note{Kind: api.NoteRuntime, Session: s.Name, Cell: c.n, Said: res.Note})
		}
		if res.Hint != "" {
			r.Notes = append(r.Notes, api.Note{Kind: api.NoteHint, Session: s.Name, Cell: c.n, Hint: res.Hint})
		}
		r.Notes = append(r.Notes, plumbingNotes(s.Name, c.n, res)...)
		if n := sandboxNote(s, c.n, r.Output, res.Error); n != nil {
			r.Notes = append(r.Notes, *n)
		}
	}
	if c.oomNote != nil {
		r.Notes = append(r.Notes, *c.oomNote)
	}
	if c.status == api.StatusDead && s.death != nil {
		r.Error = &api.CellError{Type: "SessionDied", Message: fmt.Sprintf("the session died during cell %d: %s", c.n, s.death.Cause)}
		if s.told.TellDeath(s.Name, s.Generation, asker) {
			r.Notes = append(r.Notes, s.lossNoteLocked())
		}
	}
	s.fitLocked(&r, c, asker, part)
	s.idleNoteLocked(&r, asker)
	return r
}

func (s *Session) baseResultLocked(c *cell) api.CellResult {
	r := api.CellResult{Session: s.Name, Generation: s.Generation}
	if c != nil {
		r.Cell = c.n
		end := c.ended
		if end.IsZero() {
			end = time.Now()
		}
		r.Elapsed = end.Sub(c.started).Seconds()
	}
	return r
}

// idleNoteLocked adds output printed while no cell ran to a reply, for a
// client that does not hear activity; one that does is told it from the
// record, with the rest of what happened, and leaves it for the quiet.
func (s *Session) idleNoteLocked(r *api.CellResult, asker api.Client) {
	s.idleUnread = false
	if !asker.Quiet {
		return
	}
	s.quietAsked = true
	if s.idle.Len() == 0 {
		return
	}
	text, cut, err := s.idle.Take()
	n := api.Note{Kind: api.NoteIdle, Session: s.Name, Output: plain.Text(text), OutputCut: cut}
	if err != nil {
		n.Err = err.Error()
	}
	r.Notes = append(r.Notes, n)
}

// lossNoteLocked says what the session's death lost.
func (s *Session) lossNoteLocked() api.Note {
	return api.Note{Kind: api.NoteLost, Session: s.Name, Death: s.death, Names: s.names, Cells: s.cells, Transcript: s.Transcript}
}

// kill ends the session's whole process tree and waits until the runtime
// is reported dead. by and cause say why, for the death note.
func (s *Session) kill(by, cause string, asker api.Client) error {
	s.mu.Lock()
	if s.state == Dead {
		s.mu.Unlock()
		// Dead already: its death may still be being written down.
		if !s.waitExited(5 * time.Second) {
			return fmt.Errorf("session %q: its death was not written down within 5s (see the daemon log)", s.Name)
		}
		return nil
	}
	s.dying = &api.Death{By: by, Cause: cause, At: time.Now()}
	s.killer = asker
	tree, p := s.p.Tree(), s.p
	s.mu.Unlock()
	// Journalled before the first signal: a daemon that ends in the
	// middle of it leaves the next one the cause (a kill asked for), not
	// a SIGKILL from nowhere.
	if err := s.m.state.SaveLive(s.m.life(s)); err != nil {
		log.Printf("session %s: cannot record that it is being ended: %v", s.Name, err)
	}
	var survivors []proc.Proc
	var err error
	if p.Where() != "" {
		// A kernel on a gateway: its holder asks the gateway to end it.
		if err := p.EndRemote(); err != nil {
			log.Printf("session %s: %v", s.Name, err)
		}
	} else {
		survivors, err = tree.Kill(killGrace)
	}
	if !s.waitExited(5 * time.Second) {
		// The runtime is gone but its holder did not say so (it is
		// stopped, or stuck): it goes too, and the session with it.
		s.mu.Lock()
		p := s.p
		s.mu.Unlock()
		p.Kill()
		// Its checkpoints ended with it only through its own end: a
		// holder killed leaves them stopped, so they go here.
		for _, c := range p.Checkpoints() {
			proc.Signal(c.Proc, syscall.SIGKILL)
		}
		if !s.waitExited(5 * time.Second) {
			return fmt.Errorf("session %q did not end after SIGKILL", s.Name)
		}
	}
	if err != nil {
		return fmt.Errorf("session %q: %d processes survived SIGKILL: %w", s.Name, len(survivors), err)
	}
	return nil
}

func (s *Session) waitExited(d time.Duration) bool {
	select {
	case <-s.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// deadError says how the session died, for calls other than exec.
func (s *Session) deadError(asker api.Client) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.lossNoteLocked()
	err := &Error{api.ErrorReply{Code: api.CodeDead, Error: lossMsg(n), Death: s.death, Next: []api.Action{{Do: api.DoExec, Session: s.Name}}}}
	if s.told.TellDeath(s.Name, s.Generation, asker) {
		err.Lost = &n
	}
	return err
}

// Info describes the session for listings.
func (s *Session) Info(withMemory bool) api.SessionInfo {
	var tb *proc.Table
	if withMemory {
		tb, _ = proc.ReadTable()
	}
	return s.info(true, withMemory, tb)
}

// glance is what the notes about other sessions read of s — its state,
// its running cell, whether it holds news — without what its holder and
// /proc would be asked (every exec tells of the others: it must cost
// little).
func (s *Session) glance() api.SessionInfo {
	return s.info(false, false, nil)
}

// info describes the session; full adds the runtime's process, its
// version and whether it is stopped; withMemory its memory, from the
// process table tb (read once for a whole listing).
func (s *Session) info(full, withMemory bool, tb *proc.Table) api.SessionInfo {
	s.mu.Lock()
	info := api.SessionInfo{
		Name: s.Name, Generation: s.Generation, Runtime: s.Runtime,
		Created: s.Created, LastActive: s.lastActive, Cells: s.cells,
		Cwd: s.Spawn.Cwd, Names: append([]string(nil), s.names[:min(len(s.names), api.ListedNames)]...),
		State: s.state, Death: s.death, Transcript: s.Transcript, Sandbox: s.Spawn.Sandbox,
	}
	if len(s.names) > api.ListedNames {
		info.NamesTotal = max(len(s.names), s.namesTotal)
	}
	if s.limit != nil && s.limit.Bytes > 0 { // a limit of its own, not the cap on all sessions alone
		info.MemoryLimit, info.LimitBy = s.limit.Bytes, s.limit.By
	}
	if s.p != nil {
		info.Enforced = s.p.Hello().Enforced
		info.Fork = forkOf(s.p.Hello().Forked, false)
	}
	if s.p != nil && full {
		info.PID = s.p.PID()
		info.Version = s.p.Version()
		info.Exe = s.p.Exe()
		info.Where = s.p.Where()
		info.Holder = s.p.Holder().PID
		if v := s.p.Hello().Polyrepl; v != version.Version {
			info.HolderVersion = v
		}
	}
	if c := s.cur; c != nil {
		if !c.finished() {
			info.Running = &api.Running{Cell: c.n, Started: c.started, Client: c.client, Code: firstLine(c.code)}
			if q := c.prompt; q != nil {
				// A listing tells many sessions: each prompt in brief.
				text, total := api.BoundPrompt(q.Text, q.Total, api.PromptBrief)
				info.Running.Input = &api.Prompt{Text: text, Password: q.Password, NoEOF: q.NoEOF, Total: total}
			}
		}
		info.Unread = c.unread()
	}
	info.Unread = info.Unread || s.idleUnread
	p := s.p
	state := s.state
	s.mu.Unlock()
	if withMemory && p != nil && state != Dead {
		info.Memory, info.MemoryShared = memoryOf(p, tb)
	}
	if full && p != nil && state != Dead {
		info.Stopped = tb.Stopped(p.Tree().Leader)
		info.Checkpoints = checkpointsOf(p, withMemory)
	}
	return info
}

func firstLine(code string) string {
	line, _, more := strings.Cut(strings.TrimSpace(code), "\n")
	if len(line) > 80 {
		line = string([]rune(line)[:min(len([]rune(line)), 77)]) + "…"
	} else if more {
		line += " …"
	}
	return line
}

// bytesIn says a size in MB, for a note.
func bytesIn(n int64) string { return fmt.Sprintf("%d MB", (n+1<<19)>>20) }
