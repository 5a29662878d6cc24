// Package worker is the driver family for runtimes that run a small
// embedded worker program in their own language, speaking polyrepl's worker
// protocol over pipes: exact output capture, real interrupts and structured
// results. A runtime of this family is a Runtime value: its worker source,
// how to start it, how to interrupt it.
//
// The protocol, the same in every language:
//
//	argv  the runtime's own arguments, then the worker file and SENTINEL
//	      (a runtime with SentinelEnv: the worker file only, SENTINEL in
//	      $POLYREPL_WORKER_SENTINEL, which the worker removes)
//	fd 3  commands in: "exec CELL VALUE_LIMIT NBYTES\n" then NBYTES of code
//	      (a runtime with CellNonce: "exec CELL VALUE_LIMIT NBYTES NONCE\n")
//	fd 4  events out, one JSON object per line:
//	      {"op":"hello","version":…,"executable":…,"pid":…} once ready;
//	      {"op":"done","cell":N,"nonce":…,"status":"done"|"error"|"interrupted",
//	       "value":…} or {"value_head":…,"value_tail":…,"value_total":N},
//	       "value_name":… (the name the runtime gave the value, if any),
//	       "error":{"type","message","traceback"},"names":[…],"note":…,
//	       "redirected":[1,2],"unrestored":…,"flushed":true} after each cell
//	fd 1  and fd 2: one pipe with everything the cell prints; after a cell
//	      the worker flushes and writes SENTINEL to fd 1, then sends "done"
//	      with "flushed": true ("false" if it could not write it).
//
// SIGINT raises the runtime's interrupt in a running cell and is ignored
// between cells.
//
// A cell runs in the worker's process and can write to any of its
// descriptors, so the daemon takes nothing on trust: a result must be for
// the cell in flight (and echo its nonce), one too long to take is read
// through and reported, not kept, and a cell whose end marker never
// arrives (it pointed fd 1 elsewhere) still ends, markerWait after its
// result.
package worker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/console"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// doneWait bounds how long the output reader, having seen an end marker,
// waits for the result that follows it on the event channel.
const doneWait = 5 * time.Second

// markerWait bounds how long a cell's result waits for its end marker on
// the output pipe. The worker writes the marker before it sends the
// result, so it is normally there already; a cell that pointed fd 1
// elsewhere would otherwise stall the session for good.
const markerWait = 1500 * time.Millisecond

// maxEvent bounds one event line the daemon takes from a worker. Workers
// bound their own events far below it; a longer line is read through
// (never held whole) and reported as what it was.
const maxEvent = 4 << 20

// SentinelVar carries the end marker to a worker of a runtime with
// SentinelEnv.
const SentinelVar = "POLYREPL_WORKER_SENTINEL"

// outputPipeSize is the capacity asked for the output pipe (the default
// /proc/sys/fs/pipe-max-size allows it to any user).
const outputPipeSize = 1 << 20

// Runtime describes one runtime of the worker family.
type Runtime struct {
	driver.Info
	// Source builds the worker program from the parts embedded in the
	// binary; it is written to the runtime directory under FileName
	// (content-hashed). It runs when a session starts, never at the
	// binary's start: a package-level join would copy every runtime's
	// parts (30-120 KB each) in every process, a CLI command's too.
	Source   func() []byte
	FileName string
	// Args are the runtime's arguments before the worker file, e.g. "-u"
	// for Python; Project adds the arguments for a project directory.
	Args    []string
	Project func(dir string) []string
	// Interrupt, if set, replaces the default escalation (SIGINT to the
	// runtime, then to its whole group, then to the runtime again).
	Interrupt func(tree proc.Tree, attempt int) error
	// InterruptCell, if set, replaces Interrupt, and is also given the
	// runtime's children as the cell began (a shell's background jobs of
	// earlier cells), for an escalation that leaves them and what they
	// started alone (proc.Tree.SignalGroupSparing). Reading them costs
	// one small file per cell on Linux.
	InterruptCell func(tree proc.Tree, before []proc.Proc, attempt int) error
	// Env is added to the runtime's environment (after the caller's).
	Env []string
	// RanOn, if set, rewords the result of a cell that ended done
	// although the interrupt reached its whole process group: the
	// runtime ignored the interrupt while it waited on a child (R's
	// system(), as C's system() does), the interrupt ended the child, and
	// the cell ran on to its end. The person asked for an interrupt and
	// is told the cell was interrupted, and how.
	RanOn func(r driver.Result) driver.Result
	// Interpreter, if set, finds the executable to start for the one
	// asked for, before it starts: a launcher is replaced by its
	// interpreter (IPython's by its Python), and a program that is not
	// what the runtime needs is refused in seconds with what to do,
	// instead of after driver.StartTimeout. note, if any, is said in the
	// creation line.
	Interpreter func(ctx context.Context, spec driver.Spec) (exe, note string, err error)
	// Hint, if set, names a known trap a cell's result fell into (one of
	// the api.Hint constants, or ""), so the reply can say the way around
	// it.
	Hint func(r driver.Result) string
	// SentinelEnv: the worker takes its end marker from $SentinelVar, not
	// from its last argument, which every user can read in ps.
	SentinelEnv bool
	// CellNonce: the worker echoes the nonce of each exec in its result,
	// so that no event a cell forges is taken for its result.
	CellNonce bool
	// Console makes the runtime's standard input a pipe the driver keeps
	// (console.go): a cell that blocks reading it — the runtime itself or
	// a subprocess — asks a question, whose answer is written there.
	Console bool
	// ConsoleFirst, if set, is written to the console first: the line
	// that starts the worker, for a runtime that reads its program from
	// its console (R, interactive).
	ConsoleFirst func(script string) []byte
	// ConsoleNoEOF: the runtime's own read of its console takes no end of
	// file (R keeps end of file for good, and its prompt would then end
	// the session); a subprocess's read does.
	ConsoleNoEOF bool
	// ConsoleThreads: the runtime reads its console on a thread other
	// than its first (a JVM's), so all its threads are looked at.
	ConsoleThreads bool
	// Completes: the worker completes a name between cells on a
	// "complete NBYTES NONCE" command (complete.go).
	Completes bool
	// Inspects: the worker looks at its names and at what a path names
	// between cells, on a "vars NBYTES NONCE" command (vars.go).
	Inspects bool
	// ConsoleInterruptLine: an interrupt of the runtime's own read also
	// sends an empty line a moment after the signal, for a runtime that
	// takes the interrupt only once the read returns (a JVM).
	ConsoleInterruptLine bool
}

// Driver adapts a Runtime to driver.Driver.
type Driver struct{ R *Runtime }

// Info implements driver.Driver.
func (d Driver) Info() driver.Info { return d.R.Info }

// Start implements driver.Driver: the launch is driver.Launch's, the
// protocol the worker's (output on fd 1 and 2 with end markers, commands
// on fd 3, events on fd 4).
func (d Driver) Start(ctx context.Context, spec driver.Spec, h driver.Handler) (driver.Process, error) {
	r := d.R
	var found string
	if r.Interpreter != nil {
		exe, note, err := r.Interpreter(ctx, spec)
		if err != nil {
			return nil, err
		}
		spec.Exe, found = exe, note
	}
	script, err := writeWorker(spec.RuntimeDir, r.FileName, r.Source())
	if err != nil {
		return nil, err
	}
	nonce, err := driver.Nonce(12)
	if err != nil {
		return nil, err
	}
	sentinel := "\x01polyrepl-end-" + nonce + "\x02"
	extra, env := []string{script, sentinel}, append(append([]string(nil), r.Env...), SpoolVar+"="+spec.RuntimeDir)
	if r.SentinelEnv {
		extra = []string{script}
		env = append(env, SentinelVar+"="+sentinel)
	}
	l := driver.Launch{Runtime: r.Name, Needs: r.Needs, EnvVar: r.EnvVar, Spec: spec,
		Args: r.Args, Project: r.Project, Extra: extra, Env: env}
	cmd, err := l.Command()
	if err != nil {
		return nil, err
	}

	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("cannot create the output pipe: %w", err)
	}
	growPipe(outW)
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW)
		return nil, fmt.Errorf("cannot create the command pipe: %w", err)
	}
	evR, evW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW, cmdR, cmdW)
		return nil, fmt.Errorf("cannot create the event pipe: %w", err)
	}
	var conR, conW *os.File
	// Without a way to see a read (proc.SeesStdinReads), a console would
	// leave a read waiting unseen: standard input stays empty, unless the
	// runtime needs its console to start.
	if r.ConsoleFirst != nil || (r.Console && proc.SeesStdinReads()) {
		if conR, conW, err = openConsole(); err != nil {
			closeAll(outR, outW, cmdR, cmdW, evR, evW)
			return nil, err
		}
		cmd.Stdin = conR
	}
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.ExtraFiles = []*os.File{cmdR, evW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := l.Start(cmd); err != nil {
		closeAll(outR, outW, cmdR, cmdW, evR, evW)
		if conR != nil {
			closeAll(conR, conW)
		}
		return nil, fmt.Errorf("cannot start %s: %w", driver.ExeOf(cmd), err)
	}
	closeAll(cmdR, evW)
	// A console runtime's driver keeps the read end of the console and
	// the write end of the output (closed once the runtime ends): its own
	// handles on both pipes, whatever the runtime's descriptors 0 and 1
	// point at the moment (console.go).
	var outKeep *os.File
	if conR != nil {
		outKeep = outW
		if r.ConsoleFirst != nil {
			// The pipe holds it: the runtime is only starting.
			conW.Write(r.ConsoleFirst(script))
		}
	} else {
		outW.Close()
	}
	p := &process{
		r:        r,
		cmd:      cmd,
		h:        h,
		cmds:     cmdW,
		exe:      driver.ExeOf(cmd),
		sentinel: []byte(sentinel),
		doneSent: make(chan struct{}, 1),
		evEOF:    make(chan struct{}),
		helloed:  make(chan struct{}),
		exited:   make(chan driver.Exit, 1),
		outEOF:   make(chan struct{}),
		valueLim: spec.ValueLimit,
		tree:     l.TreeOf(cmd),
		console:  conW,
		conKeep:  conR,
		outKeep:  outKeep,
	}
	if conW != nil {
		p.startConsole()
	}
	go p.readEvents(evR)
	go p.readOutput(outR)
	go p.wait()

	err = l.Await(ctx, driver.Started{Tree: p.tree, Ready: p.helloed, Exited: p.exited, OutEOF: p.outEOF, Early: p.earlyBytes})
	if err != nil {
		return nil, err
	}
	hm := p.hello
	p.version = hm.Version
	if hm.Executable != "" {
		p.exe = hm.Executable
	}
	p.note = hm.Note
	if found != "" {
		p.note = strings.TrimPrefix(p.note+"; "+found, "; ")
	}
	p.mu.Lock()
	early := p.early.Bytes()
	p.ready = true
	if len(early) > 0 {
		h.Output(early)
	}
	p.early.Reset()
	p.mu.Unlock()
	return p, nil
}

type helloMsg struct {
	Version    string `json:"version"`
	Note       string `json:"note"` // said in the creation line, e.g. "Revise loaded"
	Executable string `json:"executable"`
	PID        int    `json:"pid"`
}

type doneMsg struct {
	Op         string       `json:"op"`
	Cell       int          `json:"cell"`
	Nonce      string       `json:"nonce"`
	Status     string       `json:"status"`
	Value      *string      `json:"value"`
	ValueHead  string       `json:"value_head"`
	ValueTail  string       `json:"value_tail"`
	ValueTotal int          `json:"value_total"`
	ValueName  string       `json:"value_name"`
	Rich       []api.Rich   `json:"rich"`            // figures saved in the spool
	RichMore   int          `json:"rich_more"`       // figures past the bound
	ValueWhole string       `json:"value_whole"`     // a file of the whole value, when cut
	ValueErr   string       `json:"value_whole_err"` // why it could not be saved
	Error      *workerError `json:"error"`
	Names      []string     `json:"names"`
	Vars       []api.Var    `json:"vars"`       // the look at the names as the cell ended
	VarsTotal  int          `json:"vars_total"` // how many names that look saw
	Note       string       `json:"note"`
	Redirected []int        `json:"redirected"`
	Unrestored string       `json:"unrestored"`
	Flushed    bool         `json:"flushed"`
}

// workerError is a cell's error as a worker sends it: cut by the worker
// past its bounds (the totals say how long each text was), the whole
// saved to a file in the spool directory the worker was given
// ($SpoolVar), or why it could not be.
type workerError struct {
	api.CellError
	MessageTotal   int    `json:"message_total"`
	TracebackTotal int    `json:"traceback_total"`
	Whole          string `json:"whole"`
	WholeErr       string `json:"whole_err"`
}

// SpoolVar names the directory where a worker saves the whole of an
// error it cuts.
const SpoolVar = "POLYREPL_WORKER_SPOOL"

// process is one running worker. Its handler is called under mu, which
// keeps the calls from the output and event readers in order.
type process struct {
	r        *Runtime
	note     string
	cmd      *exec.Cmd
	h        driver.Handler
	tree     proc.Tree
	exe      string
	version  string
	sentinel []byte
	valueLim int

	cmdMu sync.Mutex
	cmds  *os.File
	// console is the runtime's standard input, for a Console runtime
	// (under cmdMu); conAsked (under evMu) says its question is out;
	// conWake starts the looks at a cell (console.go).
	console  *os.File
	conKeep  *os.File // the console's read end, to open it again
	outKeep  *os.File // the output's write end, for the end marker
	conAsked bool
	conAsker int            // the pid whose read the question is
	watch    *console.Watch // looks at cells reading the console; nil without one

	// hello is the worker's greeting, set before helloed closes.
	hello   helloMsg
	helloed chan struct{}

	mu     sync.Mutex
	ready  bool         // hello received; output goes to h
	done   bool         // Exited was called; nothing more goes to h
	early  driver.Early // output before hello, for the error message
	tail   console.Tail // the cell's last line so far: a shown prompt's text
	exited chan driver.Exit
	outEOF chan struct{}

	// The cell in flight and how it ends, under evMu: Run sets inflight,
	// the event reader takes the one result that matches it and leaves it
	// pending until the output reader sees the end marker (or markerWait
	// passes). stray counts events that matched nothing since the last
	// result.
	evMu     sync.Mutex
	inflight *flight
	pending  *driver.Result
	late     *time.Timer
	// asking is a cell's question waiting, as a result does, for the end
	// marker the worker wrote before it: what the cell printed before it
	// asked reaches the handler first.
	asking   *driver.Prompt
	askLate  *time.Timer
	stray    int
	comp     *completing   // the completion asked for, waiting for its event
	look     *looking      // the look asked for, waiting for its event
	forking  *forking      // the fork asked for, waiting for its event
	spare    []proc.Proc   // forks given away: not of the tree
	doneSent chan struct{} // a result became pending
	evEOF    chan struct{} // the event reader ended
}

// flight is the cell a worker runs: its number and the nonce its result
// must echo.
type flight struct {
	cell  int
	nonce string
	// group: an interrupt went to the whole process group while the
	// cell ran (the default escalation's second attempt).
	group bool
	// before: the runtime's children as the cell began (InterruptCell).
	before []proc.Proc
}

func (p *process) PID() int { return p.tree.Leader.PID }

// Tree is the worker's process tree, without the forks it gave away
// (fork.go).
func (p *process) Tree() proc.Tree {
	t := p.tree
	p.evMu.Lock()
	t.Spare = slices.Clone(p.spare)
	p.evMu.Unlock()
	return t
}
func (p *process) Version() string { return p.version }
func (p *process) Exe() string     { return p.exe }

// Note is what the runtime said when it started, for the creation line.
func (p *process) Note() string { return p.note }

// Run sends one cell to the worker.
func (p *process) Run(cell int, code string) error {
	f := &flight{cell: cell}
	if p.r.InterruptCell != nil {
		f.before = p.tree.Children()
	}
	var msg []byte
	if p.r.CellNonce {
		nonce, err := driver.Nonce(8)
		if err != nil {
			return err
		}
		f.nonce = nonce
		msg = fmt.Appendf(nil, "exec %d %d %d %s\n", cell, p.valueLim, len(code), nonce)
	} else {
		msg = fmt.Appendf(nil, "exec %d %d %d\n", cell, p.valueLim, len(code))
	}
	msg = append(msg, code...)
	p.mu.Lock()
	p.tail.Reset()
	p.mu.Unlock()
	p.evMu.Lock()
	p.inflight = f
	p.conAsked = false
	p.evMu.Unlock()
	p.cmdMu.Lock()
	_, err := p.cmds.Write(msg)
	p.cmdMu.Unlock()
	if err != nil {
		return fmt.Errorf("cannot send the cell to the worker (it may have died): %w", err)
	}
	if p.watch != nil {
		p.watch.Wake()
	}
	return nil
}

// readEvents reads hello and done messages from fd 4, a line at a time
// with a bounded buffer: a line of any length costs the daemon at most
// maxEvent bytes, and the channel stays open after it.
func (p *process) readEvents(r *os.File) {
	defer r.Close()
	defer close(p.evEOF)
	br := bufio.NewReaderSize(r, 64*1024)
	var buf []byte
	greeted := false
	for {
		line, n, err := readLine(br, buf[:0], maxEvent)
		buf = line
		if n > maxEvent {
			p.tooLong(line, n)
		} else if len(line) > 0 {
			if p.completed(line) || p.looked(line) || p.forked(line) {
				goto next
			}
			if q, nonce, flushed, ok := parseInput(line); ok {
				p.asked(q, nonce, flushed)
				goto next
			}
			hello, done, flushed, nonce := parseEvent(line)
			switch {
			case hello != nil:
				if !greeted {
					greeted = true
					p.hello = *hello
					close(p.helloed)
				}
			case done != nil:
				p.result(*done, nonce, flushed)
			}
		}
	next:
		if err != nil {
			return
		}
		if cap(buf) > 1<<20 {
			buf = nil // a long line's buffer is not kept for the short ones
		}
	}
}

// result takes a done event: the result of the cell in flight if it is
// for that cell (and echoes its nonce), else a stray to report with the
// next result. A flushed result waits for its end marker, at most
// markerWait.
func (p *process) result(r driver.Result, nonce string, flushed bool) {
	p.evMu.Lock()
	f := p.inflight
	if f == nil || r.Cell != f.cell || nonce != f.nonce {
		p.stray++
		p.evMu.Unlock()
		return
	}
	p.inflight = nil
	if f.group && r.Status == api.StatusDone && p.r.RanOn != nil {
		r = p.r.RanOn(r)
	}
	r.Stray, p.stray = p.stray, 0
	if p.r.Hint != nil {
		r.Hint = p.r.Hint(r)
	}
	if !flushed {
		p.evMu.Unlock()
		p.deliver(func() { p.h.CellDone(r) })
		return
	}
	pending := &r
	p.pending = pending
	p.late = time.AfterFunc(markerWait, func() { p.markerLate(pending) })
	p.evMu.Unlock()
	select {
	case p.doneSent <- struct{}{}:
	default:
	}
}

// takePending takes the result that waits for its end marker, if any.
func (p *process) takePending() *driver.Result {
	p.evMu.Lock()
	defer p.evMu.Unlock()
	r := p.pending
	if r != nil {
		p.pending = nil
		p.late.Stop()
	}
	return r
}

// markerLate ends a cell whose end marker did not come within markerWait
// of its result.
func (p *process) markerLate(r *driver.Result) {
	p.evMu.Lock()
	if p.pending != r {
		p.evMu.Unlock()
		return
	}
	p.pending = nil
	p.evMu.Unlock()
	res := *r
	res.OutputLate = true
	p.deliver(func() { p.h.CellDone(res) })
}

// deliver calls the handler unless the process has already been reported
// as exited.
func (p *process) deliver(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		f()
	}
}

// readOutput reads the cell output pipe, splits it at end markers and
// passes it on in order, delivering each cell's result after its marker.
func (p *process) readOutput(r *os.File) {
	defer close(p.outEOF)
	defer r.Close()
	buf := make([]byte, 256*1024)
	sp := driver.Splitter{Marker: p.sentinel}
	for {
		n, err := r.Read(buf)
		sp.Feed(buf[:n], p.output, p.cellEnded)
		if err != nil {
			sp.Flush(p.output)
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				p.output([]byte(fmt.Sprintf("\n[polyrepl: reading the output failed: %v]\n", err)))
			}
			return
		}
	}
}

func (p *process) output(b []byte) {
	if len(b) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.done:
	case !p.ready:
		p.early.Keep(b)
	default:
		p.tail.Add(b)
		p.h.Output(b)
	}
}

// cellEnded delivers the result that follows a marker, waiting for it
// at most doneWait.
func (p *process) cellEnded() {
	timer := time.NewTimer(doneWait)
	defer timer.Stop()
	ask := func() bool {
		q := p.takeAsking(nil)
		if q == nil {
			return false
		}
		if a, ok := p.h.(driver.Asker); ok {
			p.deliver(func() { a.InputAsked(p.withTail(*q)) })
		}
		return true
	}
	for {
		if ask() {
			return
		}
		if r := p.takePending(); r != nil {
			p.deliver(func() { p.h.CellDone(*r) })
			return
		}
		select {
		case <-p.doneSent:
		case <-p.evEOF:
			if ask() {
				return
			}
			if r := p.takePending(); r != nil {
				p.deliver(func() { p.h.CellDone(*r) })
			}
			return
		case <-timer.C:
			return
		}
	}
}

// wait reaps the worker and reports its exit once its output is read,
// or shortly after if a surviving child still holds the pipe open.
func (p *process) wait() {
	reap := driver.Reap
	if p.cmd == nil {
		reap = p.reapAdopted
	}
	reap(p.cmd, p.exited, p.outEOF, func() {
		p.cmdMu.Lock()
		p.cmds.Close()
		for _, f := range []*os.File{p.console, p.conKeep, p.outKeep} {
			if f != nil {
				f.Close()
			}
		}
		p.cmdMu.Unlock()
	}, func(ex driver.Exit) {
		p.mu.Lock()
		defer p.mu.Unlock()
		tell := p.ready && !p.done
		p.done = true
		if tell {
			p.h.Exited(ex)
		}
	})
}

func (p *process) earlyBytes() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Clone(p.early.Bytes())
}
