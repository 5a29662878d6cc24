package holder

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/limit"
	"github.com/polyrepl/polyrepl/internal/sandbox"
	"github.com/polyrepl/polyrepl/internal/version"
)

// endGrace is how long a runtime the holder is told to end gets between
// SIGTERM and SIGKILL.
const endGrace = time.Second

// server is the holder's side: it runs the runtime through its driver
// (it is the driver's Handler), keeps every event a daemon has not yet
// taken for good, and serves one daemon at a time. A daemon that goes
// away costs nothing but its connection: what the runtime prints
// meanwhile is kept, and the next daemon is sent it all again.
type server struct {
	sp Brief
	ln *net.UnixListener
	// rt is the runtime now: one owner (start, then a rollback swaps
	// it), read anywhere through run().
	rt   atomic.Pointer[live]
	spec driver.Spec   // how the runtime was started, for a rollback's adoption
	drv  driver.Driver // its driver
	hi   Hello         // who, what, where; Leader changes with a rollback (under mu)
	end  chan struct{}

	// busy is when the holder last did something, in Unix nanoseconds,
	// and active says it did, for trimWhenQuiet.
	busy   atomic.Int64
	active chan struct{}

	mu    sync.Mutex
	w     *wire // the daemon connected now, or nil
	lim   *limit.Held
	cells int
	names []string
	last  time.Time
	cur   *heldCell // the cell in flight, or the last one
	// idle is the output printed after cell idleAfter finished (-1: a
	// cell runs, so there is none), recorded as entry idleSeq.
	idle      segment
	idleAfter int
	idleSeq   int
	exit      *Exit
	look      *lastLook // the last look at the session's names (vars.go)
	raw       *rawAttached
	ending    bool

	// private are a sandboxed session's own places, removed when it ends.
	private *sandbox.Private

	// ckpts are the session's checkpoints, oldest first (checkpoint.go);
	// ckMu is held by a checkpoint or a rollback from start to end.
	// oldMu is held while a runtime rolled back from ends, after the
	// rollback answered: the next checkpoint or rollback waits for it
	// (the checkpoints run meanwhile), a cell does not.
	ckMu  sync.Mutex
	oldMu sync.Mutex
	ckpts []*checkpoint
}

// heldCell is a cell as the holder keeps it: its state, its output
// from its start, its result.
type heldCell struct {
	CellState
	out    segment
	result *driver.Result
}

// rawAttached is a person's terminal attached to the runtime's.
type rawAttached struct {
	in     io.Writer
	detach func()
}

func newServer(sp Brief) *server {
	return &server{sp: sp, end: make(chan struct{}), active: make(chan struct{}, 1),
		idle: idleLog(sp.SpoolDir, spoolPattern(sp.Generation))}
}

// spoolPattern names a holder's spool files, so a person can tell whose
// they are.
func spoolPattern(gen string) string { return "holder-" + gen + "-*.spool" }

// RemoveSpool removes the spool files a holder of generation gen left in
// dir, for a holder that was killed before it could.
func RemoveSpool(dir, gen string) {
	left, _ := filepath.Glob(filepath.Join(dir, spoolPattern(gen)))
	for _, f := range left {
		os.Remove(f)
	}
}

// start listens for later daemons, starts the runtime, and answers the
// daemon that asked (w) with the hello, or with why it failed.
func (s *server) start(ctx context.Context, w *wire) error {
	ln, err := listen(s.sp.Socket)
	if err != nil {
		w.sendJSON(frameFailed, failure{Err: err.Error()})
		return err
	}
	s.ln = ln
	spec := driver.Spec{
		Exe: s.sp.Spawn.Exe, Cwd: s.sp.Spawn.Cwd, Env: s.sp.Spawn.Env, Cookie: s.sp.Cookie,
		RuntimeDir: s.sp.RuntimeDir, SpoolDir: s.sp.SpoolDir, ValueLimit: s.sp.ValueLimit, Project: s.sp.Spawn.Project,
		Gateway: s.sp.Spawn.Gateway, GatewayHTTP: s.sp.Spawn.GatewayHTTP,
	}
	drv, err := driver.Lookup(s.sp.Spawn.Runtime)
	var enforced *api.Enforced
	bySandbox := false
	if err == nil && s.sp.Fork == nil {
		enforced, err = s.confine(&spec)
		bySandbox = err != nil
	}
	var forked *ForkAnswer
	switch {
	case err != nil:
	case s.sp.Fork != nil:
		// The copy inherited the parent's confinement, and goes on
		// using its private places: kept while this holder lives.
		enforced, spec.Sandbox, spec.RuntimeDir = s.sp.Fork.Enforced, nil, s.sp.Fork.Dir
		if s.private, err = sandbox.Share(sandbox.TempParent(s.stateDir()), s.sp.Fork.Dir, s.sp.Generation); err != nil {
			break
		}
		var p driver.Process
		h := newRelay(s, false)
		if p, forked, err = s.adoptFork(ctx, w, drv, spec, h); err == nil {
			s.rt.Store(&live{p: p, h: h})
		}
	default:
		h := newRelay(s, false)
		var p driver.Process
		if p, err = drv.Start(ctx, spec, h); err == nil {
			s.rt.Store(&live{p: p, h: h})
		}
	}
	if err != nil {
		s.unconfine()
		ln.Close()
		w.sendJSON(frameFailed, failure{Err: err.Error(), Sandbox: bySandbox})
		return err
	}
	s.spec, s.drv = spec, drv
	tree := s.runtime().Tree()
	s.hi = Hello{
		Proto: Proto, Polyrepl: version.Version, HolderPID: os.Getpid(),
		Name: s.sp.Name, Generation: s.sp.Generation, Runtime: s.sp.Spawn.Runtime,
		Cookie: tree.Cookie, Leader: tree.Leader, Created: s.sp.Created, Spawn: s.sp.Spawn,
		Version: s.runtime().Version(), Exe: s.runtime().Exe(), Note: s.runtime().Note(), Facts: drv.Info(), Enforced: enforced,
		ForkDir: spec.RuntimeDir, Forked: forked,
	}
	if r, ok := s.runtime().(driver.Remote); ok {
		s.hi.Where = r.Where()
	}
	s.mu.Lock()
	s.last = time.Now()
	if forked != nil {
		s.cells = forked.Cell // a fork's cells go on from its parent's
	}
	err = s.attachLocked(w)
	s.mu.Unlock()
	if err != nil {
		// The daemon that asked is gone already: the session is kept for
		// the next one, as after any daemon's end.
		log.Printf("session %s: the daemon that started it went away: %v", s.sp.Name, err)
	}
	go s.accept()
	return nil
}

// attachLocked gives daemon w the session: the hello, then every event
// not let go of, in order; from then on events go to it as they come.
func (s *server) attachLocked(w *wire) error {
	hi := s.hi
	hi.Limit, hi.Cells, hi.Names, hi.LastActive = s.lim, s.cells, s.names, s.last
	if c := s.cur; c != nil {
		cs := c.stateLocked()
		hi.Cur = &cs
	}
	hi.IdleAfter, hi.IdleSeq, hi.Exited = s.idleAfter, s.idleSeq, s.exit
	hi.Spare = s.spareLocked(s.runtime().Tree().Spare)
	hi.Checkpoints = s.checkpointsLocked()
	err := w.sendJSON(frameHello, hi)
	out := func(b []byte) error { return w.send(frameOutput, b) }
	if c := s.cur; err == nil && c != nil {
		err = c.out.replay(out)
		if err == nil && c.result != nil {
			r := *c.result
			if c.out.lost > 0 {
				// A daemon that was there had every byte; this one is told
				// the cell's output has a gap, and why.
				r.Note = strings.TrimPrefix(r.Note+"; "+c.out.lostSaid(), "; ")
			}
			err = w.sendJSON(frameDone, &r)
		}
	}
	if err == nil {
		err = s.idle.replay(out)
	}
	if err == nil && s.exit != nil {
		err = w.sendJSON(frameExited, s.exit)
	}
	if err != nil {
		w.close()
		return err
	}
	s.w = w
	go s.serve(w)
	return nil
}

// dropLocked lets go of the daemon connected now: a person attached to
// the terminal through it is detached, and events are kept until the
// next daemon comes.
func (s *server) dropLocked(why error, closeConn bool) {
	if s.w == nil {
		return
	}
	if closeConn {
		s.w.close()
	}
	s.w = nil
	if s.raw != nil {
		s.raw.detach()
		s.raw = nil
	}
	if !s.ending {
		log.Printf("session %s: its daemon went away (%v); keeping what the runtime prints for the next one", s.sp.Name, why)
	}
}

// sendLocked sends a frame to the daemon, if one is connected; one that
// cannot take it is let go.
func (s *server) sendLocked(typ byte, parts ...[]byte) {
	if s.w == nil {
		return
	}
	if err := s.w.send(typ, parts...); err != nil {
		s.lostLocked(err)
	}
}

// lostLocked lets go of a daemon a send to failed: it went away. Frames
// it sent before it went (what its replies took of the cell) may still
// wait unread, so only writing stops here: serve reads them to the end,
// and closes the connection then.
func (s *server) lostLocked(err error) {
	s.w.closeWrite()
	s.dropLocked(err, false)
}

func (s *server) sendJSONLocked(typ byte, v any) {
	if s.w == nil {
		return
	}
	if err := s.w.sendJSON(typ, v); err != nil {
		s.lostLocked(err)
	}
}

// Output implements driver.Handler: kept in the cell's stretch of
// output, or in the one between cells, and passed on.
func (s *server) Output(p []byte) {
	s.markBusy()
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cur; c != nil && !c.Done && s.exit == nil {
		failed := c.out.err != nil
		c.out.write(p)
		c.Bytes += int64(len(p))
		if !failed && c.out.err != nil {
			// Said before the output it concerns: the daemon reads no
			// further than this in the file.
			s.sendJSONLocked(frameLogCut, logCut{Cell: c.Cell, At: c.out.readable(), Err: c.out.err.Error()})
		}
	} else {
		s.idle.write(p)
	}
	// A kernel can send one stream message of many megabytes (ipykernel
	// gathers a cell's writes between flushes): frames stay small.
	for len(p) > outputChunk {
		s.sendLocked(frameOutput, p[:outputChunk])
		p = p[outputChunk:]
	}
	s.sendLocked(frameOutput, p)
}

// InputAsked implements driver.Asker: the cell waits for an answer,
// which a daemon gives (Process.Answer); a daemon that takes the session
// up later finds the question in the cell's state.
func (s *server) InputAsked(p driver.Prompt) {
	s.markBusy()
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cur; c != nil && c.Cell == p.Cell && !c.Done {
		c.Prompt = &p
	}
	s.sendJSONLocked(frameAsk, p)
}

// answer gives the cell's question its answer.
func (s *server) answer(text string, eof bool, echo string) error {
	a, ok := s.runtime().(driver.Answerer)
	if !ok {
		return noInput(s.sp.Spawn.Runtime)
	}
	if echo != "" {
		// In the cell's log, the one copy of its output, before what the
		// cell prints once answered.
		s.Output([]byte(echo))
	}
	if err := a.Answer(text, eof); err != nil {
		return err
	}
	s.mu.Lock()
	if s.cur != nil {
		s.cur.Prompt = nil
	}
	s.mu.Unlock()
	return nil
}

// CellDone implements driver.Handler.
func (s *server) CellDone(r driver.Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.At = time.Now()
	s.keepLook(&r)
	if c := s.cur; c != nil && c.Cell == r.Cell && !c.Done {
		c.Done, c.Status, c.Ended, c.Prompt = true, r.Status, r.At, nil
		c.result = &r
		s.last = c.Ended
		if r.Names != nil {
			s.names = r.Names
		}
		s.idle.free()
		s.idleAfter, s.idleSeq = c.Cell, 0
	}
	s.sendJSONLocked(frameDone, r)
}

// Exited implements driver.Handler: the exit is kept until a daemon
// ends the holder, having written the death down.
func (s *server) Exited(e driver.Exit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exit = exitOf(e)
	s.sendJSONLocked(frameExited, s.exit)
}

// serve reads what daemon w asks, until its connection ends.
func (s *server) serve(w *wire) {
	for {
		typ, b, err := w.read()
		s.markBusy()
		if err != nil {
			s.mu.Lock()
			if s.w == w {
				s.dropLocked(err, true)
			} else {
				w.close() // dropped already as a send failed: read to the end
			}
			s.mu.Unlock()
			return
		}
		switch typ {
		case frameRun:
			s.run(b)
		case frameRawIn:
			s.mu.Lock()
			raw := s.raw
			s.mu.Unlock()
			if raw != nil {
				raw.in.Write(b)
			}
		case frameCall:
			if s.call(w, b) {
				return
			}
		default:
			log.Printf("session %s: a daemon sent a frame of unknown type %q; ignored", s.sp.Name, typ)
		}
	}
}

// call runs one of the Service's operations a daemon asked for, and
// answers it if it is answered; it reports whether the holder ends.
func (s *server) call(w *wire, b []byte) (end bool) {
	var c callMsg
	if err := json.Unmarshal(b, &c); err != nil {
		log.Printf("session %s: a daemon sent a call the holder cannot read; ignored", s.sp.Name)
		return false
	}
	o, ok := ops[c.Op]
	if !ok {
		log.Printf("session %s: a daemon asked for %.100q, which this holder does not know", s.sp.Name, c.Op)
		if c.ID != 0 {
			w.sendJSON(frameReply, replyMsg{ID: c.ID, Code: CodeUnknown, Msg: fmt.Sprintf("the session's holder (polyrepl %s) does not know the operation %.100q", version.Version, c.Op)})
		}
		return false
	}
	run := func() {
		data, err := o.run(service{s, w}, c.Args)
		if c.ID != 0 {
			r := replyMsg{ID: c.ID}
			if err != nil {
				r.Code, r.Msg = codeOf(err), err.Error()
			} else if data != nil {
				r.Data, _ = json.Marshal(data)
			}
			w.sendJSON(frameReply, r)
		}
	}
	if o.alone {
		go run()
		return false
	}
	run()
	return c.Op == "end"
}

// run starts a cell: what was kept of the last one, and of the output
// between cells, is let go (the daemon has them for good once it runs
// the next cell), and the new cell's stretch of output begins.
func (s *server) run(b []byte) {
	line, code, ok := bytes.Cut(b, []byte{'\n'})
	var meta CellMeta
	if !ok || json.Unmarshal(line, &meta) != nil {
		log.Printf("session %s: a daemon sent a cell the holder cannot read; ignored", s.sp.Name)
		return
	}
	// A cell sent while a checkpoint or a rollback is taken waits for it
	// (and runs on the runtime it leaves).
	s.ckMu.Lock()
	defer s.ckMu.Unlock()
	s.mu.Lock()
	if c := s.cur; c != nil {
		c.out.free()
	}
	s.idle.free()
	s.idleAfter, s.idleSeq = -1, 0
	s.cur = &heldCell{CellState: CellState{CellMeta: meta}, out: cellLog(s.sp.SpoolDir, spoolPattern(s.sp.Generation), meta.Whole)}
	s.cells, s.last = meta.Cell, meta.Started
	s.mu.Unlock()
	// Not under the lock: the runtime may print (to the handler) before
	// it has read the whole cell.
	if err := s.runtime().Run(meta.Cell, string(code)); err != nil {
		log.Printf("session %s: cell %d: %v", s.sp.Name, meta.Cell, err)
	}
}

// read notes how far readers have read the cell, for the daemons after
// this one; the cell's log stays whole whoever read it.
func (s *server) read(ms []readMark) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cur
	for _, m := range ms {
		if c == nil || c.Cell != m.Cell || len(m.Reader) > MaxReaderKey {
			continue
		}
		if c.Read == nil {
			c.Read, c.Final = map[string]int64{}, map[string]bool{}
		}
		if _, ok := c.Read[m.Reader]; !ok && len(c.Read) >= MaxReaders {
			continue
		}
		c.Read[m.Reader] = max(c.Read[m.Reader], min(m.At, c.Bytes))
		if m.Final && c.Done {
			c.Final[m.Reader] = true
		}
	}
}

// MaxReaderKey bounds a reader's key as the holder keeps it and a daemon
// takes it back (a client's label, how it comes and its connection, each
// bounded by the daemon).
const MaxReaderKey = 4096

// stateLocked is the cell's state as a hello tells it.
func (c *heldCell) stateLocked() CellState {
	cs := c.CellState
	cs.Read, cs.Final = maps.Clone(c.Read), maps.Clone(c.Final)
	cs.InFile = c.out.spilled()
	if c.out.err != nil {
		cs.Kept, cs.LogErr = c.out.readable(), c.out.err.Error()
	}
	return cs
}

// attachRaw attaches the daemon's person to the runtime's terminal.
func (s *server) attachRaw(w *wire) error {
	rt, ok := s.runtime().(driver.RawTerminal)
	if !ok {
		return ErrNoTerminal
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.raw != nil {
		return errAttached
	}
	in, out, detach, err := rt.Raw()
	if err != nil {
		return err
	}
	s.raw = &rawAttached{in: in, detach: detach}
	go func() {
		for b := range out {
			if w.send(frameRawOut, b) != nil {
				detach()
			}
		}
		w.send(frameRawEnd)
	}()
	return nil
}

// endRemote ends a runtime that runs elsewhere (a kernel on a gateway),
// which no signal here can reach; its end is reported as any runtime's.
func (s *server) endRemote() error {
	e, ok := s.runtime().(driver.Ender)
	if !ok {
		return &Error{Code: CodeNotRemote, Msg: "the session's runtime is not remote: end its process tree"}
	}
	return e.End(endGrace)
}

// finish ends the session: the runtime's tree if it still lives, then
// the holder. A daemon asks once it has written the death down, or to
// end a session it will not keep.
func (s *server) finish() {
	s.mu.Lock()
	s.ending = true
	exited := s.exit != nil
	s.mu.Unlock()
	s.endCheckpoints()
	if p := s.runtime(); !exited && p != nil {
		if e, ok := p.(driver.Ender); ok {
			if err := e.End(endGrace); err != nil {
				log.Printf("session %s: %v", s.sp.Name, err)
			}
		} else if survivors, err := s.treeOf(p).Kill(endGrace); err != nil {
			log.Printf("session %s: %d processes survived: %v", s.sp.Name, len(survivors), err)
		}
		// The driver reaps it and reports the exit; wait for that, so the
		// holder never exits before its child is reaped.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			s.mu.Lock()
			exited = s.exit != nil
			s.mu.Unlock()
			if exited {
				break
			}
		}
	}
	s.mu.Lock()
	if s.w != nil {
		s.w.close()
		s.w = nil
	}
	if s.cur != nil {
		s.cur.out.free()
	}
	s.idle.free()
	s.mu.Unlock()
	if s.ln != nil {
		s.ln.Close() // and its socket file with it
	}
	s.unconfine()
	close(s.end)
}

// quietFor is how long a holder waits without output or a call before it
// gives back the memory its work used (see trim).
const quietFor = 5 * time.Second

// markBusy notes that the holder did something.
func (s *server) markBusy() {
	s.busy.Store(time.Now().UnixNano())
	select {
	case s.active <- struct{}{}:
	default:
	}
}

// trimWhenQuiet gives back, each time the holder has been quiet for
// quietFor after doing something, the heap it no longer uses and the
// pages of code it touched: an idle session's holder costs little, and
// wakes for nothing while it is idle.
func (s *server) trimWhenQuiet() {
	s.markBusy() // its start
	for {
		select {
		case <-s.end:
			return
		case <-s.active:
		}
		for {
			wait := quietFor - time.Since(time.Unix(0, s.busy.Load()))
			if wait <= 0 {
				break
			}
			select {
			case <-s.end:
				return
			case <-time.After(wait):
			}
		}
		// What came while it waited is older than quietFor now.
		select {
		case <-s.active:
		default:
		}
		debug.FreeOSMemory()
		trim()
	}
}

// service is the holder's Service to the daemon connected on w.
type service struct {
	s *server
	w *wire
}

func (v service) Interrupt(a InterruptArgs) error { return v.s.runtime().Interrupt(a.Attempt) }

func (v service) Answer(a AnswerArgs) error { return v.s.answer(a.Text, a.EOF, a.Echo) }

func (v service) EndRemote(struct{}) error { return v.s.endRemote() }

func (v service) Sync(struct{}) error {
	v.s.mu.Lock() // after every event the holder has sent
	v.s.mu.Unlock()
	return nil
}

func (v service) AttachRaw(struct{}) error { return v.s.attachRaw(v.w) }

func (v service) DetachRaw(struct{}) error {
	v.s.mu.Lock()
	defer v.s.mu.Unlock()
	if v.s.raw != nil {
		v.s.raw.detach()
		v.s.raw = nil
	}
	return nil
}

func (v service) SetLimit(l limit.Held) error {
	v.s.mu.Lock()
	v.s.lim = &l
	v.s.mu.Unlock()
	return nil
}

func (v service) MarkRead(ms []readMark) error {
	v.s.read(ms)
	return nil
}

func (v service) SetIdleEntry(e idleEntry) error {
	v.s.mu.Lock()
	if e.After == v.s.idleAfter {
		v.s.idleSeq = e.Seq
	}
	v.s.mu.Unlock()
	return nil
}

func (v service) End(struct{}) error {
	v.s.finish()
	return nil
}
