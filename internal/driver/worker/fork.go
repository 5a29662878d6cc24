package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/proc"
	"golang.org/x/sys/unix"
)

// A worker of a runtime with Forks copies itself between cells: the
// driver writes "fork NBYTES NONCE\n" and {"dir": DIR, "sentinel":
// MARKER, "cookie": KEY=VALUE} on the command channel; the worker forks,
// and the copy points its channels at DIR's named pipes — cmd
// (commands), out (fds 1 and 2), ev (events) and con (its console, for a
// Console runtime) — which the side adopting it made and opened first
// (Channels), and says hello there as a worker that just started, with
// MARKER as its end marker and the cookie in its environment (so what it
// starts is the adopting session's). The parent answers on its own event
// channel, printing nothing:
//
//	{"op": "fork", "nonce": NONCE, "pid": PID, "threads": […],
//	 "threads_total": N, "shared": […], "shared_total": N,
//	 "children": […], "children_total": N}
//
// or {"op": "fork", "nonce": NONCE, "error": "…"}.

// Channels are the named pipes a fork's copy speaks on, in a directory its
// runtime may open (the parent session's driver directory, which its
// sandbox allows), made and opened here before the fork is asked for, so
// that no open on either side waits: this side holds a writer of each
// pipe the copy reads and a reader of each it writes.
type Channels struct {
	Dir     string
	Marker  string   // the copy's end marker, new for it
	cmds    *os.File // cmd's write end
	cmdHold *os.File // a reader of cmd until the copy opens its own
	out     *os.File // out's read end
	outHold *os.File // a writer of out: no end of file before the copy opens it
	ev      *os.File
	evHold  *os.File
	console *os.File // con's write end, for a Console runtime
	conKeep *os.File // con's read end, kept to open the write end again
}

// MakeChannels makes the named pipes for a fork's copy in a new directory
// under parent.
func MakeChannels(parent string, console bool) (*Channels, error) {
	dir, err := os.MkdirTemp(parent, "fork-")
	if err != nil {
		return nil, fmt.Errorf("cannot make the fork's channels: %w", err)
	}
	nonce, err := driver.Nonce(12)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c := &Channels{Dir: dir, Marker: "\x01polyrepl-end-" + nonce + "\x02"}
	names := []string{"cmd", "out", "ev"}
	if console {
		names = append(names, "con")
	}
	for _, n := range names {
		if err := unix.Mkfifo(filepath.Join(dir, n), 0o600); err != nil {
			c.Close()
			return nil, fmt.Errorf("cannot make the fork's channel %s: %w", n, err)
		}
	}
	open := func(name string, flag int) (*os.File, error) {
		return os.OpenFile(filepath.Join(dir, name), flag|syscall.O_CLOEXEC, 0)
	}
	// A reader first (a non-blocking open of a pipe's read end never
	// waits), then a writer, which a reader lets open at once.
	type step struct {
		f    **os.File
		name string
		flag int
	}
	steps := []step{
		{&c.cmdHold, "cmd", os.O_RDONLY | syscall.O_NONBLOCK}, {&c.cmds, "cmd", os.O_WRONLY},
		{&c.out, "out", os.O_RDONLY | syscall.O_NONBLOCK}, {&c.outHold, "out", os.O_WRONLY},
		{&c.ev, "ev", os.O_RDONLY | syscall.O_NONBLOCK}, {&c.evHold, "ev", os.O_WRONLY},
	}
	if console {
		steps = append(steps, step{&c.conKeep, "con", os.O_RDONLY | syscall.O_NONBLOCK}, step{&c.console, "con", os.O_WRONLY})
	}
	for _, s := range steps {
		if *s.f, err = open(s.name, s.flag); err != nil {
			c.Close()
			return nil, fmt.Errorf("cannot open the fork's channel %s: %w", s.name, err)
		}
	}
	return c, nil
}

// Close closes what the channels still hold here and removes the
// directory (the copy's open pipes outlive their names).
func (c *Channels) Close() {
	for _, f := range []*os.File{c.cmds, c.cmdHold, c.out, c.outHold, c.ev, c.evHold, c.console, c.conKeep} {
		if f != nil {
			f.Close()
		}
	}
	os.RemoveAll(c.Dir)
}

// forking is a fork asked for, waiting for its event.
type forking struct {
	nonce string
	ch    chan forkEvent
}

type forkEvent struct {
	driver.Forked
	Nonce string `json:"nonce"`
	Error string `json:"error"`
}

// Fork implements driver.Forker. It holds the command channel until the
// worker answers, so that no cell is sent meanwhile: a command read with
// the fork's would be read by the copy too.
func (p *process) Fork(into driver.ForkInto, wait time.Duration) (driver.Forked, error) {
	if !p.r.Forks {
		return driver.Forked{}, fmt.Errorf("the %s runtime cannot fork", p.r.Name)
	}
	nonce, err := driver.Nonce(8)
	if err != nil {
		return driver.Forked{}, err
	}
	f := &forking{nonce: nonce, ch: make(chan forkEvent, 1)}
	p.evMu.Lock()
	switch {
	case p.inflight != nil || p.pending != nil:
		p.evMu.Unlock()
		return driver.Forked{}, driver.ErrCellRuns
	case p.look != nil || p.comp != nil || p.forking != nil:
		p.evMu.Unlock()
		return driver.Forked{}, errors.New("the worker is answering another question: ask again")
	}
	p.forking = f
	p.evMu.Unlock()
	defer func() {
		p.evMu.Lock()
		if p.forking == f {
			p.forking = nil
		}
		p.evMu.Unlock()
	}()
	args, err := json.Marshal(map[string]string{"dir": into.Dir, "sentinel": into.Marker, "cookie": into.Cookie})
	if err != nil {
		return driver.Forked{}, err
	}
	p.cmdMu.Lock()
	defer p.cmdMu.Unlock()
	if _, err := p.cmds.Write(append(fmt.Appendf(nil, "fork %d %s\n", len(args), nonce), args...)); err != nil {
		return driver.Forked{}, fmt.Errorf("cannot ask the worker to fork (it may have died): %w", err)
	}
	select {
	case ev := <-f.ch:
		if ev.Error != "" {
			return driver.Forked{}, errors.New(api.Clip(ev.Error, 400, "error"))
		}
		if ev.PID <= 0 {
			return driver.Forked{}, errors.New("the worker forked but did not say the copy's pid")
		}
		p.giveAway(ev.PID)
		return ev.Forked.Bounded(), nil
	case <-time.After(wait):
		return driver.Forked{}, fmt.Errorf("the %s runtime did not fork within %s", p.r.Name, wait)
	case <-p.evEOF:
		return driver.Forked{}, fmt.Errorf("the %s runtime ended", p.r.Name)
	}
}

// giveAway leaves the copy pid out of the worker's tree from now on (it
// is its child, and carries its cookie until it takes another), and
// forgets the copies that have ended.
func (p *process) giveAway(pid int) {
	start, err := proc.StartTime(pid)
	p.evMu.Lock()
	defer p.evMu.Unlock()
	p.spare = slices.DeleteFunc(p.spare, func(c proc.Proc) bool { return !proc.Alive(c) })
	if err == nil {
		p.spare = append(p.spare, proc.Proc{PID: pid, Start: start})
	}
}

// forked takes a fork's event, if line is one that was asked for: true if
// line was a fork's event at all.
func (p *process) forked(line []byte) bool {
	if eventHead(line).op != "fork" {
		return false
	}
	var ev forkEvent
	if json.Unmarshal(line, &ev) != nil {
		return true
	}
	p.evMu.Lock()
	f := p.forking
	if f != nil && f.nonce == ev.Nonce {
		p.forking = nil
	} else {
		f = nil
	}
	p.evMu.Unlock()
	if f != nil {
		f.ch <- ev
	}
	return true
}

// Into is where a fork's copy goes to speak on these channels.
func (c *Channels) Into() driver.ForkInto { return driver.ForkInto{Dir: c.Dir, Marker: c.Marker} }

// ForkChannels implements driver.Adopter: the channels of a copy of a
// worker of d's runtime, with a console if the runtime has one.
func (d Driver) ForkChannels(dir string) (driver.ForkChannels, error) {
	if !d.R.Forks {
		return nil, fmt.Errorf("the %s runtime cannot fork", d.R.Name)
	}
	c, err := MakeChannels(dir, d.R.ConsoleFirst != nil || (d.R.Console && proc.SeesStdinReads()))
	if err != nil {
		return nil, err
	}
	return adoption{d, c}, nil
}

// adoption is a driver.ForkChannels of the worker family.
type adoption struct {
	d Driver
	c *Channels
}

func (a adoption) Into() driver.ForkInto { return a.c.Into() }
func (a adoption) Close()                { a.c.Close() }
func (a adoption) Adopt(ctx context.Context, spec driver.Spec, pid int, h driver.Handler) (driver.Process, error) {
	return a.d.Adopt(ctx, spec, a.c, pid, h)
}

// Adopt makes the copy a fork left on c's channels a Process of this
// runtime, once it says hello: pid is the copy's, and its parent the
// forked runtime, so its end is watched through the kernel
// (proc.AwaitExit) rather than reaped here. c's files pass to the
// process; c.Close still removes the directory.
func (d Driver) Adopt(ctx context.Context, spec driver.Spec, c *Channels, pid int, h driver.Handler) (driver.Process, error) {
	r := d.R
	start, err := proc.StartTime(pid)
	if err != nil {
		return nil, fmt.Errorf("the fork's copy (pid %d) is gone: %w", pid, err)
	}
	p := &process{
		r:        r,
		h:        h,
		cmds:     c.cmds,
		exe:      spec.Exe,
		sentinel: []byte(c.Marker),
		doneSent: make(chan struct{}, 1),
		evEOF:    make(chan struct{}),
		helloed:  make(chan struct{}),
		exited:   make(chan driver.Exit, 1),
		outEOF:   make(chan struct{}),
		valueLim: spec.ValueLimit,
		tree:     proc.Tree{Leader: proc.Proc{PID: pid, Start: start}, Cookie: spec.Cookie},
		console:  c.console,
		conKeep:  c.conKeep,
	}
	if c.console != nil {
		p.outKeep, c.outHold = c.outHold, nil
	}
	c.cmds, c.console, c.conKeep = nil, nil, nil
	if p.console != nil {
		p.startConsole()
	}
	go p.readEvents(c.ev)
	go p.readOutput(c.out)
	c.ev, c.out = nil, nil
	go p.wait()
	select {
	case <-p.helloed:
	case <-p.evEOF:
		return nil, fmt.Errorf("the fork's copy (pid %d) ended before it spoke on its channels", pid)
	case <-ctx.Done():
		p.tree.Kill(500 * time.Millisecond)
		return nil, fmt.Errorf("the fork's copy (pid %d) did not speak on its channels in time", pid)
	}
	// The copy holds its own ends now: what this side held for it goes,
	// so that its end reads as end of file, and a command to it after
	// its end fails.
	for _, f := range []**os.File{&c.cmdHold, &c.evHold, &c.outHold} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
	hm := p.hello
	p.version = hm.Version
	if hm.Executable != "" {
		p.exe = hm.Executable
	}
	p.note = hm.Note
	p.mu.Lock()
	p.ready = true
	if early := p.early.Bytes(); len(early) > 0 {
		h.Output(early)
	}
	p.early.Reset()
	p.mu.Unlock()
	return p, nil
}

// reapAdopted is driver.Reap for a process that is not this one's child:
// its end comes from the kernel, its status from its zombie if the parent
// has not reaped it yet.
func (p *process) reapAdopted(_ *exec.Cmd, exited chan<- driver.Exit, outEOF <-chan struct{}, closeIn func(), report func(driver.Exit)) {
	ws, known, err := proc.AwaitExit(p.tree.Leader)
	ex := driver.Exit{Code: -1, At: time.Now()}
	switch {
	case err != nil:
		ex.Err = err
	case !known:
		ex.Err = errors.New("its exit status was not kept: its parent reaped it first")
	case ws.Signaled():
		ex.Signal = int(ws.Signal())
	default:
		ex.Code = ws.ExitStatus()
	}
	closeIn()
	exited <- ex
	<-driver.OrSoon(outEOF)
	report(ex)
}
