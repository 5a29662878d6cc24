package session

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/state"
)

// Taking holders up without waiting for them: a starting daemon dials
// every holder's socket at once, each on a connection of its own, and
// serves after StartWait whatever has answered by then. A holder that
// answers later (it was stopped, or is slow) is taken up when it does,
// seconds or hours later, on the same connection; until then its session
// is listed as being taken up, from its live note, calls on it are told
// to retry shortly, and kill ends it. One holder that never answers
// costs a descriptor and a goroutine, never another holder's adoption
// or the daemon's first answer.

// StartWait bounds how long a starting daemon waits for its holders'
// hellos before it serves: long enough that live holders, which answer
// in milliseconds, are taken up before the first call (100 of them on a
// loaded machine), short enough that the first answer comes within 2 s
// of the daemon's start whatever waits in the holders' directory.
const StartWait = time.Second

// adoptPatience is how long a call on a session being taken up waits for
// its holder's answer before it is told to retry.
const adoptPatience = 2 * time.Second

// A dial is one holder's socket being dialled: its connection waits for
// the holder's hello until the holder answers or the dial is dropped.
type dial struct {
	path   string
	cancel context.CancelFunc
	done   chan struct{} // closed once settled: taken up, failed or dropped

	mu    sync.Mutex
	state int

	// listed is the name its session is listed under as being taken up
	// (guarded by Manager.mu; "" if it is not).
	listed string
}

// A dial's states.
const (
	dialling = iota // waiting for the hello
	taking          // the hello came: the session is being taken up
	dropped         // given up (kill, stop, leave): the holder is not taken up
)

// drop gives the dial up unless the holder has answered: it reports
// false if the session is being taken up already (wait for done).
func (d *dial) drop() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state == taking {
		return false
	}
	d.state = dropped
	d.cancel()
	return true
}

// take marks the holder's session as being taken up, unless the dial
// was dropped.
func (d *dial) take() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state == dropped {
		return false
	}
	d.state = taking
	return true
}

func (d *dial) wasDropped() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.state == dropped
}

// errDropped is a dial given up before its holder answered.
var errDropped = errors.New("given up before its holder answered")

// dialAt starts taking up the holder at path, in the background.
func (m *Manager) dialAt(path string) *dial {
	ctx, cancel := context.WithCancel(context.Background())
	d := &dial{path: path, cancel: cancel, done: make(chan struct{})}
	m.mu.Lock()
	if old := m.dials[path]; old != nil {
		m.mu.Unlock()
		cancel()
		return old
	}
	m.dials[path] = d
	m.mu.Unlock()
	go func() {
		defer cancel()
		name, err := m.adoptAt(ctx, d)
		if err != nil && !d.wasDropped() {
			log.Printf("cannot take up the session whose holder is at %s: %v", path, err)
		}
		m.settle(d, name, err)
		close(d.done)
	}()
	return d
}

// settle is a dial's end: its session, if it was listed as being taken
// up, is now the session taken up, or what a starting daemon makes of a
// live note whose holder did not answer (recoverLife): lost, unreachable,
// or another daemon's.
func (m *Manager) settle(d *dial, name string, err error) {
	m.mu.Lock()
	if m.dials[d.path] == d {
		delete(m.dials, d.path)
	}
	listed := d.listed
	m.mu.Unlock()
	if listed == "" || d.wasDropped() {
		return
	}
	if err != nil {
		if l, _ := m.state.Live(listed); l != nil {
			m.recoverLife(*l)
		}
	}
	m.mu.Lock()
	if u := m.unreach[listed]; u != nil && u.adopting == d {
		delete(m.unreach, listed)
	}
	m.mu.Unlock()
	if err == nil && name != listed {
		log.Printf("the holder at %s, listed as keeping session %s, kept session %s", d.path, listed, name)
	}
}

// listAdopting lists life l's session as being taken up, if a dial
// waits at sock for its holder; false if none does.
func (m *Manager) listAdopting(l state.Life, sock string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.dials[sock]
	if d == nil {
		return false
	}
	d.listed = l.Name
	m.unreach[l.Name] = &unreachable{
		info: api.SessionInfo{Name: l.Name, Generation: l.Generation, Runtime: l.Runtime, Version: l.Version, Exe: l.Exe,
			PID: l.PID, Created: l.Created, Cells: l.Cells, Cwd: l.Cwd, Names: l.Names, Transcript: l.Transcript, Holder: l.Holder.PID,
			Sandbox: lifeSandbox(l), State: api.StateAdopting},
		tree: proc.Tree{Leader: proc.Proc{PID: l.PID, Start: l.Start}, Cookie: l.Cookie}, holder: l.Holder, socket: sock,
		adopting: d, since: time.Now(),
	}
	log.Printf("session %s (generation %s): its holder (pid %d) has not answered at %s yet; it is taken up when it does",
		l.Name, l.Generation, l.Holder.PID, sock)
	return true
}

// adoptingProblem says what is known of a session being taken up, as
// it stands now.
func adoptingProblem(u *unreachable) string {
	why := "which has not answered yet"
	if proc.Stopped(u.holder) {
		why = "which is stopped by a signal (SIGSTOP) and answers once it runs again (SIGCONT)"
	}
	return fmt.Sprintf("being taken up from its holder (pid %d), %s; waiting for it since %s", u.holder.PID, why, u.since.Format(time.TimeOnly))
}

// adoptingError refuses a call on a session being taken up: retry
// shortly, or end it.
func adoptingError(name string, u *unreachable) error {
	return &Error{api.ErrorReply{Code: api.CodeAdopting, Error: fmt.Sprintf("session %q is %s", name, adoptingProblem(u)),
		Hint: "retry shortly: its calls are served as soon as its holder answers",
		Next: []api.Action{{Do: api.DoSessions, Session: name}, {Do: api.DoKill, Session: name}}}}
}

// awaitAdoption waits, at most adoptPatience, for the holder of a session
// being taken up to answer.
func awaitAdoption(u *unreachable) {
	t := time.NewTimer(adoptPatience)
	defer t.Stop()
	select {
	case <-u.adopting.done:
	case <-t.C:
	}
}

// dropDial gives up the dial at path, if there is one: a socket found
// again where a dead holder listened is not waited on.
func (m *Manager) dropDial(path string) {
	m.mu.Lock()
	d := m.dials[path]
	m.mu.Unlock()
	if d != nil && !d.drop() {
		<-d.done
	}
}

// dropDials gives up every dial, for a daemon that stops or leaves: a
// holder that answers after this is not taken up (it keeps its session
// for the next daemon). Sessions being taken up now are, first.
func (m *Manager) dropDials() {
	m.mu.Lock()
	ds := make([]*dial, 0, len(m.dials))
	for _, d := range m.dials {
		ds = append(ds, d)
	}
	m.mu.Unlock()
	for _, d := range ds {
		if !d.drop() {
			<-d.done
		}
	}
}

// Adopting lists the sessions being taken up now, by name.
func (m *Manager) Adopting() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var names []string
	for name, u := range m.unreach {
		if u.adopting != nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// waitingDials says how many holders' sockets are still dialled, for the
// daemon's log.
func (m *Manager) waitingDials() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var paths []string
	for p := range m.dials {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	if len(paths) > 8 {
		paths = append(paths[:8], fmt.Sprintf("and %d more", len(paths)-8))
	}
	return strings.Join(paths, ", ")
}
