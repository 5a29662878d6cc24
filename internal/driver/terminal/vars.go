package terminal

import (
	"fmt"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// A look at what the session holds, without a cell (driver.Inspector),
// for a profile with Vars: between cells the driver sends
//
//	the "look" mark, the profile's look command, the "looked" mark
//
// as one write, and what the REPL prints between the two marks goes to the
// look, never to the session's output. The REPL runs one command at a time,
// so the stream keeps a look and a cell apart whatever their order; a cell
// sent during a look waits for it all the same (a look is short), so that
// the two never interleave in time either. A cell that may bind names ends
// with the same command (its "names"), so the names sessions lists and the
// last look come from one source (driver.Result.Vars).

// lookMax bounds what a look's command may print that the driver keeps:
// a value the REPL prints whole (GHCi's evaluated list) is cut here.
const lookMax = 1 << 20

// lookWait bounds how long a cell waits for a look under way.
const lookWait = 10 * time.Second

// look is a look under way: what the REPL printed for it, and whether it
// was given up (its asker stopped waiting).
type look struct {
	out       strings.Builder
	cut       bool
	abandoned bool
	done      chan struct{}
}

// Vars implements driver.Inspector.
func (p *process) Vars(q driver.VarsQuery, wait time.Duration) (driver.Look, error) {
	if p.pr.Vars == nil {
		return driver.Look{}, fmt.Errorf("the %s runtime cannot look at its names without a cell", p.pr.Name)
	}
	if len(q.Path) > api.VarPathLimit {
		return driver.Look{}, fmt.Errorf("a path of %d bytes is over the %d a look takes", len(q.Path), api.VarPathLimit)
	}
	cmd, err := p.pr.Vars(q)
	if err != nil {
		return driver.Look{}, err
	}
	l := &look{done: make(chan struct{})}
	p.mu.Lock()
	switch {
	case p.done:
		p.mu.Unlock()
		return driver.Look{}, fmt.Errorf("the %s runtime has ended", p.pr.Name)
	case p.cell != 0:
		p.mu.Unlock()
		return driver.Look{}, driver.ErrCellRuns
	case p.look != nil:
		p.mu.Unlock()
		return driver.Look{}, fmt.Errorf("another look at the %s session is under way: ask again", p.pr.Name)
	}
	p.look = l
	if p.raw != nil {
		p.setEcho(false) // the look's lines are not the person's typing
	}
	msg := p.print("look") + "\n" + strings.TrimRight(cmd, "\n") + "\n" + p.print("looked") + "\n"
	if p.watch != nil {
		p.oweLocked(msg)
	}
	err = p.send(msg)
	p.mu.Unlock()
	if err != nil {
		p.endLook(l)
		return driver.Look{}, err
	}
	select {
	case <-l.done:
	case <-time.After(wait):
		p.mu.Lock()
		l.abandoned = true
		p.mu.Unlock()
		return driver.Look{}, fmt.Errorf("the %s runtime did not look within %s", p.pr.Name, wait)
	case <-p.outEOF:
		return driver.Look{}, fmt.Errorf("the %s runtime ended", p.pr.Name)
	}
	out := strings.ToValidUTF8(l.out.String(), "\uFFFD")
	lk, err := p.pr.ParseVars(out, q)
	if err != nil {
		return driver.Look{}, err
	}
	if l.cut {
		lk.Vars = cutNote(lk.Vars)
	}
	return lk.Bounded(), nil
}

// cutNote says on the last line of a look whose output was cut that the
// lines after it may be missing.
func cutNote(vars []api.Var) []api.Var {
	if len(vars) > 0 {
		v := &vars[len(vars)-1]
		v.Note = strings.TrimPrefix(v.Note+"; ", "; ") + fmt.Sprintf("the look's output was cut at %d bytes: lines after this one may be missing", lookMax)
	}
	return vars
}

// endLook ends look l, if it is still the one under way.
func (p *process) endLook(l *look) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLookLocked(l)
}

func (p *process) endLookLocked(l *look) {
	if p.look != l || l == nil {
		return
	}
	p.look = nil
	close(l.done)
	if p.raw != nil && p.cell == 0 {
		p.setEcho(true)
	}
}

// takeLookLocked keeps b for the look under way, bounded. Under mu.
func (p *process) takeLookLocked(b []byte) {
	l := p.look
	if l == nil {
		return
	}
	if room := lookMax - l.out.Len(); room < len(b) {
		b = b[:max(room, 0)]
		l.cut = true
	}
	l.out.Write(b)
}

// awaitLook waits, a while at most, for a look under way to end, before
// a cell is sent: the two never interleave.
func (p *process) awaitLook() {
	p.mu.Lock()
	l := p.look
	if l == nil || l.abandoned {
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	select {
	case <-l.done:
	case <-time.After(lookWait):
	case <-p.outEOF:
	}
}

// cellLook reads the look a cell ended with (its names command was the
// look's): the look the result carries, and the names from it.
func (p *process) cellLook(out string) (*driver.Look, []string) {
	lk, err := p.pr.ParseVars(strings.ToValidUTF8(out, "\uFFFD"), driver.VarsQuery{})
	if err != nil {
		return nil, nil
	}
	names := make([]string, 0, len(lk.Vars))
	for _, v := range lk.Vars {
		names = append(names, v.Name)
	}
	if p.names.Len() >= lookMax {
		lk.Vars = cutNote(lk.Vars)
	}
	lk = lk.Bounded()
	return &lk, names
}
