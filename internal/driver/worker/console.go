package worker

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/console"
)

// A console runtime (Runtime.Console) has a pipe the driver keeps as its
// standard input, watched by a console.Watch while cells run: a read of
// it — the runtime's or a subprocess's — is a question, answered there.

// startConsole makes the watch of the runtime's console.
func (p *process) startConsole() {
	p.watch = console.NewWatch(console.Watch{
		Leader:  p.tree.Leader,
		Threads: p.r.ConsoleThreads,
		Cell: func() any {
			p.evMu.Lock()
			defer p.evMu.Unlock()
			if p.inflight == nil || p.conAsked {
				return nil
			}
			return p.inflight
		},
		Empty: func() bool {
			p.cmdMu.Lock()
			defer p.cmdMu.Unlock()
			return p.console != nil && console.Empty(p.console)
		},
		Ident: func() (unix.Stat_t, bool) {
			p.cmdMu.Lock()
			defer p.cmdMu.Unlock()
			if p.console == nil {
				return unix.Stat_t{}, false
			}
			return console.Ident(p.console)
		},
		Asks: func(cell any, who int) { p.consoleAsks(cell.(*flight), who) },
		Stop: p.evEOF,
	})
	go p.watch.Run()
}

// consoleAsks passes on the question of the cell f, asked by the process
// who, after what the cell printed before it: the prompt printed is the
// question's text. The end marker, written into the output pipe here
// (the runtime is blocked and cannot), says when all of that has arrived.
// A ConsoleNoEOF runtime's own read takes no end of file; a subprocess's
// read always does.
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
	if !console.WriteMark(p.outKeep, p.sentinel) {
		p.asked(q, f.nonce, false)
		return
	}
	p.asked(q, f.nonce, true)
}

// answerConsole writes an answer line to the runtime's console, or gives
// its reader end of file. The prompt's text is forgotten first: what the
// runtime prints once answered is the next question's.
func (p *process) answerConsole(text string, eof bool) error {
	p.evMu.Lock()
	who := p.conAsker
	p.evMu.Unlock()
	if eof && p.r.ConsoleNoEOF && who == p.tree.Leader.PID {
		return fmt.Errorf("%s reads its console here, where end of file would end the session: answer a line, or interrupt the cell", p.r.Name)
	}
	p.evMu.Lock()
	p.conAsked = false
	p.evMu.Unlock()
	p.mu.Lock()
	p.tail.Reset()
	p.mu.Unlock()
	defer p.watch.Wake()
	p.cmdMu.Lock()
	defer p.cmdMu.Unlock()
	if p.console == nil {
		if eof {
			return nil // closed already: the read has its end of file
		}
		return fmt.Errorf("cannot send the answer to %s: its standard input was closed", p.r.Name)
	}
	if eof {
		// The driver's end is the console's one writer: closing it is end
		// of file; it is opened again, through the read end it keeps, for
		// the next question (or stays closed, and later reads get end of
		// file).
		p.console, _ = console.EOF(who, p.console.Close, p.conKeep)
		return nil
	}
	if _, err := p.console.Write([]byte(text + "\n")); err != nil {
		return fmt.Errorf("cannot send the answer to %s (it may have died): %w", p.r.Name, err)
	}
	return nil
}

// consoleInterrupted looks again at a cell being interrupted: its
// question, if any, is over, and a read after the interrupt (a loop that
// catches it and asks again) is a new one.
func (p *process) consoleInterrupted() {
	if p.watch == nil {
		return
	}
	p.evMu.Lock()
	asked, who := p.conAsked, p.conAsker
	p.conAsked = false
	p.evMu.Unlock()
	if !asked {
		p.watch.Wake()
		return
	}
	p.watch.Forget(who)
	if p.r.ConsoleInterruptLine && who == p.tree.Leader.PID {
		time.AfterFunc(console.InterruptLine, func() {
			p.cmdMu.Lock()
			defer p.cmdMu.Unlock()
			if p.console != nil {
				p.console.Write([]byte("\n"))
			}
		})
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
