package worker

import (
	"syscall"

	"github.com/polyrepl/polyrepl/internal/proc"
)

// Interrupt stops the running cell: the runtime's own policy if it has
// one, else SIGINT to the runtime, then to its whole process group (to end
// a child the cell waits on), then to the runtime again.
func (p *process) Interrupt(attempt int) error {
	p.consoleInterrupted()
	if p.r.InterruptCell != nil {
		p.evMu.Lock()
		f := p.inflight
		p.evMu.Unlock()
		var before []proc.Proc
		if f != nil {
			before = f.before
		} else {
			// No cell: whatever runs now is background work.
			before = p.tree.Children()
		}
		return p.r.InterruptCell(p.tree, before, attempt)
	}
	if p.r.Interrupt != nil {
		return p.r.Interrupt(p.tree, attempt)
	}
	if attempt == 1 {
		p.evMu.Lock()
		if p.inflight != nil {
			p.inflight.group = true
		}
		p.evMu.Unlock()
		return p.tree.SignalGroup(syscall.SIGINT)
	}
	return proc.Signal(p.tree.Leader, syscall.SIGINT)
}
