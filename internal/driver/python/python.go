// Package python is the worker driver for Python: it runs an embedded
// worker program (worker.py) in the user's interpreter and speaks a framed
// protocol with it over pipes, for exact output capture, real interrupts and
// structured results.
package python

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
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

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/proc"
	"golang.org/x/sys/unix"
)

//go:embed worker.py
var workerSource []byte

// StartTimeout bounds how long an interpreter may take to greet; a pyenv
// shim or a slow network home can take seconds, a hung one forever.
const StartTimeout = 30 * time.Second

// sentinelWait bounds how long a finished cell waits for the end marker
// on its output pipe. The worker writes the marker before reporting the
// cell done, so it is normally already there; a cell that redirected fd 1
// elsewhere would otherwise stall the session.
const sentinelWait = 5 * time.Second

// outputPipeSize is the capacity asked for the output pipe (the default
// /proc/sys/fs/pipe-max-size allows it to any user).
const outputPipeSize = 1 << 20

func init() { driver.Register(Driver{}) }

// Driver starts Python sessions.
type Driver struct{}

// Name implements driver.Driver.
func (Driver) Name() string { return "python" }

// DefaultExe is $POLYREPL_PYTHON from the caller's environment, else
// python3 on the caller's PATH.
func (Driver) DefaultExe(env []string) string {
	if p := driver.Getenv(env, "POLYREPL_PYTHON"); p != "" {
		return p
	}
	return "python3"
}

// Start implements driver.Driver.
func (d Driver) Start(ctx context.Context, spec driver.Spec, h driver.Handler) (driver.Process, error) {
	exe, err := driver.LookPath(spec.Exe, spec.Env, spec.Cwd)
	if err != nil {
		return nil, err
	}
	script, err := writeWorker(spec.RuntimeDir)
	if err != nil {
		return nil, err
	}
	var nonce [12]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, fmt.Errorf("cannot make a session nonce: %w", err)
	}
	sentinel := "\x01polyrepl-end-" + hex.EncodeToString(nonce[:]) + "\x02"

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
	cmd := &exec.Cmd{
		Path:        exe,
		Args:        []string{exe, "-u", script, sentinel},
		Dir:         spec.Cwd,
		Env:         append(append([]string(nil), spec.Env...), spec.Cookie),
		Stdout:      outW,
		Stderr:      outW,
		ExtraFiles:  []*os.File{cmdR, evW},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		closeAll(outR, outW, cmdR, cmdW, evR, evW)
		return nil, fmt.Errorf("cannot start %s: %w", exe, err)
	}
	closeAll(outW, cmdR, evW)
	start, _ := proc.StartTime(cmd.Process.Pid)
	p := &process{
		cmd:      cmd,
		h:        h,
		cmds:     cmdW,
		exe:      exe,
		sentinel: []byte(sentinel),
		dones:    make(chan driver.Result, 4),
		hello:    make(chan helloMsg, 1),
		exited:   make(chan driver.Exit, 1),
		outEOF:   make(chan struct{}),
		valueLim: spec.ValueLimit,
		tree: proc.Tree{
			Leader: proc.Proc{PID: cmd.Process.Pid, Start: start},
			Cookie: spec.Cookie,
		},
	}
	go p.readEvents(evR)
	go p.readOutput(outR)
	go p.wait()

	timer := time.NewTimer(StartTimeout)
	defer timer.Stop()
	select {
	case hm := <-p.hello:
		p.version = hm.Version
		if hm.Executable != "" {
			p.exe = hm.Executable
		}
		p.mu.Lock()
		early := p.early.Bytes()
		p.ready = true
		if len(early) > 0 {
			h.Output(early)
		}
		p.early = bytes.Buffer{}
		p.mu.Unlock()
		return p, nil
	case ex := <-p.exited:
		<-p.outEOFOrSoon()
		return nil, fmt.Errorf("%s did not start a Python session: it %s before it was ready%s; is it Python 3.8 or newer? Choose one with --python or $POLYREPL_PYTHON",
			spec.Exe, describeExit(ex), p.earlyText())
	case <-timer.C:
	case <-ctx.Done():
	}
	p.tree.Kill(500 * time.Millisecond)
	<-p.outEOFOrSoon()
	return nil, fmt.Errorf("%s did not become ready within %s%s; is it a Python 3.8+ interpreter? Choose one with --python or $POLYREPL_PYTHON",
		spec.Exe, StartTimeout, p.earlyText())
}

type helloMsg struct {
	Version    string `json:"version"`
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
	Error      *api.CellError `json:"error"`
	Names      []string       `json:"names"`
	Note       string         `json:"note"`
	Flushed    bool           `json:"flushed"`
}

// process is one running worker. Its handler is called under mu, which
// keeps the calls from the output and event readers in order.
type process struct {
	cmd      *exec.Cmd
	h        driver.Handler
	tree     proc.Tree
	exe      string
	version  string
	sentinel []byte
	valueLim int

	cmdMu sync.Mutex
	cmds  *os.File

	mu     sync.Mutex
	ready  bool         // hello received; output goes to h
	done   bool         // Exited was called; nothing more goes to h
	early  bytes.Buffer // output before hello, for the error message
	dones  chan driver.Result
	hello  chan helloMsg
	exited chan driver.Exit
	outEOF chan struct{}
}

func (p *process) PID() int        { return p.cmd.Process.Pid }
func (p *process) Tree() proc.Tree { return p.tree }
func (p *process) Version() string { return p.version }
func (p *process) Exe() string     { return p.exe }

// Interrupt raises KeyboardInterrupt in the running cell. First SIGINT to
// the worker, as a terminal's Ctrl-C would; if the cell runs on, it is
// probably waiting on a child (os.system ignores SIGINT meanwhile): SIGUSR2
// to the worker, which raises as soon as the wait returns, and SIGINT to the
// whole process group to end that child.
func (p *process) Interrupt(attempt int) error {
	switch attempt {
	case 0:
		return proc.Signal(p.tree.Leader, syscall.SIGINT)
	case 1:
		if err := proc.Signal(p.tree.Leader, syscall.SIGUSR2); err != nil {
			return err
		}
		return p.tree.SignalGroup(syscall.SIGINT)
	default:
		return proc.Signal(p.tree.Leader, syscall.SIGUSR2)
	}
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
	for sc.Scan() {
		line := sc.Bytes()
		var head struct {
			Op string `json:"op"`
		}
		if json.Unmarshal(line, &head) != nil {
			continue
		}
		switch head.Op {
		case "hello":
			var hm helloMsg
			if json.Unmarshal(line, &hm) == nil {
				p.hello <- hm
			}
		case "done":
			var dm doneMsg
			if json.Unmarshal(line, &dm) != nil {
				continue
			}
			r := p.toResult(dm)
			if dm.Flushed {
				p.dones <- r // the output reader delivers it after the marker
			} else {
				p.deliver(func() { p.h.CellDone(r) })
			}
		}
	}
}

func (p *process) toResult(dm doneMsg) driver.Result {
	r := driver.Result{
		Cell: dm.Cell, Status: dm.Status, Error: dm.Error,
		Names: dm.Names, Note: dm.Note, ValueTotal: dm.ValueTotal,
	}
	switch {
	case dm.Value != nil:
		r.Value = *dm.Value
	case dm.ValueHead != "" || dm.ValueTail != "":
		r.Value = dm.ValueHead + fmt.Sprintf("\n[… %d characters cut …]\n", dm.ValueTotal-len([]rune(dm.ValueHead))-len([]rune(dm.ValueTail))) + dm.ValueTail
		r.ValueCut = true
	}
	if r.Status == "" {
		r.Status = api.StatusDone
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
	var carry []byte // bytes at the end of the last read that may start a marker
	var work []byte
	for {
		n, err := r.Read(buf)
		data := buf[:n]
		if len(carry) > 0 && n > 0 {
			work = append(append(work[:0], carry...), data...)
			data = work
			carry = carry[:0]
		}
		for len(data) > 0 {
			i := bytes.Index(data, p.sentinel)
			if i < 0 {
				k := markerPrefixLen(data, p.sentinel)
				p.output(data[:len(data)-k])
				carry = append(carry[:0], data[len(data)-k:]...)
				break
			}
			p.output(data[:i])
			data = data[i+len(p.sentinel):]
			p.cellEnded()
		}
		if err != nil {
			if len(carry) > 0 {
				p.output(carry)
			}
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
		if p.early.Len() < 8192 {
			p.early.Write(b[:min(len(b), 8192-p.early.Len())])
		}
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

// markerPrefixLen is the length of the longest suffix of data that is a
// proper prefix of marker: bytes to hold back until the next read.
func markerPrefixLen(data, marker []byte) int {
	max := len(marker) - 1
	if max > len(data) {
		max = len(data)
	}
	for k := max; k > 0; k-- {
		if bytes.Equal(data[len(data)-k:], marker[:k]) {
			return k
		}
	}
	return 0
}

// wait reaps the worker and reports its exit once its output is read,
// or shortly after if a surviving child still holds the pipe open.
func (p *process) wait() {
	err := p.cmd.Wait()
	ex := driver.Exit{Code: -1}
	var ee *exec.ExitError
	switch {
	case err == nil:
		ex.Code = 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			ex.Signal = int(ws.Signal())
		} else {
			ex.Code = ee.ExitCode()
		}
	default:
		ex.Err = err
	}
	p.cmdMu.Lock()
	p.cmds.Close()
	p.cmdMu.Unlock()
	p.exited <- ex
	<-p.outEOFOrSoon()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ready && !p.done {
		p.done = true
		p.h.Exited(ex)
	}
	p.done = true
}

// outEOFOrSoon closes when the output pipe reached EOF or after a short
// grace, whichever is first.
func (p *process) outEOFOrSoon() <-chan struct{} {
	c := make(chan struct{})
	go func() {
		defer close(c)
		select {
		case <-p.outEOF:
		case <-time.After(300 * time.Millisecond):
		}
	}()
	return c
}

func (p *process) earlyText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := strings.TrimSpace(strings.ToValidUTF8(p.early.String(), "\uFFFD"))
	if t == "" {
		return ""
	}
	return "; it printed:\n" + t
}

func describeExit(ex driver.Exit) string {
	switch {
	case ex.Signal != 0:
		return fmt.Sprintf("was killed by signal %d (%s)", ex.Signal, syscall.Signal(ex.Signal))
	case ex.Err != nil:
		return fmt.Sprintf("failed (%v)", ex.Err)
	default:
		return fmt.Sprintf("exited with status %d", ex.Code)
	}
}

// writeWorker puts the embedded worker in dir under a name derived from
// its content, so daemons of different versions never overwrite each
// other's worker while sessions run it.
func writeWorker(dir string) (string, error) {
	sum := sha256.Sum256(workerSource)
	path := filepath.Join(dir, "python-worker-"+hex.EncodeToString(sum[:6])+".py")
	if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, workerSource) {
		return path, nil
	}
	tmp, err := os.CreateTemp(dir, ".worker-*.py")
	if err != nil {
		return "", fmt.Errorf("cannot write the Python worker into %s: %w", dir, err)
	}
	_, werr := tmp.Write(workerSource)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("cannot write the Python worker into %s: %w", dir, errors.Join(werr, cerr))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("cannot write the Python worker into %s: %w", dir, err)
	}
	return path, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}
