package jupyter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/plain"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// The channels a kernel speaks on, by the names the protocol and the
// channels WebSocket give them.
const (
	shellCh   = "shell"
	iopubCh   = "iopub"
	stdinCh   = "stdin"
	controlCh = "control"
)

// lateWait bounds how long a cell whose reply came waits for the end of
// its output on iopub, counted from the last message for it there. The
// protocol promises that end; iopub lags the shell channel by as long as
// a kernel takes to pack a flood's next message (seconds for tens of
// megabytes; a gateway relaying a 100 MiB flood on a loaded 2-core
// machine went quiet for more than 10 s, and the cell was reported done
// before its output ended, the rest told to the next cell), so the wait
// is long, and only for a lost message.
const lateWait = 30 * time.Second

// richLimit bounds the rich outputs (figures, images) kept per cell, as
// the Python worker's does; more are counted.
const richLimit = 20

// transport is how a kernel's messages travel: ZeroMQ to a kernel on this
// machine, or a gateway's channels WebSocket. It hands what it receives
// to the kernel's inbox, and says on lost why the connection ended.
type transport interface {
	send(ch string, m *Msg) error
	// interrupt asks the kernel to interrupt its cell the way it takes
	// interrupts; attempt counts the calls for one cell, from 0.
	interrupt(attempt int) error
	// close ends the connection; the kernel itself is ended by whoever
	// started it.
	close()
}

// inbound is one message received on channel ch; cost is what it holds
// of the kernel's budget until the loop has taken it.
type inbound struct {
	ch   string
	m    *Msg
	cost int64
	note string // no message: what the transport dropped, for the cell
}

// pass hands a message to the loop once the budget has room for it; false
// when the kernel's loop has ended (the message is let go).
func (k *kernel) pass(in inbound) bool {
	if !k.budget.acquire(in.cost, k.done) {
		in.m.release()
		return false
	}
	select {
	case k.in <- in:
		return true
	case <-k.done:
		k.taken(in)
		return false
	}
}

// taken lets go of a message the loop is done with.
func (k *kernel) taken(in inbound) {
	in.m.release()
	k.budget.release(in.cost)
}

// kernel is a running kernel as a driver.Process: the cell in flight and
// what it produced, whatever transport carries its messages. One
// goroutine (loop) reads everything the kernel sends and is the only
// caller of the handler.
type kernel struct {
	h     driver.Handler
	t     transport
	id    identity
	dir   string // where rich outputs and whole values are saved for the session
	spool string // where messages too large for memory are kept (on disk)
	lim   int    // the value limit

	in     chan inbound     // messages from the transport
	budget *budget          // bounds the bytes of messages in in
	out    chan []byte      // the kernel process's own stdout and stderr
	dead   chan driver.Exit // the kernel's end: its process, or the connection
	done   chan struct{}    // closed when the loop has returned

	tree             proc.Tree
	name             string // the runtime: jupyter:KERNEL
	version, exe     string
	note, where      string
	language, impl   string
	lookKind         int        // how the kernel is looked at (look.go)
	lookInstalled    bool       // ipykernel has the look's module
	look             *lookState // the look Vars asked for, until it is answered
	ipython          bool       // input_reply "\x04" is end of file to it
	hbLost           bool       // ended for its heartbeat
	asked            *Header    // the input_request waiting for an Answer
	asking           *driver.Prompt
	askTimer         *time.Timer // passes asking on once iopub is quiet
	endedBy          func(time.Duration) error
	mu               sync.Mutex
	cur              *cellState
	closed, finished bool
}

// cellState is the cell in flight: its request, and what came back.
type cellState struct {
	n           int
	msgID       string
	replied     bool // execute_reply came
	idle        bool // iopub said idle for it: all its output came
	status      string
	value       string
	rich        []api.Rich
	richMore    int
	err         *api.CellError
	look        *lookAnswer // the look its own user_expressions carried
	after       *lookState  // the look sent after it, before it is told
	lookDone    bool        // after answered
	notes       []string
	interrupted bool
	late        *time.Timer
	// skipped counts the messages the kernel sent that could not be
	// taken (the first is in notes), and skippedBytes the later ones'
	// size.
	skipped      int
	skippedBytes int64
}

func newKernel(h driver.Handler, spec driver.Spec) (*kernel, error) {
	dir, lim, spool := spec.RuntimeDir, spec.ValueLimit, spec.SpoolDir
	if spool == "" {
		spool = dir
	}
	sess, err := driver.Nonce(16)
	if err != nil {
		return nil, err
	}
	user := os.Getenv("USER")
	if user == "" {
		user = "polyrepl"
	}
	return &kernel{
		h: h, dir: dir, spool: spool, lim: lim,
		id:     identity{session: sess, username: user},
		in:     make(chan inbound, 256),
		budget: newBudget(inBudget),
		out:    make(chan []byte, 64),
		dead:   make(chan driver.Exit, 1),
		done:   make(chan struct{}),
	}, nil
}

// PID implements driver.Process: the kernel's process here, or 0 for a
// kernel on a gateway.
func (k *kernel) PID() int        { return k.tree.Leader.PID }
func (k *kernel) Tree() proc.Tree { return k.tree }
func (k *kernel) Version() string { return k.version }
func (k *kernel) Exe() string     { return k.exe }
func (k *kernel) Note() string    { return k.note }

// Where implements driver.Remote: where the kernel runs, for sessions.
func (k *kernel) Where() string { return k.where }

// End implements driver.Ender: a gateway's kernel is ended by asking the
// gateway; one here by ending its tree.
func (k *kernel) End(grace time.Duration) error {
	if k.endedBy != nil {
		return k.endedBy(grace)
	}
	_, err := k.tree.Kill(grace)
	return err
}

// handshake asks for the kernel's info until it answers on shell and its
// iopub is seen to carry messages to us (a subscription made late misses
// what was published before it), or until ctx ends or the kernel does.
func (k *kernel) handshake(ctx context.Context) error {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	var info kernelInfo
	replied, heard := false, false
	ask := func() error {
		m, err := k.id.request("kernel_info_request", struct{}{})
		if err != nil {
			return err
		}
		return k.t.send(shellCh, m)
	}
	if err := ask(); err != nil {
		return err
	}
	for !replied || !heard {
		select {
		case in := <-k.in:
			var err error
			switch {
			case in.ch == iopubCh:
				heard = true
			case in.ch == shellCh && in.m.Type() == "kernel_info_reply":
				err = in.m.Decode(&info)
				replied = true
			}
			k.taken(in)
			if err != nil {
				return err
			}
		case <-k.out:
		case <-tick.C:
			if !heard || !replied {
				if err := ask(); err != nil {
					return err
				}
			}
		case ex := <-k.dead:
			k.dead <- ex
			return fmt.Errorf("the kernel %s before it answered", ex.Describe())
		case <-ctx.Done():
			return fmt.Errorf("the kernel did not answer within %s", driver.StartTimeout)
		}
	}
	li := info.LanguageInfo
	li.Name, li.Version = label(li.Name, maxLabelChars), label(li.Version, maxLabelChars)
	impl := label(info.Implementation, maxLabelChars)
	k.language, k.impl = li.Name, impl
	k.version = strings.TrimSpace(strings.Join([]string{impl, label(info.ImplementationVersion, maxLabelChars)}, " "))
	if li.Version != "" {
		k.version += ", " + li.Name + " " + li.Version
	}
	k.ipython = info.Implementation == "ipython"
	k.lookKind = lookKindOf(info.Implementation, li.Name)
	if k.lookKind == lookNone {
		k.note = "this kernel cannot list its names or look at them (polyrepl looks in ipykernel's and IRkernel's)"
	}
	return nil
}

type kernelInfo struct {
	Implementation        string `json:"implementation"`
	ImplementationVersion string `json:"implementation_version"`
	LanguageInfo          struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"language_info"`
}

// Run implements driver.Process: send the cell as one execute_request.
func (k *kernel) Run(cell int, code string) error {
	content := map[string]any{
		"code": code, "silent": false, "store_history": true,
		"allow_stdin": true, "stop_on_error": false, "user_expressions": map[string]string{},
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return errors.New("the kernel has ended")
	}
	if k.cur != nil {
		return fmt.Errorf("cell %d is still running", k.cur.n)
	}
	if k.lookKind == lookIPython {
		// The look at its names rides in the cell's own request.
		content["user_expressions"] = map[string]string{lookKey: k.pyModule() + ".cell()"}
	}
	m, err := k.id.request("execute_request", content)
	if err != nil {
		return err
	}
	if err := k.t.send(shellCh, m); err != nil {
		return fmt.Errorf("cannot send the cell to the kernel: %w", err)
	}
	k.cur = &cellState{n: cell, msgID: m.Header.MsgID}
	return nil
}

// Interrupt implements driver.Process.
func (k *kernel) Interrupt(attempt int) error {
	k.mu.Lock()
	if k.cur != nil {
		k.cur.interrupted = true
	}
	k.mu.Unlock()
	return k.t.interrupt(attempt)
}

// loop reads what the kernel sends until it ends; the only caller of
// the handler once the kernel is ready.
func (k *kernel) loop() {
	for {
		select {
		case in := <-k.in:
			k.take(in)
			k.taken(in)
		case p := <-k.out:
			k.h.Output(p)
		case <-k.lateC():
			k.finish(true)
		case <-k.askC():
			k.ask()
		case ex := <-k.dead:
			k.drain()
			k.mu.Lock()
			k.closed = true
			k.mu.Unlock()
			k.t.close()
			close(k.done)
			k.h.Exited(ex)
			return
		}
	}
}

// drain passes on what arrived before the kernel's end.
func (k *kernel) drain() {
	for {
		select {
		case in := <-k.in:
			k.take(in)
			k.taken(in)
		case p := <-k.out:
			k.h.Output(p)
		default:
			return
		}
	}
}

// lateC fires when the cell's reply came but the end of its output did
// not (or the reverse), lateWait after the first or after the cell's
// last output, whichever is later.
func (k *kernel) lateC() <-chan time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cur == nil || k.cur.late == nil {
		return nil
	}
	return k.cur.late.C
}

// take acts on one message.
func (k *kernel) take(in inbound) {
	m := in.m
	k.mu.Lock()
	c := k.cur
	k.mu.Unlock()
	if m == nil {
		if c == nil {
			log.Print(in.note)
		} else {
			c.notes = append(c.notes, in.note)
		}
		return
	}
	if k.isLook(m) {
		// A look's: never the session's output.
		k.tookLook(in.ch, m, c)
		return
	}
	mine := c != nil && m.ParentID() == c.msgID
	switch in.ch {
	case stdinCh:
		if m.Type() == "input_request" {
			k.answerInput(m, c)
		}
		return
	case shellCh:
		if mine && m.Type() == "execute_reply" {
			k.replied(m, c)
		}
		return
	case controlCh:
		return
	}
	if k.askTimer != nil && in.ch == iopubCh {
		k.askTimer.Reset(k.askQuiet())
	}
	if mine && c.late != nil {
		// The reply came and this cell's output still flows (iopub lags
		// the shell under a flood): the wait for its end starts again.
		c.late.Reset(lateWait)
	}
	switch m.Type() {
	case "stream":
		if m.big != nil {
			k.streamBig(m, c, in.ch)
			return
		}
		var s struct {
			Text string `json:"text"`
		}
		if m.Decode(&s) == nil && s.Text != "" {
			k.h.Output([]byte(s.Text))
		}
	case "execute_result", "display_data", "update_display_data":
		var d struct {
			Data map[string]json.RawMessage `json:"data"`
		}
		if err := m.Decode(&d); err != nil {
			k.skipped(c, in.ch, m, err)
			return
		}
		k.shown(c, mine && m.Type() == "execute_result", d.Data)
	case "error":
		if mine {
			var e errorContent
			if err := m.Decode(&e); err == nil {
				c.err = e.cellError()
			} else {
				k.skipped(c, in.ch, m, err)
			}
		}
	case "status":
		var s struct {
			State string `json:"execution_state"`
		}
		if mine && m.Decode(&s) == nil && s.State == "idle" {
			c.idle = true
			k.maybeFinish(c)
		}
	}
}

// streamBig passes on the text of a stream message too large for memory,
// from its file, piece by piece.
func (k *kernel) streamBig(m *Msg, c *cellState, ch string) {
	r, done, err := m.big.open()
	if err == nil {
		defer done()
		err = streamText(r, func(p []byte) { k.h.Output(p) })
	}
	if err != nil {
		k.skipped(c, ch, m, err)
	}
}

// skipped says, in the cell's result, that a message the kernel sent
// could not be taken, and what it was; between cells, the holder's log
// says it.
func (k *kernel) skipped(c *cellState, ch string, m *Msg, err error) {
	what := fmt.Sprintf("the kernel sent a %s message of %d bytes on %s that polyrepl could not take (%v): it was skipped", m.Type(), m.Size(), ch, err)
	if errors.Is(err, errTooBig) {
		what = fmt.Sprintf("the kernel sent a %s message of %d MB on %s, more than the %d MB polyrepl reads whole: it was skipped", m.Type(), m.Size()>>20, ch, maxWhole>>20)
	}
	if c == nil {
		log.Print(what)
		return
	}
	if c.skipped > 0 {
		// The first is said; the rest are counted, so that a flood the
		// disk refuses makes one note, not thousands.
		c.skipped++
		c.skippedBytes += m.Size()
		return
	}
	c.skipped = 1
	c.notes = append(c.notes, what)
}

// errorContent is an error as kernels send it, on iopub and in a reply.
type errorContent struct {
	Status    string   `json:"status"`
	Ename     string   `json:"ename"`
	Evalue    string   `json:"evalue"`
	Traceback []string `json:"traceback"`
}

// cellError is the error without the terminal colours kernels put in
// tracebacks; the record keeps what a person would have seen.
func (e errorContent) cellError() *api.CellError {
	tb := plain.Text(strings.Join(e.Traceback, "\n"))
	typ := label(e.Ename, maxLabelChars)
	if typ == "" {
		typ = "Error"
	}
	return &api.CellError{Type: typ, Message: plain.Text(e.Evalue), Traceback: tb}
}

// boundError holds the cell's error, as the kernel sent it, to
// api.ErrorLimit characters of message and of traceback where it enters:
// the whole goes to a file of the kernel's for the session to take over
// (or the result says why it could not), and the totals let the session
// count its cut from the whole.
func (k *kernel) boundError(r *driver.Result) {
	e := r.Error
	if e == nil {
		return
	}
	m, t := utf8.RuneCountInString(e.Message), utf8.RuneCountInString(e.Traceback)
	if m <= api.ErrorLimit && t <= api.ErrorLimit {
		return
	}
	whole := e.Type + ": " + e.Message + "\n\n" + e.Traceback
	r.ErrorFile, r.ErrorSaveErr = k.save("error", ".txt", []byte(whole))
	b := *e
	b.Message, _ = bound.HeadTailLines(e.Message, api.ErrorLimit)
	b.Traceback, _ = bound.HeadTailLines(e.Traceback, api.ErrorLimit)
	r.Error, r.MessageTotal, r.TracebackTotal = &b, m, t
}

// replied takes the cell's execute_reply.
func (k *kernel) replied(m *Msg, c *cellState) {
	var r struct {
		errorContent
		UserExpressions map[string]userExpression `json:"user_expressions"`
	}
	if err := m.Decode(&r); err != nil {
		r.Status = "error"
		r.Ename, r.Evalue = "ProtocolError", err.Error()
	}
	c.replied, c.status = true, r.Status
	if c.err == nil && r.Status == "error" {
		c.err = r.cellError()
	}
	if ue, ok := r.UserExpressions[lookKey]; ok {
		a := k.expressionAnswer(ue)
		c.look = &a
	}
	k.maybeFinish(c)
}

// maybeFinish ends the cell once both its reply and the end of its
// output came, or starts the wait for the one missing.
func (k *kernel) maybeFinish(c *cellState) {
	if c.replied && c.idle {
		if !k.afterLook(c) {
			k.finish(false)
			return
		}
		// Told once the look after it answers, or afterCellWait.
		k.mu.Lock()
		if c.late == nil {
			c.late = time.NewTimer(afterCellWait)
		} else {
			c.late.Reset(afterCellWait)
		}
		k.mu.Unlock()
		return
	}
	k.mu.Lock()
	if c.late == nil {
		c.late = time.NewTimer(lateWait)
	}
	k.mu.Unlock()
}

// finish reports the cell in flight as done.
func (k *kernel) finish(late bool) {
	k.mu.Lock()
	c := k.cur
	k.cur = nil
	k.asked, k.asking = nil, nil
	if k.askTimer != nil {
		k.askTimer.Stop()
		k.askTimer = nil
	}
	interrupted := c != nil && c.interrupted
	k.mu.Unlock()
	if c == nil {
		return
	}
	if c.late != nil {
		c.late.Stop()
	}
	looking := c.after != nil && !c.lookDone
	r := driver.Result{Cell: c.n, Rich: c.rich, RichMore: c.richMore, OutputLate: late && c.replied && !looking}
	r.Vars, r.Names = c.cellLook()
	if late && looking {
		c.notes = append(c.notes, fmt.Sprintf("the kernel did not answer the look at its names after the cell within %s", afterCellWait))
	}
	switch {
	case !c.replied:
		r.Status = api.StatusError
		r.Error = &api.CellError{Type: "ProtocolError", Message: "the kernel said the cell was done but never sent its reply"}
	case c.status == "ok":
		r.Status = api.StatusDone
	case interrupted:
		r.Status = api.StatusInterrupted
	case c.status == "aborted":
		r.Status = api.StatusError
		r.Error = &api.CellError{Type: "Aborted", Message: "the kernel aborted the cell without running it"}
	default:
		r.Status = api.StatusError
		r.Error = c.err
		if r.Error == nil {
			r.Error = &api.CellError{Type: "Error", Message: fmt.Sprintf("the kernel replied %q and said no more", label(c.status, maxLabelChars))}
		}
		k.boundError(&r)
	}
	if c.value != "" {
		r.Value, r.ValueTotal = c.value, len([]rune(c.value))
		if k.lim > 0 && r.ValueTotal > k.lim {
			r.Value, r.ValueCut = bound.HeadTailLines(c.value, k.lim)
			if r.ValueCut != nil {
				r.ValueFile, r.ValueSaveErr = k.save("value", ".txt", []byte(c.value))
			}
		}
	}
	if c.skipped > 1 {
		c.notes = append(c.notes, fmt.Sprintf("%d more messages the kernel sent (%d MB in all) were skipped too", c.skipped-1, c.skippedBytes>>20))
	}
	r.Note = strings.Join(c.notes, "; ")
	k.h.CellDone(r)
}

// save writes data to a new file of the kernel's for the session to take
// over; the file, or why there is none.
func (k *kernel) save(what, ext string, data []byte) (string, string) {
	f, err := os.CreateTemp(k.dir, "jupyter-"+what+"-*"+ext)
	if err != nil {
		return "", err.Error()
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err.Error()
	}
	return f.Name(), ""
}

// maxNames bounds the names a kernel may report for one cell, as a
// worker's are.
const maxNames = 10000
