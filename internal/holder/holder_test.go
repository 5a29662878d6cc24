package holder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/proc/proctest"
	"github.com/polyrepl/polyrepl/internal/testenv"

	_ "github.com/polyrepl/polyrepl/internal/driver/python"
)

// TestMain lets this test binary be the holders its tests start: Exec
// runs the running binary as `polyrepl holder`.
func TestMain(m *testing.M) {
	IfHolder()
	os.Exit(m.Run())
}

// python is the interpreter the tests' sessions run, "" if there is
// none (needPython skips then).
var python, _ = testenv.Python()

func needPython(t *testing.T) {
	t.Helper()
	testenv.NeedPython(t)
}

// events records what a holder told its daemon, as a session would.
type events struct {
	mu      sync.Mutex
	out     bytes.Buffer
	done    []driver.Result
	exit    *driver.Exit
	lost    string
	changed chan struct{}
}

func newEvents() *events { return &events{changed: make(chan struct{}, 1)} }

func (e *events) poke() {
	select {
	case e.changed <- struct{}{}:
	default:
	}
}

func (e *events) Output(p []byte) {
	e.mu.Lock()
	e.out.Write(p)
	e.mu.Unlock()
	e.poke()
}

func (e *events) CellDone(r driver.Result) {
	e.mu.Lock()
	e.done = append(e.done, r)
	e.mu.Unlock()
	e.poke()
}

func (e *events) Exited(x driver.Exit) {
	e.mu.Lock()
	e.exit = &x
	e.mu.Unlock()
	e.poke()
}

func (e *events) LogCut(int, int64, string) {}

func (e *events) HolderLost(cause string) {
	e.mu.Lock()
	e.lost = cause
	e.mu.Unlock()
	e.poke()
}

// until waits for cond, under the lock, up to a bound.
func (e *events) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		e.mu.Lock()
		ok := cond()
		e.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-e.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			e.mu.Lock()
			defer e.mu.Unlock()
			t.Fatalf("%s did not happen; output so far %q, results %+v, exit %+v, lost %q", what, clipped(e.out.String()), e.done, e.exit, e.lost)
		}
	}
}

func clipped(s string) string {
	if len(s) > 400 {
		return s[:200] + "…" + s[len(s)-200:]
	}
	return s
}

// world is one test's directories and the spawn of its session.
type world struct {
	t     testing.TB
	dir   string
	spawn Brief
}

func newWorld(t testing.TB) *world {
	dir := testenv.ShortDir(t)
	for _, d := range []string{"runtimes", "spool"} {
		os.Mkdir(filepath.Join(dir, d), 0o700)
	}
	gen := fmt.Sprintf("%012x", time.Now().UnixNano()&0xffffffffffff)
	cwd := t.TempDir()
	return &world{t: t, dir: dir, spawn: Brief{
		Name: "s", Generation: gen, Created: time.Now(),
		Spawn:  api.Spawn{Runtime: "python", Exe: python, Cwd: cwd, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + cwd, "SECRET_IN_ENV=hunter2"}},
		Cookie: "POLYREPL_TEST_HOLDER=" + gen, RuntimeDir: filepath.Join(dir, "runtimes"), ValueLimit: api.ValueLimit,
		SpoolDir: filepath.Join(dir, "spool"), Socket: SocketName(filepath.Join(dir, "holders"), gen), Log: filepath.Join(dir, "holder.log"),
	}}
}

// start starts the session's holder as a process of its own, and
// registers its end.
func (w *world) start() (*Process, *events) {
	w.t.Helper()
	ex := &Reexec{}
	w.t.Cleanup(ex.Close)
	p, err := Start(context.Background(), ex, w.spawn)
	if err != nil {
		w.t.Fatal(err)
	}
	ev := newEvents()
	p.Start(ev)
	w.t.Cleanup(func() {
		holder := p.Holder()
		if q, err := Dial(w.spawn.Socket); err == nil {
			q.Start(newEvents())
			q.End()
		} else {
			p.End()
		}
		if waitGone(holder) {
			w.t.Errorf("the holder (pid %d) was left running", holder.PID)
		}
		if left := proctest.WithVar(w.spawn.Cookie); len(left) > 0 {
			w.t.Errorf("the session's processes were left running:%s", proctest.Describe(left))
		}
	})
	return p, ev
}

// waitGone reports whether p is still alive after a few seconds.
func waitGone(p proc.Proc) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !proc.Alive(p) {
			return false
		}
	}
	return true
}

func run(t *testing.T, p *Process, cell, seq int, code string) {
	t.Helper()
	if err := p.Run(CellMeta{Cell: cell, Seq: seq, Code: code, Started: time.Now()}, code); err != nil {
		t.Fatal(err)
	}
}

// A cell prints while its daemon is gone: the next daemon is told the
// cell, and sent all it printed, in order, then its result; what a reply
// took before the daemon went is counted.
func TestTheNextDaemonGetsEverything(t *testing.T) {
	needPython(t)
	w := newWorld(t)
	p, ev := w.start()
	run(t, p, 1, 7, "x = 41")
	ev.until(t, "cell 1's result", func() bool { return len(ev.done) == 1 })
	p.MarkRead(1, "agent", 0, true)

	whole := filepath.Join(t.TempDir(), "output", "s-9.txt")
	code := "import time\nfor i in range(3000):\n    print(f'line {i:05d}', flush=True)\n    if i % 500 == 0: time.sleep(0.05)\nx + 1"
	if err := p.Run(CellMeta{Cell: 2, Seq: 9, Code: code, Started: time.Now(), Whole: whole}, code); err != nil {
		t.Fatal(err)
	}
	ev.until(t, "the first lines", func() bool { return strings.Contains(ev.out.String(), "line 00010") })
	ev.mu.Lock()
	took := int64(ev.out.Len())
	ev.mu.Unlock()
	p.MarkRead(2, "agent", took, false)
	p.Detach() // the daemon goes
	if err := p.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev.mu.Lock()
	lost := ev.lost
	ev.mu.Unlock()
	if lost != "" {
		t.Fatalf("a daemon that let its holder go was told it was lost: %s", lost)
	}
	time.Sleep(500 * time.Millisecond) // the cell goes on, with nobody listening

	q, err := Dial(w.spawn.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer q.End()
	hi := q.Hello()
	if hi.Name != "s" || hi.Generation != w.spawn.Generation || hi.Cells != 2 || hi.Leader.PID != p.PID() || hi.Proto != Proto {
		t.Errorf("hello: %+v", hi)
	}
	if c := hi.Cur; c == nil || c.Cell != 2 || c.Seq != 9 || c.Read["agent"] != took || !c.InFile || c.Whole != whole {
		t.Errorf("the cell in flight as the holder keeps it: %+v, want cell 2, entry 9, in %s, read by the agent up to %d", c, whole, took)
	}
	for _, kv := range hi.Spawn.Env {
		if kv == "SECRET_IN_ENV=hunter2" {
			goto found
		}
	}
	t.Errorf("the holder does not give the caller's environment back: %v", hi.Spawn.Env)
found:
	ev2 := newEvents()
	q.Start(ev2)
	ev2.until(t, "cell 2's result", func() bool { return len(ev2.done) == 1 })
	ev2.mu.Lock()
	res := ev2.done[0]
	ev2.mu.Unlock()
	var want strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&want, "line %05d\n", i)
	}
	// The cell's output log is its one copy: the whole of it in its
	// file, from its first byte, which the next daemon reads itself.
	if b, err := os.ReadFile(whole); err != nil || string(b) != want.String() {
		t.Errorf("the cell's log holds %d bytes (%v), want all %d lines in order: %q", len(b), err, 3000, clipped(string(b)))
	}
	if res.Cell != 2 || res.Value != "42" {
		t.Errorf("the result: %+v, want cell 2 with value 42", res)
	}
	if logText, _ := os.ReadFile(w.spawn.Log); bytes.Contains(logText, []byte("hunter2")) {
		t.Errorf("the holder's log holds the caller's environment")
	}
}

// The runtime dies while no daemon listens: the next daemon is told its
// exit, with when it happened.
func TestAnExitWhileNoDaemonListens(t *testing.T) {
	needPython(t)
	w := newWorld(t)
	p, _ := w.start()
	p.Detach()
	p.Wait(context.Background())
	before := time.Now()
	syscall.Kill(p.PID(), syscall.SIGKILL)
	time.Sleep(300 * time.Millisecond)
	q, err := Dial(w.spawn.Socket)
	if err != nil {
		t.Fatal(err)
	}
	if x := q.Hello().Exited; x == nil || x.Signal != 9 || x.At.Before(before) || x.At.After(time.Now()) {
		t.Errorf("the exit in the hello: %+v, want SIGKILL after %s", x, before)
	}
	ev := newEvents()
	q.Start(ev)
	ev.until(t, "the exit", func() bool { return ev.exit != nil })
	if ev.exit.Signal != 9 {
		t.Errorf("exit %+v", ev.exit)
	}
	if err := q.End(); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(w.spawn.Socket); !os.IsNotExist(err) {
		t.Errorf("the holder's socket is left after it ended: %v", err)
	}
}

// A holder killed under its daemon: the daemon is told the holder was
// lost, and how.
func TestAHolderKilledIsReported(t *testing.T) {
	needPython(t)
	w := newWorld(t)
	p, ev := w.start()
	syscall.Kill(p.Holder().PID, syscall.SIGKILL)
	ev.until(t, "the loss", func() bool { return ev.lost != "" })
	if !strings.Contains(ev.lost, "killed by signal 9") {
		t.Errorf("lost: %q, want it to say SIGKILL", ev.lost)
	}
	proc.Tree{Leader: p.hello.Leader, Cookie: p.hello.Cookie}.Kill(time.Second)
	os.Remove(w.spawn.Socket)
}

// One daemon at a time: a second connection while the first is alive is
// refused, not given the session, and the refusal is ErrHeld (a session
// the second daemon must neither list nor end).
func TestASecondDaemonIsRefused(t *testing.T) {
	needPython(t)
	w := newWorld(t)
	w.start()
	if q, err := Dial(w.spawn.Socket); err == nil || !strings.Contains(err.Error(), "another daemon") || !errors.Is(err, ErrHeld) {
		if q != nil {
			q.Detach()
		}
		t.Errorf("a second daemon's connection: %v, want it refused", err)
	}
}

// Output past the memory bound goes to a spool file and comes back whole,
// in order; freeing removes the file.
func TestSegmentSpools(t *testing.T) {
	dir := t.TempDir()
	s := idleLog(dir, "seg-*.spool")
	var want bytes.Buffer
	for i := 0; want.Len() < 3*memKept; i++ {
		line := fmt.Appendf(nil, "%08d %s\n", i, strings.Repeat("x", i%300))
		want.Write(line)
		s.write(line)
	}
	if s.f == nil || int64(want.Len()) != s.n || len(s.mem) != memKept {
		t.Fatalf("after %d bytes: file %v, n %d, %d in memory", want.Len(), s.f, s.n, len(s.mem))
	}
	var got bytes.Buffer
	if err := s.replay(func(b []byte) error {
		if len(b) > outputChunk {
			t.Errorf("a replayed piece of %d bytes", len(b))
		}
		got.Write(b)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("replayed %d bytes, want %d identical", got.Len(), want.Len())
	}
	name := s.f.Name()
	s.free()
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Errorf("the spool file is left after free: %v", err)
	}
}

// A holder of another protocol is not misread: Dial says whose session it
// keeps and which protocol it speaks.
func TestAnotherProtocolIsReported(t *testing.T) {
	dir := testenv.ShortDir(t)
	path := filepath.Join(dir, "x.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.AcceptUnix()
		if err != nil {
			return
		}
		w := newWire(c)
		hello, _ := json.Marshal(map[string]any{"proto": 99, "polyrepl": "7.0.0", "name": "far", "generation": "abc",
			"runtime": "python", "cookie": "POLYREPL_SESSION=abc", "leader": map[string]any{"pid": 1234, "start": 5},
			"spawn": "a shape this daemon does not know"})
		w.send(frameHello, hello)
		time.Sleep(time.Second)
		c.Close()
	}()
	_, err = Dial(path)
	pe, ok := err.(*ProtoError)
	if !ok {
		t.Fatalf("Dial: %v, want a ProtoError", err)
	}
	if pe.Hello.Name != "far" || pe.Hello.Proto != 99 || pe.Hello.Polyrepl != "7.0.0" || pe.Hello.Leader.PID != 1234 || pe.Hello.Cookie == "" {
		t.Errorf("what every protocol says: %+v", pe.Hello)
	}
}

// A spool the disk refuses costs no more memory than the ring: the first
// and the last memKept bytes come back, and between them a line says how
// many were lost and why.
func TestSegmentDiskRefused(t *testing.T) {
	s := idleLog(filepath.Join(t.TempDir(), "gone"), "seg-*.spool")
	var want bytes.Buffer
	for i := 0; want.Len() < 20*memKept; i++ {
		line := fmt.Appendf(nil, "%08d %s\n", i, strings.Repeat("y", i%3000))
		want.Write(line)
		s.write(line)
	}
	if s.err == nil || s.after.size() != memKept || len(s.mem) != memKept {
		t.Fatalf("after %d bytes: err %v, %d in the ring, %d in memory", want.Len(), s.err, s.after.size(), len(s.mem))
	}
	if s.lost != int64(want.Len()-2*memKept) {
		t.Errorf("lost %d, want %d", s.lost, want.Len()-2*memKept)
	}
	var got bytes.Buffer
	if err := s.replay(func(b []byte) error { got.Write(b); return nil }); err != nil {
		t.Fatal(err)
	}
	w := want.Bytes()
	note := s.lostNote()
	exp := append(append(append([]byte{}, w[:memKept]...), note...), w[len(w)-memKept:]...)
	if !bytes.Equal(got.Bytes(), exp) {
		t.Errorf("replayed %d bytes, want %d: the head, the note, the tail", got.Len(), len(exp))
	}
	if !strings.Contains(note, fmt.Sprintf("%d bytes of output were lost", s.lost)) || !strings.Contains(note, "gone") {
		t.Errorf("the note %q", note)
	}
}

// The ring keeps exactly the last memKept bytes, whatever the sizes
// written, and counts what it pushed out.
func TestRing(t *testing.T) {
	var r ring
	var all []byte
	var dropped int64
	for i, n := range []int{10, memKept - 5, 3, 7, memKept, 1, memKept + 13, 100, memKept / 2, memKept / 2, 1} {
		p := bytes.Repeat([]byte{byte('a' + i)}, n)
		p[0] = byte(i)
		all = append(all, p...)
		dropped += r.write(p)
		h, tl := r.parts()
		got := append(append([]byte{}, h...), tl...)
		keep := min(len(all), memKept)
		if !bytes.Equal(got, all[len(all)-keep:]) || dropped != int64(len(all)-keep) {
			t.Fatalf("after writing %d bytes: %d kept, %d dropped; want the last %d", len(all), len(got), dropped, keep)
		}
	}
}

// A cell's log holds its first bytes in memory, then the whole of it, from
// its first byte, in the file the daemon named, and no copy in memory:
// the replay sends nothing the daemon can read there, and the file stays
// the record's when the holder lets the cell go.
func TestCellLogIsOneFile(t *testing.T) {
	whole := filepath.Join(t.TempDir(), "output", "s-3.txt")
	s := cellLog(t.TempDir(), "seg-*.spool", whole)
	var want bytes.Buffer
	for i := 0; want.Len() < 3*CellInMemory; i++ {
		line := fmt.Appendf(nil, "%06d %s\n", i, strings.Repeat("z", i%100))
		want.Write(line)
		s.write(line)
		if want.Len() <= CellInMemory && (s.f != nil || !bytes.Equal(s.mem, want.Bytes())) {
			t.Fatalf("after %d bytes: file %v, %d in memory", want.Len(), s.f, len(s.mem))
		}
	}
	if !s.spilled() || s.mem != nil || s.n != int64(want.Len()) || s.readable() != s.n {
		t.Fatalf("after %d bytes: spilled %v, %d in memory, n %d, readable %d", want.Len(), s.spilled(), len(s.mem), s.n, s.readable())
	}
	if b, err := os.ReadFile(whole); err != nil || !bytes.Equal(b, want.Bytes()) {
		t.Errorf("the file holds %d bytes (%v), want all %d", len(b), err, want.Len())
	}
	sent := 0
	s.replay(func(b []byte) error { sent += len(b); return nil })
	if sent != 0 {
		t.Errorf("the replay sent %d bytes the daemon reads in the file", sent)
	}
	s.free()
	if _, err := os.Stat(whole); err != nil {
		t.Errorf("the cell's log file went with the cell: %v", err)
	}
}
