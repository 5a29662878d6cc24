package terminal

import (
	"fmt"
	"io"
	"sync"

	"golang.org/x/sys/unix"
)

// Raw attaches a person's terminal to a runtime hosted on one: what the
// runtime prints (marks taken out) comes on the channel, closed when the
// runtime ends, and what is written to in goes to the runtime's terminal
// as typed. The terminal echoes the typing while no cell runs. One person
// at a time; detach lets go.
func (p *process) Raw() (in io.Writer, out <-chan []byte, detach func(), err error) {
	if !p.pr.PTY {
		return nil, nil, nil, fmt.Errorf("the %s runtime runs over pipes, not on a terminal: there is no terminal to attach to (plain attach shows its record)", p.pr.Name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.done:
		return nil, nil, nil, fmt.Errorf("the %s runtime has ended", p.pr.Name)
	case p.raw != nil:
		return nil, nil, nil, fmt.Errorf("someone is already attached to this session's terminal")
	}
	ch := make(chan []byte, 256)
	p.raw = ch
	if p.cell == 0 {
		p.setEcho(true)
		p.rawPromptLocked() // the REPL's last prompt came before the person did
	}
	var once sync.Once
	detach = func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.raw == ch {
				close(ch)
				p.raw = nil
				p.setEcho(false)
			}
		})
	}
	return rawInput{p}, ch, detach, nil
}

// rawPromptLocked shows the person attached raw that the REPL waits for
// a command, where its prompt is a mark they would not see. Under mu.
func (p *process) rawPromptLocked() {
	if p.raw == nil || p.pr.RawPrompt == "" || p.done {
		return
	}
	select {
	case p.raw <- []byte(p.pr.RawPrompt):
	default: // as for output: a terminal that does not keep up misses it
	}
}

// rawInput is a person's typing into the runtime's terminal.
type rawInput struct{ p *process }

func (r rawInput) Write(b []byte) (int, error) {
	r.p.inMu.Lock()
	defer r.p.inMu.Unlock()
	return r.p.in.Write(b)
}

// setEcho turns the terminal's echo on or off; on a pseudo-terminal the
// master's settings are the terminal's.
func (p *process) setEcho(on bool) {
	// Through SyscallConn: Fd would put the master in blocking mode.
	sc, err := p.in.SyscallConn()
	if err != nil {
		return
	}
	sc.Control(func(fd uintptr) {
		t, err := unix.IoctlGetTermios(int(fd), getTermios)
		if err != nil {
			return
		}
		if on {
			t.Lflag |= unix.ECHO | unix.ECHOE | unix.ECHOK
		} else {
			t.Lflag &^= unix.ECHO | unix.ECHOE | unix.ECHOK | unix.ECHONL
		}
		unix.IoctlSetTermios(int(fd), setTermios, t)
	})
}
