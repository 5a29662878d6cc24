package holder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// Command is the hidden subcommand a holder runs as: `polyrepl holder
// NAME` in ps once it keeps session NAME (see setTitle).
const Command = "holder"

// dialWait bounds how long taking up a holder waits for its hello.
const dialWait = 10 * time.Second

// Child is a holder this daemon started, as its parent sees it.
type Child struct {
	PID  int
	Done <-chan struct{} // closed once it has exited (and been reaped)
	err  error
}

// Err is how the holder exited, once Done is closed.
func (c *Child) Err() error { return c.err }

// Launcher starts a holder for a brief: it returns the daemon's end of
// the holder's first connection, over which the brief is sent.
type Launcher interface {
	Launch(sp Brief) (*net.UnixConn, *Child, error)
}

// Reexec starts each holder as a process of its own: the running binary
// re-executed (selfExe), in a process session
// of its own, so that it outlives the daemon.
//
// Starting one costs a process and the binary's start (about 20 ms on a
// small VM, most of a session's creation besides the runtime's own), so
// after each Launch one is started ahead, a spare, which waits for its
// brief: the next session's creation does not wait for it. A spare
// (`polyrepl holder` with no session name after it in ps) ends with the
// daemon, whose end of its socket pair closes, or at Close.
type Reexec struct {
	mu     sync.Mutex
	spare  *launched
	closed bool
}

// launched is a holder started, waiting for its brief.
type launched struct {
	conn  *net.UnixConn
	child *Child
}

// Launch implements Launcher.
func (e *Reexec) Launch(sp Brief) (*net.UnixConn, *Child, error) {
	e.mu.Lock()
	l := e.spare
	e.spare = nil
	e.mu.Unlock()
	if l != nil && l.ended() {
		l.conn.Close()
		l = nil
	}
	if l == nil {
		var err error
		if l, err = startHolder(); err != nil {
			return nil, nil, err
		}
	}
	return l.conn, l.child, nil
}

// started implements the launchers' hook that Start calls once the
// holder it launched answered: the next spare starts now, not while the
// session's runtime starts, which it would slow down.
func (e *Reexec) started() {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if !closed {
		go e.refill()
	}
}

// refill starts a spare, unless there is one.
func (e *Reexec) refill() {
	l, err := startHolder()
	if err != nil {
		log.Printf("cannot start a spare holder: %v", err)
		return
	}
	e.mu.Lock()
	if e.spare == nil && !e.closed {
		e.spare, l = l, nil
	}
	e.mu.Unlock()
	if l != nil {
		l.end()
	}
}

// Close ends the spare, for a daemon that stops: no holder is left that
// keeps no session.
func (e *Reexec) Close() {
	e.mu.Lock()
	l := e.spare
	e.spare, e.closed = nil, true
	e.mu.Unlock()
	if l != nil {
		l.end()
	}
}

// ended reports whether the holder has exited already.
func (l *launched) ended() bool {
	select {
	case <-l.child.Done:
		return true
	default:
		return false
	}
}

// end lets a holder that was sent no brief go: it reads the end of its
// socket and exits.
func (l *launched) end() {
	l.conn.Close()
	select {
	case <-l.child.Done:
	case <-time.After(2 * time.Second):
		syscall.Kill(l.child.PID, syscall.SIGKILL)
		<-l.child.Done
	}
}

// startHolder starts a holder process, which waits for its brief.
func startHolder() (*launched, error) {
	ours, theirs, err := socketPair()
	if err != nil {
		return nil, err
	}
	defer theirs.Close()
	cmd := &exec.Cmd{
		Path: selfExe(), Args: []string{"polyrepl", Command, titleRoom}, Dir: "/",
		ExtraFiles:  []*os.File{theirs}, // fd 3
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		ours.Close()
		return nil, fmt.Errorf("cannot start a holder (%s %s): %w", cmd.Path, Command, err)
	}
	done := make(chan struct{})
	ch := &Child{PID: cmd.Process.Pid, Done: done}
	go func() {
		ch.err = cmd.Wait()
		close(done)
	}()
	return &launched{conn: ours, child: ch}, nil
}

// InProcess runs each holder's code in the calling process: the same
// protocol, output logs and driver calls, without the process of its own.
// It is for the tests of the daemon's packages, whose fake runtimes are
// registered in the test binary.
type InProcess struct{}

// Launch implements Launcher.
func (InProcess) Launch(sp Brief) (*net.UnixConn, *Child, error) {
	ours, theirs, err := socketPair()
	if err != nil {
		return nil, nil, err
	}
	c, err := net.FileConn(theirs)
	theirs.Close()
	if err != nil {
		ours.Close()
		return nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := newHolderWire(c.(*net.UnixConn))
		s, err := serveSpawn(w)
		if err != nil {
			w.close()
			return
		}
		<-s.end
	}()
	return ours, &Child{PID: os.Getpid(), Done: done}, nil
}

// socketPair makes a connected pair: the daemon's end as a connection,
// the holder's as a file to pass on.
func socketPair() (*net.UnixConn, *os.File, error) {
	fds, err := rawPair()
	if err != nil {
		return nil, nil, fmt.Errorf("cannot make a socket pair for a holder: %w", err)
	}
	f := os.NewFile(uintptr(fds[0]), "holder")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		unix.Close(fds[1])
		return nil, nil, err
	}
	return c.(*net.UnixConn), os.NewFile(uintptr(fds[1]), "daemon"), nil
}

// Start starts a holder and, through it, the session's runtime. It
// returns once the runtime is ready, or with why it did not start; on
// failure nothing of either is left.
func Start(ctx context.Context, l Launcher, sp Brief) (*Process, error) {
	c, child, err := l.Launch(sp)
	if err != nil {
		return nil, err
	}
	if h, ok := l.(interface{ started() }); ok {
		defer h.started()
	}
	w := newWire(c)
	fail := func(err error) (*Process, error) {
		w.close()
		// A holder that got no answer to give may still be starting the
		// runtime: it must not keep a session nobody will know of.
		select {
		case <-child.Done:
		case <-time.After(2 * time.Second):
			if child.PID != os.Getpid() {
				syscall.Kill(child.PID, syscall.SIGKILL)
				<-child.Done
			}
		}
		proc.Tree{Cookie: sp.Cookie}.Kill(endGrace)
		os.Remove(sp.Socket)
		return nil, err
	}
	if err := w.sendJSON(frameBrief, sp); err != nil {
		return fail(fmt.Errorf("cannot reach the session's holder: %w", err))
	}
	// The runtime's own start is bounded by driver.StartTimeout, after
	// which the holder answers with why.
	deadline := time.Now().Add(driver.StartTimeout + 10*time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.SetReadDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
	typ, b, err := w.read()
	if err == nil && typ == frameForkReady {
		// A fork's holder made the copy's channels: the parent's holder
		// forks into them, and the new holder goes on to its hello.
		if ferr := forkThrough(w, b, sp.ForkFrom); ferr != nil {
			stop()
			return fail(ferr)
		}
		typ, b, err = w.read()
	}
	stop()
	c.SetReadDeadline(time.Time{})
	switch {
	case err != nil && ctx.Err() != nil:
		return fail(ctx.Err())
	case err != nil:
		select {
		case <-child.Done:
			return fail(fmt.Errorf("the session's holder %s before the runtime was ready", driver.ExitOf(child.Err()).Describe()))
		case <-time.After(time.Second):
		}
		return fail(fmt.Errorf("the session's holder did not answer: %w", err))
	case typ == frameFailed:
		var f failure
		json.Unmarshal(b, &f)
		f.Err = api.Clip(f.Err, failureLimit, "the holder's failure")
		if f.Sandbox {
			return fail(&SandboxError{Msg: f.Err})
		}
		return fail(errors.New(f.Err))
	case typ != frameHello:
		return fail(fmt.Errorf("the session's holder answered with a frame of type %q", typ))
	}
	hello, err := decodeHello(b)
	if err != nil {
		return fail(fmt.Errorf("the session's holder sent a hello this daemon cannot read: %w", err))
	}
	start, _ := proc.StartTime(child.PID)
	p := newProcess(w, hello, sp.Socket, proc.Proc{PID: child.PID, Start: start})
	p.child = child
	return p, nil
}

// ProtoError is a holder this daemon cannot take up: it speaks another
// protocol. Hello holds what every protocol says first: whose session it
// keeps, and how to end it.
type ProtoError struct {
	Hello  Hello
	Holder proc.Proc
	Socket string
}

func (e *ProtoError) Error() string {
	return fmt.Sprintf("session %q is kept by a holder of polyrepl %s speaking holder protocol %d; this daemon speaks %d to %d",
		e.Hello.Name, e.Hello.Polyrepl, e.Hello.Proto, MinProto, Proto)
}

// ErrHeld is a holder's refusal to serve a daemon because another one
// holds its session now: a session another daemon keeps, which this one
// must neither take nor end.
var ErrHeld = errors.New("another daemon holds its session")

// Dial takes up the session a holder keeps, at its socket, waiting up
// to dialWait for its hello (see DialContext).
func Dial(path string) (*Process, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dialWait)
	defer cancel()
	return DialContext(ctx, path)
}

// redialEvery bounds the pause between attempts to connect to a holder
// whose socket's queue of connections is full (a stopped holder that
// earlier daemons knocked at): it is tried again until ctx ends.
const redialEvery = 5 * time.Second

// DialContext takes up the session a holder keeps, at its socket: the
// holder must run as this user, and speak a protocol this daemon does.
// It waits for the hello on one connection until ctx ends, however long
// that is: a holder that was stopped (SIGSTOP) answers the connection
// waiting in its queue once it runs again, and one that never answers
// costs a descriptor and a goroutine, not the daemon's start. The events
// it kept for this daemon come once the Process is Started.
func DialContext(ctx context.Context, path string) (*Process, error) {
	c, err := connect(ctx, path)
	if err != nil {
		return nil, err
	}
	uid, pid, err := paths.Peer(c)
	if err != nil {
		c.Close()
		return nil, err
	}
	if uid != os.Getuid() {
		c.Close()
		return nil, fmt.Errorf("refusing the holder at %s: it runs as uid %d, not as you (uid %d)", path, uid, os.Getuid())
	}
	w := newWire(c)
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
	typ, b, err := w.read()
	stop()
	c.SetReadDeadline(time.Time{})
	if err != nil {
		w.close()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("the holder at %s did not say hello: %w", path, err)
	}
	switch typ {
	case frameHello:
	case frameRefused:
		var f failure
		json.Unmarshal(b, &f)
		w.close()
		return nil, fmt.Errorf("the holder at %s refused (%s): %w", path, f.Err, ErrHeld)
	default:
		w.close()
		return nil, fmt.Errorf("the holder at %s answered with a frame of type %q", path, typ)
	}
	start, _ := proc.StartTime(pid)
	holder := proc.Proc{PID: pid, Start: start}
	// What every protocol says first, read alone: a holder of another
	// protocol is reported, not misread.
	var head struct {
		Proto      int       `json:"proto"`
		Polyrepl   string    `json:"polyrepl"`
		HolderPID  int       `json:"holder_pid"`
		Name       string    `json:"name"`
		Generation string    `json:"generation"`
		Runtime    string    `json:"runtime"`
		Cookie     string    `json:"cookie"`
		Leader     proc.Proc `json:"leader"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		w.close()
		return nil, fmt.Errorf("the holder at %s sent a hello this daemon cannot read: %w", path, err)
	}
	if head.Proto < MinProto || head.Proto > Proto {
		w.close()
		return nil, &ProtoError{Hello: Hello{Proto: head.Proto, Polyrepl: head.Polyrepl, HolderPID: head.HolderPID, Name: head.Name,
			Generation: head.Generation, Runtime: head.Runtime, Cookie: head.Cookie, Leader: head.Leader}, Holder: holder, Socket: path}
	}
	hello, err := decodeHello(b)
	if err != nil {
		w.close()
		return nil, fmt.Errorf("the holder at %s sent a hello this daemon cannot read: %w", path, err)
	}
	return newProcess(w, hello, path, holder), nil
}

// decodeHello reads a holder's hello, which a holder of another build
// may have sent: its runtime's facts are held to driver.Info's bounds
// and what its sandbox enforces to api.Enforced's, here, where they
// enter the daemon. A holder of an older build sends
// none: its runtime's facts are then this binary's (driver.Facts), or
// neutral ones for a runtime it has no driver for, with which the
// session goes on (only a restart says what is missing).
func decodeHello(b []byte) (Hello, error) {
	var h Hello
	if err := json.Unmarshal(b, &h); err != nil {
		return Hello{}, err
	}
	if h.Facts.Name == "" {
		h.Facts = driver.Facts(h.Runtime)
	}
	h.Facts = h.Facts.Bounded()
	h.Enforced = h.Enforced.Bounded()
	h.Checkpoints = boundCheckpoints(h.Checkpoints)
	h.Spare = boundSpare(h.Spare)
	return h, nil
}

// connect connects to the socket at path, again while its queue of
// connections is full (EAGAIN), until ctx ends.
func connect(ctx context.Context, path string) (*net.UnixConn, error) {
	pause := 100 * time.Millisecond
	for {
		var d net.Dialer
		c, err := d.DialContext(ctx, "unix", path)
		if err == nil {
			return c.(*net.UnixConn), nil
		}
		if !errors.Is(err, syscall.EAGAIN) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (its queue of connections was full)", ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, redialEvery)
	}
}

// SocketName is where the holder of generation gen listens, in dir.
func SocketName(dir, gen string) string { return filepath.Join(dir, gen+".sock") }

// Sockets lists the holders' sockets in dir, oldest first.
func Sockets(dir string) []string {
	found, _ := filepath.Glob(filepath.Join(dir, "*.sock"))
	sort.Slice(found, func(i, j int) bool {
		a, _ := os.Stat(found[i])
		b, _ := os.Stat(found[j])
		return a != nil && b != nil && a.ModTime().Before(b.ModTime())
	})
	return found
}
