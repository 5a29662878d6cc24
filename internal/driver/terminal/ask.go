package terminal

import (
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/console"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// A profile with PromptMark runs each cell alone. The REPL prints the
// "prompt" mark each time it waits for a command, so the driver counts
// the prompts it is owed (one per line sent) and sends what follows a
// cell's loader line — the plot's closing, the end mark, the names — only
// once the loader's prompt has come: until then the REPL's standard input
// holds nothing of polyrepl's, a cell that reads it (Octave's input() or
// keyboard, a subprocess) finds it empty and waits, and a console.Watch
// sees it waiting: the cell asks. The "asked" mark, written into the
// output pipe by the driver, says where in the stream the question comes.

// lineCount is how many prompts the REPL owes for s: one a line.
func lineCount(s string) int { return strings.Count(s, "\n") }

// oweLocked counts the prompts s will owe, for a profile whose prompt
// is a mark (the others' loader ends its cell otherwise). Under mu.
func (p *process) oweLocked(s string) {
	if p.pr.PromptMark != nil {
		p.owed += lineCount(s)
	}
}

// sendOwedLocked sends s, counting the prompts it owes. Under mu.
func (p *process) sendOwedLocked(s string) error {
	p.oweLocked(s)
	return p.send(s)
}

// prompted takes a "prompt" mark: the REPL waits for a command. Once the
// running cell's loader has its prompt, the cell is over and the rest is
// sent. Under mu.
func (p *process) promptedLocked() {
	if p.owed > 0 {
		p.owed--
	}
	if p.owed == 0 {
		p.sendTrailerLocked()
	}
}

// sendTrailerLocked sends what follows the running cell's loader line, if
// it was held and is not sent yet: the cell is over. Under mu.
func (p *process) sendTrailerLocked() {
	if p.trailer == "" {
		return
	}
	t := p.trailer
	p.trailer, p.asked = "", false
	p.sendOwedLocked(t)
}

// startWatch looks at the cells of a profile with PromptMark.
func (p *process) startWatch(outKeep, conFile *os.File) {
	p.outKeep, p.conFile = outKeep, conFile
	p.watch = console.NewWatch(console.Watch{
		Leader:  p.tree.Leader,
		Threads: p.pr.ThreadReads,
		Cell: func() any {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.trailer == "" || p.asked || p.done {
				return nil
			}
			return p.cell
		},
		Empty: func() bool {
			p.inMu.Lock()
			defer p.inMu.Unlock()
			return p.unread.taken() && console.Empty(p.conFile)
		},
		Ident: func() (unix.Stat_t, bool) {
			p.inMu.Lock()
			defer p.inMu.Unlock()
			return console.Ident(p.conFile)
		},
		Asks: func(cell any, who int) { p.asks(cell.(int), who) },
		Stop: p.outEOF,
	})
	go p.watch.Run()
}

// asks marks the cell's question in the output stream, after what the
// cell printed before it (its last line is the prompt); without the
// mark, it is asked at once. Under LoadHoldsFile, the REPL's own read
// with the cell's file closed is no question: the cell was cut short.
func (p *process) asks(cell, who int) {
	p.mu.Lock()
	if p.cell != cell || p.trailer == "" || p.asked {
		p.mu.Unlock()
		return
	}
	if p.pr.LoadHoldsFile && who == p.tree.Leader.PID && !proc.HasOpen(who, p.cellFile) {
		p.sendTrailerLocked()
		p.mu.Unlock()
		return
	}
	p.asked, p.asker = true, who
	p.mu.Unlock()
	if console.WriteMark(p.outKeep, []byte(p.mark.prefix()+"asked\n")) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.askLocked()
}

// askLocked passes the running cell's question on, unless the cell is
// over after all: the watch saw the REPL's read a moment after the REPL
// printed its prompt, and the prompt's mark came first in the stream
// (the REPL wrote it before it read), sending the rest. Under mu.
func (p *process) askLocked() {
	a, ok := p.h.(driver.Asker)
	if !ok || p.cell == 0 || p.done || !p.asked || p.trailer == "" {
		return
	}
	// Over pipes, the REPL's standard input carries its commands: end of
	// file would end it, so the question takes lines only. A terminal
	// has its own end of file (Ctrl-D).
	a.InputAsked(driver.Prompt{Cell: p.cell, Text: p.tail.String(), Shown: true, NoEOF: !p.pr.PTY})
}

// Answer implements driver.Answerer: the line goes to the REPL's
// standard input, where the cell's read waits.
func (p *process) Answer(text string, eof bool) error {
	if p.watch == nil {
		return fmt.Errorf("the %s runtime cannot take answers", p.pr.Name)
	}
	line := text + "\n"
	if eof {
		if !p.pr.PTY {
			return fmt.Errorf("%s reads its commands where the cell reads, and end of file would end it: answer a line, or interrupt the cell", p.pr.Name)
		}
		line = "\x04" // the terminal's end of file, at the start of a line
	}
	p.mu.Lock()
	p.asked = false
	asker := p.asker
	p.tail.Reset()
	p.mu.Unlock()
	if asker == 0 {
		asker = p.tree.Leader.PID
	}
	if err := p.sendFor(line, asker); err != nil {
		return err
	}
	p.watch.Wake()
	return nil
}

// unreadFor bounds how long a write to a terminal counts as unread when
// its reader's count of reads does not move (another process took it, or
// /proc says nothing): the longest a question is then seen late.
const unreadFor = 2 * time.Second

// unread is a write to a terminal that its reader may not have had yet.
// Bytes written to a PTY's master reach the line discipline, where the
// console's FIONREAD counts them, only once the kernel's flip-buffer work
// has run — on a loaded machine tens of milliseconds later. Until then
// the REPL, still blocked in the read those bytes will end, looks like a
// cell asking for input with an empty console (a fresh sh session's
// `echo $((6*7))` was reported waiting for input). A pipe has no such gap.
// So a write to a terminal stays unread until its reader's count of
// completed reads moves past the count taken before the write (the read
// it was blocked in returned, or a later one did), or unreadFor passes.
// Under inMu.
type unread struct {
	pid   int
	reads uint64
	since time.Time
}

// mark takes the reader's count of reads, before a write to it.
func (u *unread) mark(reader int) {
	n, ok := proc.Reads(reader)
	if !ok {
		*u = unread{}
		return
	}
	*u = unread{pid: reader, reads: n, since: time.Now()}
}

// taken says whether the last write has reached its reader as far as can
// be known.
func (u *unread) taken() bool {
	if u.pid == 0 {
		return true
	}
	if n, ok := proc.Reads(u.pid); !ok || n != u.reads || time.Since(u.since) > unreadFor {
		*u = unread{}
		return true
	}
	return false
}
