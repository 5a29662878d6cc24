package worker

import (
	"fmt"
	"os"

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
		Leader: p.tree.Leader,
		Kids:   true,
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
	if !console.WriteMark(p.outKeep, p.sentinel) {
		p.asked(q, f.nonce, false)
		return
	}
	p.asked(q, f.nonce, true)
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
	p.tail.Reset()
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
	p.watch.Wake()
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
	f, err := console.EOF(who, p.console.Close, p.conKeep)
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
	p.tail.Reset()
	p.mu.Unlock()
	p.watch.Wake()
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
	p.conAsked = false
	p.evMu.Unlock()
	p.watch.Wake()
}

// openConsole makes the pipe that becomes the runtime's standard input.
func openConsole() (r, w *os.File, err error) {
	r, w, err = os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("cannot create the console pipe: %w", err)
	}
	return r, w, nil
}
