package holder

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/limit"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// Handler receives a held session's events, as a driver.Handler does
// (in order, one at a time), and one more: the holder itself was lost,
// so no exit of the runtime will come.
type Handler interface {
	driver.Handler
	HolderLost(cause string)
	// LogCut: the cell's log file holds its output only up to byte at
	// (the disk refused the rest, why).
	LogCut(cell int, at int64, why string)
}

// holderGone is how long ending a holder waits for it to exit before it
// is killed.
const holderGone = 7 * time.Second

// Process is a session's runtime as the daemon sees it, through the
// holder that keeps it: what a driver.Process offers, plus what a holder
// keeps for the next daemon (each cell's record entry, what replies
// took), and its own end.
type Process struct {
	w      *wire
	hello  Hello
	socket string    // the holder's socket
	holder proc.Proc // the holder process
	// child is set when this daemon started the holder.
	child *Child

	h      Handler
	pumped chan struct{} // the events have ended

	leaving atomic.Bool // Detach or End: the connection's end is expected
	exited  atomic.Bool // the runtime's exit came

	mu      sync.Mutex
	spare   []proc.Proc // forks other sessions adopted: the hello's, then this daemon's
	nextID  uint64
	waiting map[uint64]chan replyMsg
	raw     chan []byte

	// Control messages nobody waits for go out from a goroutine of their
	// own, the latest of each kind, so a caller holding its session's
	// lock never waits on the holder.
	ctlMu   sync.Mutex
	ctlSend sync.Mutex
	ctlWake chan struct{}
	ctlRead map[string]readMark // by reader
	ctlIdle *idleEntry
}

func newProcess(w *wire, hello Hello, socket string, holder proc.Proc) *Process {
	return &Process{w: w, hello: hello, socket: socket, holder: holder, pumped: make(chan struct{}), spare: hello.Spare,
		waiting: map[uint64]chan replyMsg{}, ctlWake: make(chan struct{}, 1)}
}

// Hello is the session as the holder told it when this daemon took it.
// Its Leader and Checkpoints are as the holder last said (a rollback
// changes them).
func (p *Process) Hello() Hello {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hello
}

// PID is the runtime's pid.
func (p *Process) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hello.Leader.PID
}

// Tree is the runtime's process tree.
func (p *Process) Tree() proc.Tree {
	p.mu.Lock()
	defer p.mu.Unlock()
	return proc.Tree{Leader: p.hello.Leader, Cookie: p.hello.Cookie, Spare: slices.Clone(p.spare)}
}

// Version is the runtime's version.
func (p *Process) Version() string { return p.hello.Version }

// Exe is the runtime's executable.
func (p *Process) Exe() string { return p.hello.Exe }

// Note is what the runtime said when it started.
func (p *Process) Note() string { return p.hello.Note }

// Where is where a remote runtime runs (a kernel on a gateway), or ""
// for this machine.
func (p *Process) Where() string { return p.hello.Where }

// Socket is where the holder listens for a later daemon.
func (p *Process) Socket() string { return p.socket }

// Holder is the holder process.
func (p *Process) Holder() proc.Proc { return p.holder }

// Start passes the holder's events to h from now on, beginning with
// those it kept for this daemon.
func (p *Process) Start(h Handler) {
	p.h = h
	go p.pump()
	go p.control()
}

// Run sends a cell to the runtime, with what a later daemon needs to take
// it up.
func (p *Process) Run(meta CellMeta, code string) error {
	b, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	// How far readers read the cell before need not be said any more:
	// the holder keeps the cell in flight only.
	p.ctlMu.Lock()
	for k, m := range p.ctlRead {
		if m.Cell < meta.Cell {
			delete(p.ctlRead, k)
		}
	}
	p.ctlMu.Unlock()
	if err := p.w.send(frameRun, b, []byte{'\n'}, []byte(code)); err != nil {
		return fmt.Errorf("cannot send the cell to the session's holder (pid %d): %w", p.holder.PID, err)
	}
	return nil
}

// Interrupt asks the running cell to stop, as the runtime's driver does
// it (attempt 0, 1, 2… escalate).
func (p *Process) Interrupt(attempt int) error {
	return p.remote().Interrupt(InterruptArgs{Attempt: attempt})
}

// Answer implements driver.Answerer: the holder gives the cell's
// question its answer.
func (p *Process) Answer(text string, eof bool) error {
	return p.remote().Answer(AnswerArgs{Text: text, EOF: eof})
}

// AnswerShown gives the cell's question its answer, the holder writing
// echo, what the cell's output shows of it, to the cell's log first.
func (p *Process) AnswerShown(text string, eof bool, echo string) error {
	return p.remote().Answer(AnswerArgs{Text: text, EOF: eof, Echo: echo})
}

// EndRemote asks the holder to end a runtime that runs elsewhere (a
// kernel on a gateway); its exit comes as any runtime's.
func (p *Process) EndRemote() error { return p.remote().EndRemote(struct{}{}) }

// Sync returns once every event the holder sent before it has been
// handled.
func (p *Process) Sync() error { return p.remote().Sync(struct{}{}) }

// SetLimit tells the holder the memory limit the daemon set on the
// runtime, for the daemons after this one.
func (p *Process) SetLimit(l *limit.Held) error {
	return p.remote().SetLimit(*l)
}

// MarkRead tells the holder how far reader (a client's key) has read
// cell's output, and whether it was given the result, so that a daemon
// taking the session up goes on from there. It never waits.
func (p *Process) MarkRead(cell int, reader string, at int64, final bool) {
	p.ctlMu.Lock()
	if p.ctlRead == nil {
		p.ctlRead = map[string]readMark{}
	}
	p.ctlRead[reader] = readMark{Cell: cell, Reader: reader, At: at, Final: final}
	p.ctlMu.Unlock()
	p.wakeControl()
}

// IdleEntry tells the holder which record entry holds the output printed
// after cell after finished. It never waits.
func (p *Process) IdleEntry(after, seq int) {
	p.ctlMu.Lock()
	p.ctlIdle = &idleEntry{After: after, Seq: seq}
	p.ctlMu.Unlock()
	p.wakeControl()
}

func (p *Process) wakeControl() {
	select {
	case p.ctlWake <- struct{}{}:
	default:
	}
}

// controlLag is how long a control message waits before it is sent: a
// cell that follows within it makes what replies took of the one before
// moot (Run lets go of it all), so back-to-back cells cost the holder
// and the daemon no message, and no wake-up, more than the cell's own.
const controlLag = 2 * time.Millisecond

// control sends the control messages nobody waits for, until the events
// end.
func (p *Process) control() {
	for {
		select {
		case <-p.ctlWake:
		case <-p.pumped:
			return
		}
		select {
		case <-time.After(controlLag):
		case <-p.pumped:
			return
		}
		p.sendControl()
	}
}

// sendControl sends the control messages waiting; one at a time, so that
// Detach, which sends what is left, knows all was sent before it closes.
func (p *Process) sendControl() {
	p.ctlSend.Lock()
	defer p.ctlSend.Unlock()
	p.ctlMu.Lock()
	e := p.ctlIdle
	var marks []readMark
	for _, m := range p.ctlRead {
		marks = append(marks, m)
	}
	p.ctlRead, p.ctlIdle = nil, nil
	p.ctlMu.Unlock()
	if e != nil {
		p.remote().SetIdleEntry(*e)
	}
	if marks != nil {
		p.remote().MarkRead(marks)
	}
}

// remote is the holder's Service as this daemon calls it.
func (p *Process) remote() Service { return remote{p} }

// call sends the Service's operation name with its arguments and, if it
// is answered, waits for the reply: a refusal is an *Error with its
// Code.
func (p *Process) call(name string, args any) error {
	_, err := p.callReply(name, args)
	return err
}

// callReply is call, returning the reply's data.
func (p *Process) callReply(name string, args any) (json.RawMessage, error) {
	o := ops[name]
	b, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	msg := callMsg{Op: name, Args: b}
	var ch chan replyMsg
	if o.answered {
		ch = make(chan replyMsg, 1)
		p.mu.Lock()
		p.nextID++
		msg.ID = p.nextID
		p.waiting[msg.ID] = ch
		p.mu.Unlock()
	}
	if err := p.w.sendJSON(frameCall, msg); err != nil {
		if ch != nil {
			p.mu.Lock()
			delete(p.waiting, msg.ID)
			p.mu.Unlock()
		}
		return nil, &Error{Code: CodeGone, Msg: fmt.Sprintf("the session's holder (pid %d) cannot be reached: %v", p.holder.PID, err)}
	}
	if ch == nil {
		return nil, nil
	}
	select {
	case r := <-ch:
		if r.Code != "" {
			return nil, &Error{Code: r.Code, Msg: r.Msg}
		}
		return r.Data, nil
	case <-time.After(10 * time.Second):
		p.mu.Lock()
		delete(p.waiting, msg.ID)
		p.mu.Unlock()
		return nil, &Error{Code: CodeSilent, Msg: fmt.Sprintf("the session's holder (pid %d) did not answer within 10s", p.holder.PID)}
	}
}

// callInto is callReply, its data read into v.
func (p *Process) callInto(name string, args, v any) error {
	b, err := p.callReply(name, args)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &Error{Code: CodeFailed, Msg: fmt.Sprintf("the holder's %s answer cannot be read: %v", name, err)}
	}
	return nil
}

// remote calls the holder's Service over its connection.
type remote struct{ p *Process }

var _ Service = remote{}

func (r remote) Interrupt(a InterruptArgs) error { return r.p.call("interrupt", a) }
func (r remote) Answer(a AnswerArgs) error       { return r.p.call("answer", a) }
func (r remote) EndRemote(a struct{}) error      { return r.p.call("end-remote", a) }
func (r remote) Sync(a struct{}) error           { return r.p.call("sync", a) }
func (r remote) AttachRaw(a struct{}) error      { return r.p.call("attach-raw", a) }
func (r remote) DetachRaw(a struct{}) error      { return r.p.call("detach-raw", a) }
func (r remote) SetLimit(a limit.Held) error     { return r.p.call("set-limit", a) }
func (r remote) MarkRead(a []readMark) error     { return r.p.call("mark-read", a) }
func (r remote) SetIdleEntry(a idleEntry) error  { return r.p.call("idle-entry", a) }
func (r remote) End(a struct{}) error            { return r.p.call("end", a) }

// Raw attaches a person's terminal to the runtime's, for a runtime
// hosted on one (see driver.RawTerminal).
func (p *Process) Raw() (in io.Writer, out <-chan []byte, detach func(), err error) {
	ch := make(chan []byte, 256)
	p.mu.Lock()
	if p.raw != nil {
		p.mu.Unlock()
		return nil, nil, nil, fmt.Errorf("someone is already attached to this session's terminal")
	}
	p.raw = ch
	p.mu.Unlock()
	if err := p.remote().AttachRaw(struct{}{}); err != nil {
		p.mu.Lock()
		if p.raw == ch {
			p.raw = nil
		}
		p.mu.Unlock()
		return nil, nil, nil, err
	}
	var once sync.Once
	detach = func() {
		once.Do(func() {
			p.remote().DetachRaw(struct{}{})
			p.endRaw(ch)
		})
	}
	return rawInput{p}, ch, detach, nil
}

// endRaw closes the person's channel ch, if it is still the one.
func (p *Process) endRaw(ch chan []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.raw == ch && ch != nil {
		close(ch)
		p.raw = nil
	}
}

type rawInput struct{ p *Process }

func (r rawInput) Write(b []byte) (int, error) {
	if err := r.p.w.send(frameRawIn, b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// pump passes the holder's events to the handler, in order, until the
// connection ends.
func (p *Process) pump() {
	defer close(p.pumped)
	for {
		typ, b, err := p.w.read()
		if err != nil {
			p.lost(err)
			return
		}
		switch typ {
		case frameOutput:
			p.h.Output(b)
		case frameDone:
			var r driver.Result
			if err := json.Unmarshal(b, &r); err != nil {
				r = driver.Result{Status: "error"}
			}
			p.h.CellDone(r)
		case frameLogCut:
			var c logCut
			if json.Unmarshal(b, &c) == nil {
				p.h.LogCut(c.Cell, c.At, api.Clip(c.Err, api.RefusalLimit, "error"))
			}
		case frameAsk:
			var q driver.Prompt
			if a, ok := p.h.(driver.Asker); ok && json.Unmarshal(b, &q) == nil {
				a.InputAsked(q)
			}
		case frameRuntime:
			var rt Runtime
			if json.Unmarshal(b, &rt) == nil {
				p.runtimeChanged(rt)
			}
		case frameExited:
			var x Exit
			json.Unmarshal(b, &x)
			p.exited.Store(true)
			p.h.Exited(x.Driver())
		case frameReply:
			var r replyMsg
			if json.Unmarshal(b, &r) == nil {
				r.Msg = api.Clip(r.Msg, api.RefusalLimit, "error")
				p.mu.Lock()
				ch := p.waiting[r.ID]
				delete(p.waiting, r.ID)
				p.mu.Unlock()
				if ch != nil {
					ch <- r
				}
			}
		case frameRawOut:
			p.mu.Lock()
			if p.raw != nil {
				select {
				case p.raw <- bytes.Clone(b):
				default: // a person's terminal that does not keep up misses output, never the session
				}
			}
			p.mu.Unlock()
		case frameRawEnd:
			p.mu.Lock()
			ch := p.raw
			p.mu.Unlock()
			p.endRaw(ch)
		}
	}
}

// lost ends the events: every call waiting is answered, a person
// attached is let go, and, unless this daemon let the holder go or the
// runtime's exit came first, the handler hears that the holder was lost.
func (p *Process) lost(err error) {
	p.mu.Lock()
	for id, ch := range p.waiting {
		ch <- replyMsg{ID: id, Code: CodeGone, Msg: fmt.Sprintf("the session's holder (pid %d) went away", p.holder.PID)}
		delete(p.waiting, id)
	}
	ch := p.raw
	p.mu.Unlock()
	p.endRaw(ch)
	if p.leaving.Load() || p.exited.Load() {
		return
	}
	p.h.HolderLost(p.lostCause(err))
}

// lostCause says how the holder ended, as far as this daemon can know:
// its exit status if it is the holder's parent.
func (p *Process) lostCause(err error) string {
	if p.child != nil {
		select {
		case <-p.child.Done:
			return fmt.Sprintf("its holder process (pid %d) %s", p.holder.PID, driver.ExitOf(p.child.Err()).Describe())
		case <-time.After(time.Second):
		}
	}
	if !proc.Alive(p.holder) {
		return fmt.Sprintf("its holder process (pid %d) ended", p.holder.PID)
	}
	// The transport's own words ("read unix …: connection reset by
	// peer") go to the log, not into the death every reply tells.
	log.Printf("session %s: the connection to its holder (pid %d) broke: %v", p.hello.Name, p.holder.PID, err)
	return fmt.Sprintf("the connection to its holder process (pid %d) broke while the holder still ran (the daemon log has the error)", p.holder.PID)
}

// Detach lets the holder go, keeping the session: the daemon is leaving
// and the next one takes it up.
func (p *Process) Detach() {
	p.leaving.Store(true)
	p.sendControl() // what replies took, so the next daemon does not send it again
	p.w.close()
}

// End ends the holder, and the runtime with it if it still lives (the
// daemon has written the death down, or will not keep the session), and
// checks that the holder is gone: one that does not leave within a few
// seconds is killed.
func (p *Process) End() error {
	p.leaving.Store(true)
	wait := holderGone
	if p.remote().End(struct{}{}) != nil {
		// The connection is gone (the holder dropped it, say for a frame
		// it could not send): a holder that cannot hear End is not waited
		// for, or a daemon stopping meanwhile would leave it behind.
		wait = 0
	}
	gone := p.gone(wait)
	p.w.close()
	// A holder removes its socket as it ends; one that was killed left it.
	defer os.Remove(p.socket)
	if gone {
		return nil
	}
	proc.Signal(p.holder, syscall.SIGKILL)
	if !p.gone(2 * time.Second) {
		return fmt.Errorf("the session's holder (pid %d) did not end, even after SIGKILL", p.holder.PID)
	}
	if wait == 0 {
		return nil // it could not be told: killed, as it had to be
	}
	return fmt.Errorf("the session's holder (pid %d) did not end within %s and was killed", p.holder.PID, holderGone)
}

// Kill kills the holder outright, for a holder that does not report the
// runtime's end (it is stopped, or stuck): its connection ends, and the
// handler hears that the holder was lost.
func (p *Process) Kill() error {
	return proc.Signal(p.holder, syscall.SIGKILL)
}

// gone waits up to d for the holder to exit (and, if this daemon is
// its parent, to be reaped).
func (p *Process) gone(d time.Duration) bool {
	if p.child != nil {
		select {
		case <-p.child.Done:
			return true
		case <-time.After(d):
			return false
		}
	}
	for deadline := time.Now().Add(d); ; time.Sleep(5 * time.Millisecond) {
		if !proc.Alive(p.holder) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// Wait waits until the events have ended (for tests and the daemon's
// stop).
func (p *Process) Wait(ctx context.Context) error {
	select {
	case <-p.pumped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
