package worker

import (
	"fmt"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
)

// A cell's questions: the worker sends {"op":"input",…} on its event
// channel (after the end marker on its output, so what the cell printed
// before it asked comes first) and reads the answer on its command
// channel: "input NBYTES" and the line, or "eof".

// asked takes a cell's question: passed on to the handler if it can ask
// anyone (a driver.Asker), else answered with end of file at once. One
// not from the cell in flight (a cell can write to the event channel) is
// a stray.
func (p *process) asked(q driver.Prompt, nonce string, flushed bool) {
	a, ok := p.h.(driver.Asker)
	p.evMu.Lock()
	f := p.inflight
	if f == nil || q.Cell != f.cell || nonce != f.nonce {
		p.stray++
		p.evMu.Unlock()
		return
	}
	if !ok {
		p.evMu.Unlock()
		p.Answer("", true)
		return
	}
	if !flushed {
		p.evMu.Unlock()
		p.deliver(func() { a.InputAsked(p.withTail(q)) })
		return
	}
	pending := &q
	p.asking = pending
	p.askLate = time.AfterFunc(markerWait, func() {
		if q := p.takeAsking(pending); q != nil {
			p.deliver(func() { a.InputAsked(p.withTail(*q)) })
		}
	})
	p.evMu.Unlock()
	select {
	case p.doneSent <- struct{}{}:
	default:
	}
}

// takeAsking takes the question waiting for its marker: want, or any
// (nil).
func (p *process) takeAsking(want *driver.Prompt) *driver.Prompt {
	p.evMu.Lock()
	defer p.evMu.Unlock()
	q := p.asking
	if q == nil || (want != nil && q != want) {
		return nil
	}
	p.asking = nil
	p.askLate.Stop()
	return q
}

// Answer implements driver.Answerer: the line (or end of file) goes to
// the worker on its command channel, where the cell's read waits — or to
// the console, if the question is a read of it (console.go).
func (p *process) Answer(text string, eof bool) error {
	p.evMu.Lock()
	console := p.conAsked
	p.evMu.Unlock()
	if console {
		return p.answerConsole(text, eof)
	}
	msg := []byte("eof\n")
	if !eof {
		msg = append(fmt.Appendf(nil, "input %d\n", len(text)), text...)
	}
	p.cmdMu.Lock()
	defer p.cmdMu.Unlock()
	if _, err := p.cmds.Write(msg); err != nil {
		return fmt.Errorf("cannot send the answer to the worker (it may have died): %w", err)
	}
	return nil
}

// withTail gives a question that the runtime showed without saying its
// text (Ruby's gets, R's console) the cell's last line as its text. Under
// mu, as every call to the handler.
func (p *process) withTail(q driver.Prompt) driver.Prompt {
	if q.Shown && q.Text == "" {
		q.Text = p.tail.String()
	}
	return q
}
