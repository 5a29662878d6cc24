// Package worker is the driver family for runtimes that run a small
// embedded worker program in their own language, speaking polyrepl's worker
// protocol over pipes: exact output capture, real interrupts and structured
// results. A runtime of this family is a Runtime value: its worker source,
// how to start it, how to interrupt it.
//
// The protocol, the same in every language:
//
//	argv  the runtime's own arguments, then the worker file and SENTINEL
//	fd 3  commands in: "exec CELL VALUE_LIMIT NBYTES\n" then NBYTES of code
//	fd 4  events out, one JSON object per line:
//	      {"op":"hello","version":…,"executable":…,"pid":…} once ready;
//	      {"op":"done","cell":N,"status":"done"|"error"|"interrupted",
//	       "value":…} or {"value_head":…,"value_tail":…,"value_total":N},
//	       "value_name":… (the name the runtime gave the value, if any),
//	       "error":{"type","message","traceback"},"names":[…],"note":…,
//	       "flushed":true} after each cell
//	fd 1  and fd 2: one pipe with everything the cell prints; after a cell
//	      the worker flushes and writes SENTINEL to fd 1, then sends "done"
//	      with "flushed": true ("false" if it could not write it).
//
// SIGINT raises the runtime's interrupt in a running cell and is ignored
// between cells.
package worker

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// sentinelWait bounds how long a finished cell waits for the end marker
// on its output pipe. The worker writes the marker before reporting the
// cell done, so it is normally already there; a cell that redirected fd 1
// elsewhere would otherwise stall the session.
const sentinelWait = 5 * time.Second

// outputPipeSize is the capacity asked for the output pipe (the default
// /proc/sys/fs/pipe-max-size allows it to any user).
const outputPipeSize = 1 << 20

// Runtime describes one runtime of the worker family.
type Runtime struct {
	driver.Info
	// Source is the worker program, embedded in the binary; it is written
	// to the runtime directory under FileName (content-hashed).
	Source   []byte
	FileName string
	// Args are the runtime's arguments before the worker file, e.g. "-u"
	// for Python; Project adds the arguments for a project directory.
	Args    []string
	Project func(dir string) []string
	// Interrupt, if set, replaces the default escalation (SIGINT to the
	// runtime, then to its whole group, then to the runtime again).
	Interrupt func(tree proc.Tree, attempt int) error
	// Env is added to the runtime's environment (after the caller's).
	Env []string
	// Hint, if set, names a known trap a cell's result fell into (one of
	// the api.Hint constants, or ""), so the reply can say the way around
	// it.
	Hint func(r driver.Result) string
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
	script, err := writeWorker(spec.RuntimeDir, r.FileName, r.Source)
	if err != nil {
		return nil, err
	}
	nonce, err := driver.Nonce(12)
	if err != nil {
		return nil, err
	}
	sentinel := "\x01polyrepl-end-" + nonce + "\x02"
	l := driver.Launch{Runtime: r.Name, Needs: r.Needs, EnvVar: r.EnvVar, Spec: spec,
		Args: r.Args, Project: r.Project, Extra: []string{script, sentinel}, Env: r.Env}
	cmd, err := l.Command()
	if err != nil {
		return nil, err
	}

	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("cannot create the output pipe: %w", err)
	}
	// A larger pipe means fewer wake-ups of the worker and the daemon when
	// a cell prints a lot; the kernel may refuse, which only costs speed.
	unix.FcntlInt(outW.Fd(), unix.F_SETPIPE_SZ, outputPipeSize)
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
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.ExtraFiles = []*os.File{cmdR, evW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		closeAll(outR, outW, cmdR, cmdW, evR, evW)
		return nil, fmt.Errorf("cannot start %s: %w", cmd.Path, err)
	}
	closeAll(outW, cmdR, evW)
	p := &process{
		r:        r,
		cmd:      cmd,
		h:        h,
		cmds:     cmdW,
		exe:      cmd.Path,
		sentinel: []byte(sentinel),
		dones:    make(chan driver.Result, 4),
		helloed:  make(chan struct{}),
		exited:   make(chan driver.Exit, 1),
		outEOF:   make(chan struct{}),
		valueLim: spec.ValueLimit,
		tree:     l.TreeOf(cmd),
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
	Op         string         `json:"op"`
	Cell       int            `json:"cell"`
	Status     string         `json:"status"`
	Value      *string        `json:"value"`
	ValueHead  string         `json:"value_head"`
	ValueTail  string         `json:"value_tail"`
	ValueTotal int            `json:"value_total"`
	ValueName  string         `json:"value_name"`
	Error      *api.CellError `json:"error"`
	Names      []string       `json:"names"`
	Note       string         `json:"note"`
	Flushed    bool           `json:"flushed"`
}

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

	// hello is the worker's greeting, set before helloed closes.
	hello   helloMsg
	helloed chan struct{}

	mu     sync.Mutex
	ready  bool         // hello received; output goes to h
	done   bool         // Exited was called; nothing more goes to h
	early  driver.Early // output before hello, for the error message
	dones  chan driver.Result
	exited chan driver.Exit
	outEOF chan struct{}
}

func (p *process) PID() int        { return p.cmd.Process.Pid }
func (p *process) Tree() proc.Tree { return p.tree }
func (p *process) Version() string { return p.version }
func (p *process) Exe() string     { return p.exe }

// Note is what the runtime said when it started, for the creation line.
func (p *process) Note() string { return p.note }

// Interrupt stops the running cell: the runtime's own policy if it has
// one, else SIGINT to the runtime, then to its whole process group (to end
// a child the cell waits on), then to the runtime again.
func (p *process) Interrupt(attempt int) error {
	if p.r.Interrupt != nil {
		return p.r.Interrupt(p.tree, attempt)
	}
	if attempt == 1 {
		return p.tree.SignalGroup(syscall.SIGINT)
	}
	return proc.Signal(p.tree.Leader, syscall.SIGINT)
}

// Run sends one cell to the worker.
func (p *process) Run(cell int, code string) error {
	msg := fmt.Appendf(nil, "exec %d %d %d\n", cell, p.valueLim, len(code))
	msg = append(msg, code...)
	p.cmdMu.Lock()
	defer p.cmdMu.Unlock()
	if _, err := p.cmds.Write(msg); err != nil {
		return fmt.Errorf("cannot send the cell to the worker (it may have died): %w", err)
	}
	return nil
}

// readEvents reads hello and done messages from fd 4.
func (p *process) readEvents(r *os.File) {
	defer r.Close()
	defer close(p.dones)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	greeted := false
	for sc.Scan() {
		hello, done, flushed := parseEvent(sc.Bytes())
		switch {
		case hello != nil:
			if !greeted {
				greeted = true
				p.hello = *hello
				close(p.helloed)
			}
		case done != nil:
			if p.r.Hint != nil {
				done.Hint = p.r.Hint(*done)
			}
			if flushed {
				p.dones <- *done // the output reader delivers it after the marker
				break
			}
			r := *done
			p.deliver(func() { p.h.CellDone(r) })
		}
	}
}

// maxNames bounds the names a worker may report for one cell.
const maxNames = 10000

// parseEvent reads one line of a worker's events: a hello, a cell's
// result (and whether its output was flushed), or nothing it knows. A
// result is held to what the session can show: a known status, an error
// when it failed, a bounded list of names.
func parseEvent(line []byte) (hello *helloMsg, done *driver.Result, flushed bool) {
	var head struct {
		Op string `json:"op"`
	}
	if json.Unmarshal(line, &head) != nil {
		return nil, nil, false
	}
	switch head.Op {
	case "hello":
		var hm helloMsg
		if json.Unmarshal(line, &hm) == nil {
			return &hm, nil, false
		}
	case "done":
		var dm doneMsg
		if json.Unmarshal(line, &dm) == nil {
			r := resultOf(dm)
			return nil, &r, dm.Flushed
		}
	}
	return nil, nil, false
}

func resultOf(dm doneMsg) driver.Result {
	r := driver.Result{
		Cell: dm.Cell, Status: dm.Status, Error: dm.Error,
		Names: dm.Names, Note: dm.Note, ValueTotal: dm.ValueTotal, ValueName: dm.ValueName,
	}
	switch {
	case dm.Value != nil:
		r.Value = *dm.Value
	case dm.ValueHead != "" || dm.ValueTail != "":
		head, tail := utf8.RuneCountInString(dm.ValueHead), utf8.RuneCountInString(dm.ValueTail)
		r.ValueTotal = max(r.ValueTotal, head+tail)
		r.Value = dm.ValueHead + bound.Marker(r.ValueTotal-head-tail) + dm.ValueTail
		r.ValueCut = &bound.Cut{Total: r.ValueTotal, Head: head, Tail: tail}
	}
	switch r.Status {
	case "":
		r.Status = api.StatusDone
	case api.StatusDone, api.StatusError, api.StatusInterrupted:
	default:
		r.Error = &api.CellError{Type: "WorkerError", Message: fmt.Sprintf("the worker reported the unknown status %q", r.Status)}
		r.Status = api.StatusError
	}
	if r.Status == api.StatusError && r.Error == nil {
		r.Error = &api.CellError{Type: "Error", Message: "the cell failed (the runtime said no more)"}
	}
	if len(r.Names) > maxNames {
		r.Names = r.Names[:maxNames]
	}
	return r
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
		p.h.Output(b)
	}
}

// cellEnded waits for the done message that follows a marker.
func (p *process) cellEnded() {
	select {
	case r, ok := <-p.dones:
		if ok {
			p.deliver(func() { p.h.CellDone(r) })
		}
	case <-time.After(sentinelWait):
	}
}

// wait reaps the worker and reports its exit once its output is read,
// or shortly after if a surviving child still holds the pipe open.
func (p *process) wait() {
	driver.Reap(p.cmd, p.exited, p.outEOF, func() {
		p.cmdMu.Lock()
		p.cmds.Close()
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

// writeWorker puts an embedded worker in dir under a name derived from
// its content, so daemons of different versions never overwrite each
// other's worker while sessions run it.
func writeWorker(dir, name string, source []byte) (string, error) {
	sum := sha256.Sum256(source)
	ext := filepath.Ext(name)
	path := filepath.Join(dir, strings.TrimSuffix(name, ext)+"-"+hex.EncodeToString(sum[:6])+ext)
	if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, source) {
		return path, nil
	}
	tmp, err := os.CreateTemp(dir, ".worker-*"+ext)
	if err != nil {
		return "", fmt.Errorf("cannot write the %s worker into %s: %w", name, dir, err)
	}
	_, werr := tmp.Write(source)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("cannot write the %s worker into %s: %w", name, dir, errors.Join(werr, cerr))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("cannot write the %s worker into %s: %w", name, dir, err)
	}
	return path, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}
