package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
)

// A worker of a runtime with Completes completes a name between cells:
// the driver writes "complete NBYTES NONCE\n" and the word on the command
// channel, and the worker answers on the event channel with
// {"op":"complete","nonce":NONCE,"matches":[…]}, printing nothing. Only
// while no cell is in flight: the worker reads its commands only then
// (a running cell's question reads "input" lines there).

// completing is a completion asked for.
type completing struct {
	nonce string
	ch    chan []string
}

// errCellRuns: the worker completes between cells only.
var errCellRuns = errors.New("a cell runs: the runtime completes between cells")

// Complete implements driver.Completer.
func (p *process) Complete(word string, wait time.Duration) ([]string, error) {
	if !p.r.Completes {
		return nil, fmt.Errorf("the %s runtime completes no names itself", p.r.Name)
	}
	nonce, err := driver.Nonce(8)
	if err != nil {
		return nil, err
	}
	c := &completing{nonce: nonce, ch: make(chan []string, 1)}
	p.evMu.Lock()
	if p.inflight != nil || p.pending != nil {
		p.evMu.Unlock()
		return nil, errCellRuns
	}
	p.comp = c
	p.evMu.Unlock()
	defer func() {
		p.evMu.Lock()
		if p.comp == c {
			p.comp = nil
		}
		p.evMu.Unlock()
	}()
	msg := append(fmt.Appendf(nil, "complete %d %s\n", len(word), nonce), word...)
	p.cmdMu.Lock()
	_, err = p.cmds.Write(msg)
	p.cmdMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("cannot ask the worker to complete (it may have died): %w", err)
	}
	select {
	case m := <-c.ch:
		return m, nil
	case <-time.After(wait):
		return nil, fmt.Errorf("the %s runtime did not complete within %s", p.r.Name, wait)
	case <-p.evEOF:
		return nil, fmt.Errorf("the %s runtime ended", p.r.Name)
	}
}

// completed takes a completion event, if line is one that was asked for
// (its nonce): true if line was a completion event at all.
func (p *process) completed(line []byte) bool {
	if eventHead(line).op != "complete" {
		return false
	}
	var ev struct {
		Nonce   string   `json:"nonce"`
		Matches []string `json:"matches"`
	}
	if json.Unmarshal(line, &ev) != nil {
		return true
	}
	p.evMu.Lock()
	c := p.comp
	if c != nil && c.nonce == ev.Nonce {
		p.comp = nil
	} else {
		c = nil
	}
	p.evMu.Unlock()
	if c != nil {
		c.ch <- ev.Matches
	}
	return true
}
