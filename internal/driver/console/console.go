// Package console sees a running cell ask for input by reading its
// runtime's standard input: a pipe its driver keeps, the session's
// console. Code no worker can wrap reads it — R's browser() in C, bash's
// read builtin, Node's readline, a REPL's own input(), any subprocess —
// so the question is seen where it happens: the kernel shows the runtime,
// or a descendant reading the same pipe, blocked reading it
// (proc.WaitsOnStdin). Nothing is guessed from the output.
package console

import (
	"bytes"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/proc"
)

// Tick is how often a running cell is looked at. Two looks in a row must
// find the same reader waiting and the console empty, so a question is
// seen 20–30 ms after its read begins; a look costs ~10 µs.
const Tick = 10 * time.Millisecond

// InterruptLine is how long after an interrupt a driver sends the empty
// line that frees a runtime's own read of its console, for runtimes that
// take SIGINT only once the read returns (Octave without a line editor,
// a JVM): sooner, the line was taken as the answer before the signal.
const InterruptLine = 100 * time.Millisecond

// kidsEvery is how many looks apart the runtime's descendants are looked
// at too (each costs a stat of its descriptor 0; a cell may run many),
// and maxKids bounds how many.
const (
	kidsEvery = 3
	maxKids   = 64
)

// Watch looks at one runtime's running cells for a read of its console.
type Watch struct {
	// Leader is the runtime; its descendants are looked at too, and with
	// Threads all its threads (a JVM reads on one of its own), both on
	// every kidsEvery-th look.
	Leader  proc.Proc
	Threads bool
	// Cell is the cell to look at (any comparable token), or nil when no
	// cell runs or its question is out already.
	Cell func() any
	// Empty says the console holds no unread bytes: a reader blocked on
	// a console with an answer in it is about to take it, not asking.
	Empty func() bool
	// Ident is the console's identity (the pipe's device and inode), to
	// know a descendant reading it.
	Ident func() (unix.Stat_t, bool)
	// Asks passes on cell's question, read by the process who.
	Asks func(cell any, who int)
	// Stop ends the watch.
	Stop <-chan struct{}

	s *watchState
}

// watchState is a Watch's own state, made by NewWatch.
type watchState struct {
	wake       chan struct{}
	stale      atomic.Int64 // a reader whose question was interrupted (Forget)
	staleUntil atomic.Int64 // and until when (unix nanoseconds)
}

// staleFor is how long an interrupted reader's read is not asked again
// while it goes on: longer than an interrupt's escalation (three
// attempts 250 ms apart), which a question asked again would cut short.
const staleFor = time.Second

// Forget says the question read by who was interrupted: who's read counts
// as a question again once who has been seen not reading, or after
// staleFor (a loop that catches the interrupt and reads again), so an
// interrupt that has not yet freed the read (a subprocess the runtime
// waits on) is not cut short by the same question.
func (w *Watch) Forget(who int) {
	w.s.staleUntil.Store(time.Now().Add(staleFor).UnixNano())
	w.s.stale.Store(int64(who))
	w.Wake()
}

// Wake starts the looks at a cell that starts, or goes on after its
// question was answered or interrupted.
func (w *Watch) Wake() {
	select {
	case w.s.wake <- struct{}{}:
	default:
	}
}

// Run looks while cells run, until Stop.
func (w *Watch) Run() {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-w.s.wake:
		case <-w.Stop:
			return
		}
		seen, last := 0, 0
		for look := 0; ; look++ {
			t.Reset(Tick)
			select {
			case <-t.C:
			case <-w.Stop:
				return
			}
			c := w.Cell()
			if c == nil {
				break
			}
			who, kids := w.reader(look)
			if st := int(w.s.stale.Load()); st != 0 {
				switch {
				case time.Now().UnixNano() > w.s.staleUntil.Load():
					w.s.stale.Store(0)
				case who == st:
					who = 0 // still the interrupted read
				case st == w.Leader.PID || kids:
					w.s.stale.Store(0) // looked at, and no longer reading
				}
			}
			if who == 0 && !kids && (last != w.Leader.PID || w.Threads) {
				continue // this look says nothing of the subprocess seen last
			}
			if who != 0 && who == last && w.Empty() {
				seen++
			} else {
				seen = 0
			}
			last = who
			if seen >= 1 {
				w.Asks(c, who)
				break
			}
		}
	}
}

// NewWatch makes a Watch; Run it in a goroutine.
func NewWatch(w Watch) *Watch {
	w.s = &watchState{wake: make(chan struct{}, 1)}
	return &w
}

// reader is the process blocked reading the console: the runtime itself,
// or — on every kidsEvery-th look — a descendant whose standard input is
// the console (R's system("cat"), Python's subprocess.run); 0 if none.
// kids says whether the descendants were looked at.
func (w *Watch) reader(look int) (who int, kids bool) {
	if proc.WaitsOnStdin(w.Leader) {
		return w.Leader.PID, false
	}
	if look%kidsEvery != 0 {
		return 0, false
	}
	if w.Threads && proc.AnyThreadWaitsOnStdin(w.Leader) {
		return w.Leader.PID, true
	}
	queue := proc.Children(w.Leader.PID)
	if len(queue) == 0 {
		return 0, true
	}
	st, ok := w.Ident()
	if !ok {
		return 0, true
	}
	for n := 0; len(queue) > 0 && n < maxKids; n++ {
		pid := queue[0]
		queue = queue[1:]
		var in unix.Stat_t
		if unix.Stat("/proc/"+strconv.Itoa(pid)+"/fd/0", &in) == nil && in.Ino == st.Ino && in.Dev == st.Dev &&
			proc.WaitsOnStdin(proc.Proc{PID: pid}) {
			return pid, true
		}
		queue = append(queue, proc.Children(pid)...)
	}
	return 0, true
}

// Empty says whether the pipe f (either end) holds no unread bytes.
func Empty(f *os.File) bool {
	n := -1
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			if v, err := unix.IoctlGetInt(int(fd), fionread); err == nil {
				n = v
			}
		})
	}
	return n == 0
}

// Ident is the identity of the pipe f.
func Ident(f *os.File) (st unix.Stat_t, ok bool) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { ok = unix.Fstat(int(fd), &st) == nil })
	}
	return st, ok
}

// OwnPath names one of this process's descriptors in /proc, to open its
// pipe afresh: a new handle with its own flags. Not the runtime's
// descriptors: a shell points them elsewhere for a moment (read <file).
func OwnPath(f *os.File) string {
	n := -1
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { n = int(fd) })
	}
	return "/proc/self/fd/" + strconv.Itoa(n)
}

// WriteMark writes mark into the pipe whose write end is f, through a new
// handle that never blocks: a full pipe means its reader is behind, and
// the caller goes on without it.
func WriteMark(f *os.File, mark []byte) bool {
	fd, err := unix.Open(OwnPath(f), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	n, err := unix.Write(fd, mark)
	return err == nil && n == len(mark)
}

// EOF gives the reader who end of file: close, which closes the
// console's one write end, then — once the reader's read has returned
// (its count of reads moves, or it ends), for reopened before it woke the
// pipe would have a writer again and the read would go on waiting — a
// new write end opened through keep, the read end the driver keeps.
func EOF(who int, close func() error, keep *os.File) (*os.File, error) {
	before, _ := proc.Reads(who)
	close()
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if n, ok := proc.Reads(who); !ok || n != before {
			break
		}
	}
	return os.OpenFile(OwnPath(keep), os.O_WRONLY, 0)
}

// maxTail bounds the prompt text taken from what a cell printed.
const maxTail = 512

// Tail keeps the last line (so far) of what a cell printed: the text of
// a question whose runtime shows its prompt and does not say it. A line
// longer than maxTail keeps its end, and says that its start was cut (the
// whole line is in the cell's output).
type Tail struct {
	b   []byte
	cut bool // the line's start was let go
}

// Add takes more of what the cell printed.
func (t *Tail) Add(b []byte) {
	// Only b's last maxTail bytes can be kept: a large piece is looked at
	// no further back (a megabyte with no newline is neither scanned nor
	// copied whole).
	from := max(len(b)-maxTail, 0)
	switch i := bytes.LastIndexByte(b[from:], '\n'); {
	case i >= 0:
		t.b, t.cut = append(t.b[:0], b[from+i+1:]...), false
	case from > 0:
		for from < len(b) && b[from]&0xC0 == 0x80 {
			from++ // not in the middle of a character
		}
		t.b, t.cut = append(t.b[:0], b[from:]...), true
	default:
		t.b = append(t.b, b...)
	}
	if len(t.b) > maxTail {
		cut := len(t.b) - maxTail
		for cut < len(t.b) && t.b[cut]&0xC0 == 0x80 {
			cut++ // not in the middle of a character
		}
		t.b, t.cut = append(t.b[:0], t.b[cut:]...), true
	}
}

// Reset forgets it: a cell starts, or a question was answered.
func (t *Tail) Reset() { t.b, t.cut = t.b[:0], false }

// String is the line so far; "[… the start of the line is in the
// output …]" before its end when it was longer than maxTail.
func (t *Tail) String() string {
	if t.cut {
		return tailCut + string(t.b)
	}
	return string(t.b)
}

// tailCut says that a prompt is the end of a longer line.
const tailCut = "[… the line's start is in the output …]"
