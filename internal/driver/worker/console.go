package worker

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// A console runtime (Runtime.Console) reads questions' answers from its
// standard input, a pipe the driver keeps, in code no worker can wrap:
// R's browser(), readline() and menu() read R's console in C, bash's read
// is a builtin, Node's readline reads process.stdin, and any subprocess
// may read what it inherits. Such a cell asks when the runtime, or a
// subprocess it waits for, blocks reading that pipe, which the kernel
// tells (proc.WaitsOnStdin), looked at every consoleTick while a cell
// runs.

// consoleTick is how often a running cell of a console runtime is looked
// at. Two looks in a row must find it waiting (and the pipe empty), so a
// question is seen 20–30 ms after the read begins; a look costs ~10 µs.
const consoleTick = 10 * time.Millisecond

// maxPromptTail bounds the prompt text taken from what a cell printed.
const maxPromptTail = 512

// watchConsole looks at the runtime while a cell runs and no question is
// out, until the worker's events end.
func (p *process) watchConsole() {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-p.conWake:
		case <-p.evEOF:
			return
		}
		seen, last := 0, 0
		for look := 0; ; look++ {
			t.Reset(consoleTick)
			select {
			case <-t.C:
			case <-p.evEOF:
				return
			}
			p.evMu.Lock()
			f, out := p.inflight, p.conAsked
			p.evMu.Unlock()
			if f == nil || out {
				break
			}
			who, kids := p.consoleReader(look)
			if who == 0 && !kids && last != p.tree.Leader.PID {
				continue // this look says nothing of the subprocess seen last
			}
			if who != 0 && who == last && p.consoleEmpty() {
				seen++
			} else {
				seen = 0
			}
			last = who
			if seen >= 1 {
				p.consoleAsks(f, who)
				break
			}
		}
	}
}

// maxConsoleKids bounds the descendants looked at for a reader.
const maxConsoleKids = 64

// kidsEvery is how many looks apart the runtime's descendants are looked
// at too (each costs a stat of its descriptor 0; a cell may run many).
const kidsEvery = 3

// consoleReader is the process blocked reading the console: the runtime
// itself, or — on every kidsEvery-th look — a descendant whose standard
// input is the console (R's system("cat"), Python's subprocess.run); 0 if
// none; kids says whether the descendants were looked at.
func (p *process) consoleReader(look int) (who int, kids bool) {
	leader := p.tree.Leader
	if proc.WaitsOnStdin(leader) {
		return leader.PID, false
	}
	if look%kidsEvery != 0 {
		return 0, false
	}
	queue := proc.Children(leader.PID)
	if len(queue) == 0 {
		return 0, true
	}
	st, ok := p.consoleStat()
	if !ok {
		return 0, true
	}
	for n := 0; len(queue) > 0 && n < maxConsoleKids; n++ {
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

// consoleEmpty says whether the runtime has taken everything written to
// its console: a runtime blocked on a console that still holds an answer
// is about to read it, not asking again.
func (p *process) consoleEmpty() bool {
	p.cmdMu.Lock()
	defer p.cmdMu.Unlock()
	if p.console == nil {
		return false
	}
	n, err := unix.IoctlGetInt(int(p.console.Fd()), unix.TIOCINQ) // FIONREAD
	return err == nil && n == 0
}

// consoleStat identifies the console pipe, to find who reads it.
func (p *process) consoleStat() (st unix.Stat_t, ok bool) {
	p.cmdMu.Lock()
	defer p.cmdMu.Unlock()
	return st, p.console != nil && unix.Fstat(int(p.console.Fd()), &st) == nil
}

// consoleAsks passes on the question of the cell f, asked by the process
// who, after what the cell printed before it: the prompt printed is the
// question's text. The end marker, written into the output pipe here
// (the runtime is blocked and cannot), says when all of that has arrived.
// The runtime's own read takes no end of file (its console would end for
// good); a subprocess's read does.
func (p *process) consoleAsks(f *flight, who int) {
	p.evMu.Lock()
	if p.inflight != f || p.conAsked {
		p.evMu.Unlock()
		return
	}
	p.conAsked = true
	p.conAsker = who
	p.evMu.Unlock()
	q := driver.Prompt{Cell: f.cell, Shown: true, NoEOF: p.r.ConsoleNoEOF && who == p.tree.Leader.PID}
	if !p.writeMarker() {
		p.asked(q, f.nonce, false)
		return
	}
	p.asked(q, f.nonce, true)
}

// writeMarker writes the end marker into the output pipe, through a new
// handle on the driver's own end of it (never blocking: a full pipe means
// the reader is behind, and the question goes without it).
func (p *process) writeMarker() bool {
	fd, err := unix.Open(ownPath(p.outKeep), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	n, err := unix.Write(fd, p.sentinel)
	return err == nil && n == len(p.sentinel)
}

// ownPath names one of the driver's own descriptors in /proc, to open
// its pipe afresh: a new handle with its own flags. Not the runtime's
// descriptors: a shell points them elsewhere for a moment (read <file).
func ownPath(f *os.File) string {
	n := -1
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { n = int(fd) })
	}
	return "/proc/self/fd/" + strconv.Itoa(n)
}

// answerConsole writes an answer line to the runtime's console, or gives
// a subprocess reading it end of file.
func (p *process) answerConsole(text string, eof bool) error {
	p.evMu.Lock()
	who := p.conAsker
	p.evMu.Unlock()
	if eof && p.r.ConsoleNoEOF && who == p.tree.Leader.PID {
		return fmt.Errorf("%s reads its console here, where end of file would end the session: answer a line, or interrupt the cell", p.r.Name)
	}
	if eof {
		return p.consoleEOF(who)
	}
	p.evMu.Lock()
	p.conAsked = false
	p.evMu.Unlock()
	p.mu.Lock()
	p.tail = p.tail[:0]
	p.mu.Unlock()
	p.cmdMu.Lock()
	err := os.ErrClosed
	if p.console != nil {
		_, err = p.console.Write([]byte(text + "\n"))
	}
	p.cmdMu.Unlock()
	if err != nil {
		return fmt.Errorf("cannot send the answer to %s (it may have died): %w", p.r.Name, err)
	}
	p.wakeConsole()
	return nil
}

// consoleEOF gives the reader who end of file on the console: the driver
// closes its end of the pipe (it is the one writer) and, once the reader
// has taken the end of file, opens the pipe again (through the read end
// it keeps) for the next question.
func (p *process) consoleEOF(who int) error {
	p.cmdMu.Lock()
	defer p.cmdMu.Unlock()
	if p.console == nil {
		return nil // closed already: the read has its end of file
	}
	// Reopened before the reader woke, the pipe would have a writer
	// again and the reader would go on waiting: wait for its read to
	// return (its count of reads moves, or it ends).
	before, _ := proc.Reads(who)
	p.console.Close()
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if n, ok := proc.Reads(who); !ok || n != before {
			break
		}
	}
	f, err := os.OpenFile(ownPath(p.conKeep), os.O_WRONLY, 0)
	if err != nil {
		// The console stays closed: later reads get end of file.
		p.console = nil
		return nil
	}
	p.console = f
	p.evMu.Lock()
	p.conAsked = false
	p.evMu.Unlock()
	p.mu.Lock()
	p.tail = p.tail[:0]
	p.mu.Unlock()
	p.wakeConsole()
	return nil
}

// consoleInterrupted looks again at a cell being interrupted: its
// question, if any, is over, and a read after the interrupt (a loop that
// catches it and asks again) is a new one.
func (p *process) consoleInterrupted() {
	if !p.watching {
		return
	}
	p.evMu.Lock()
	p.conAsked = false
	p.evMu.Unlock()
	p.wakeConsole()
}

// wakeConsole starts the looks at a running cell.
func (p *process) wakeConsole() {
	select {
	case p.conWake <- struct{}{}:
	default:
	}
}

// keepTail keeps the last line (so far) of what the cell printed: the
// prompt of a question whose runtime shows it and does not say it.
func (p *process) keepTail(b []byte) {
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		p.tail = append(p.tail[:0], b[i+1:]...)
	} else {
		p.tail = append(p.tail, b...)
	}
	if len(p.tail) > maxPromptTail {
		cut := len(p.tail) - maxPromptTail
		for cut < len(p.tail) && p.tail[cut]&0xC0 == 0x80 {
			cut++ // not in the middle of a character
		}
		p.tail = append(p.tail[:0], p.tail[cut:]...)
	}
}

// openConsole makes the pipe that becomes the runtime's standard input.
func openConsole() (r, w *os.File, err error) {
	r, w, err = os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("cannot create the console pipe: %w", err)
	}
	return r, w, nil
}
