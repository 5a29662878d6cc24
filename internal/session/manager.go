package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/holder"
	"github.com/polyrepl/polyrepl/internal/limit"
	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/record"
	"github.com/polyrepl/polyrepl/internal/state"
)

// Error is a refusal a client can act on: the api.ErrorReply it is sent
// as (the daemon maps its Code to an HTTP status), as an error.
//
// Its words (ErrorReply.Error, Hint) are written for any reader: they
// name no command, flag or tool. Field and Next carry the rest as data,
// for the CLI and the MCP server to word in their reader's terms. Lost
// says what a death lost, if this client was not told yet.
type Error struct {
	api.ErrorReply
}

func (e *Error) Error() string { return e.ErrorReply.Error }

func badRequest(hint, format string, a ...any) error {
	return &Error{api.ErrorReply{Code: api.CodeBadRequest, Error: fmt.Sprintf(format, a...), Hint: hint}}
}

// badInput is a refusal of one input of the request, named by field.
func badInput(field, hint, format string, a ...any) error {
	return &Error{api.ErrorReply{Code: api.CodeBadRequest, Error: fmt.Sprintf(format, a...), Hint: hint, Field: field}}
}

// CookieVar is the environment variable that marks every process of a
// session, so its whole tree can be found even after setsid or a
// double fork.
const CookieVar = "POLYREPL_SESSION"

// Manager holds every session of the daemon by name.
type Manager struct {
	state      *state.Dir
	runtimeDir string
	outputDir  string
	holdersDir string          // where the holders' sockets are
	launcher   holder.Launcher // how holders are started
	log        string          // the file holders log to
	// leaving is closed when the daemon leaves its sessions to their
	// holders: a call waiting on a cell answers that it still runs.
	leaving   chan struct{}
	leaveOnce sync.Once
	// collecting counts the calls waiting on a cell.
	collecting atomic.Int32

	// defaultMemory limits every session that asks for no limit of its
	// own, in bytes (0: none).
	defaultMemory int64
	// limits holds sessions to their memory limits.
	limits limit.Limiter

	// told is what each client was told beyond the records' entries:
	// each name's last death, and the other sessions that need its
	// attention. Every session of the daemon tells through it.
	told record.Told

	mu      sync.Mutex
	slots   map[string]*slot
	records map[string]*record.Record // of live sessions; others are read from disk
	// unreach are the sessions holders keep that this daemon cannot take
	// up, by name.
	unreach map[string]*unreachable
	// heldElsewhere are the holders' sockets whose holders said another
	// daemon holds their session: not this daemon's to list or end.
	heldElsewhere map[string]bool
	// dials are the holders' sockets being dialled, by path: their
	// holders have not answered yet (pending.go).
	dials map[string]*dial
	// adoptSlots bounds how many sessions are taken up at once.
	adoptSlots chan struct{}
	// staleLeft are the records of sessions being taken up, opened to
	// be read, whose cells left running are not ended yet (openRecord).
	staleLeft map[string]bool
}

// slot serializes the lifecycle (create, restart, kill) of one name.
type slot struct {
	life sync.Mutex
	s    *Session // guarded by Manager.mu
}

// Config is what a Manager is made with.
type Config struct {
	// State is where sessions keep their files: transcripts, records,
	// live and loss notes, spooled output.
	State *state.Dir
	// RuntimeDir is where drivers write theirs (sockets, fifos).
	RuntimeDir string
	// DefaultMemory limits every session that asks for no limit of its
	// own, in bytes (0: none).
	DefaultMemory int64
	// MemoryBy is how limits are held: "" or "auto", "cgroup", "rlimit"
	// (see limit.Limiter.Want; limit.CheckWant checks it).
	MemoryBy string
	// MemoryTotal caps all sessions together, in bytes (0: no cap),
	// where cgroups allow; MemoryKey names the cap's group, the same for
	// every daemon of a state directory (see limit.Limiter.Key).
	MemoryTotal int64
	MemoryKey   string
	// Holders starts the holders that keep the runtimes (nil:
	// holder.Reexec, a process each); HoldersDir is where they listen
	// (default: holders/ in RuntimeDir); Log is the file they log to.
	Holders    holder.Launcher
	HoldersDir string
	Log        string
}

// NewManager makes a manager of no sessions yet.
func NewManager(c Config) *Manager {
	l := c.Holders
	if l == nil {
		l = &holder.Reexec{}
	}
	hd := c.HoldersDir
	if hd == "" {
		hd = filepath.Join(c.RuntimeDir, "holders")
	}
	return &Manager{state: c.State, runtimeDir: c.RuntimeDir, outputDir: c.State.OutputDir(),
		holdersDir: hd, launcher: l, log: c.Log, leaving: make(chan struct{}),
		defaultMemory: c.DefaultMemory, limits: limit.Limiter{Want: c.MemoryBy, Total: c.MemoryTotal, Key: c.MemoryKey},
		slots: map[string]*slot{}, records: map[string]*record.Record{}, unreach: map[string]*unreachable{}, heldElsewhere: map[string]bool{},
		dials: map[string]*dial{}, adoptSlots: make(chan struct{}, adoptAtOnce), staleLeft: map[string]bool{}}
}

// Memory says the default memory limit in bytes (0: none) and how limits
// are held, for the daemon's status.
func (m *Manager) Memory() (dflt int64, how string) { return m.defaultMemory, m.limits.Describe() }

// record returns the shared record of name, opening it if needed. A
// record that cannot be read starts empty, and the error says why.
func (m *Manager) record(name string) *record.Record { return m.openRecord(name, 0) }

// openRecord is record, for a session taken up from its holder whose
// cell in flight is entry keep: that entry is not marked dead with the
// cells a daemon left running.
func (m *Manager) openRecord(name string, keep int) *record.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.records[name]; r != nil {
		if m.staleLeft[name] {
			delete(m.staleLeft, name)
			r.EndStale(keep)
		}
		return r
	}
	r, err := record.Open(m.state.RecordDir(), name)
	if err != nil {
		log.Printf("session %s: %v", name, err)
	}
	if u := m.unreach[name]; u != nil && u.adopting != nil {
		// Which of its cells runs on, its holder's hello says: the
		// others are ended once it is taken up, or found lost.
		m.staleLeft[name] = true
	} else {
		r.EndStale(keep)
	}
	m.records[name] = r
	return r
}

// Record returns the shared record of name for reading: the live
// session's, or the one left on disk by an earlier life.
func (m *Manager) Record(name string, asker api.Client) (*record.Record, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if err := m.checkReach(name, asker); err != nil {
		return nil, err
	}
	m.mu.Lock()
	r := m.records[name]
	m.mu.Unlock()
	if r != nil {
		return r, nil
	}
	if !record.Exists(m.state.RecordDir(), name) {
		return nil, m.noSession(name, asker)
	}
	// Kept open, so that a follower sees the next life of the session.
	return m.record(name), nil
}

// Raw attaches a person's terminal to the named session's runtime, for a
// runtime hosted on one (see driver.RawTerminal).
func (m *Manager) Raw(name string, asker api.Client) (in io.Writer, out <-chan []byte, detach func(), err error) {
	s, err := m.lookup(name, "", asker)
	if err != nil {
		return nil, nil, nil, err
	}
	if s.isDead() {
		return nil, nil, nil, s.deadError(asker)
	}
	s.mu.Lock()
	p := s.p
	s.mu.Unlock()
	in, out, detach, err = p.Raw()
	if err != nil {
		// Its record and cells need no terminal.
		refusal := &Error{api.ErrorReply{Code: api.CodeBadRequest, Error: fmt.Sprintf("session %q: %v", name, err),
			Next: []api.Action{{Do: api.DoAttach, Session: name}}}}
		if errors.Is(err, holder.ErrNoTerminal) {
			refusal.ErrorReply.Error = fmt.Sprintf("session %q runs %s over pipes: there is no terminal to attach to; runtimes hosted on a terminal (sh, lfortran) have one", name, s.Runtime)
		}
		return nil, nil, nil, refusal
	}
	m.note(s, asker, api.Note{Kind: api.NoteAttached, Session: name, Client: clientRef(asker)})
	return in, out, detach, nil
}

func (m *Manager) slot(name string) *slot {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.slots[name]
	if e == nil {
		e = &slot{}
		m.slots[name] = e
	}
	return e
}

func (m *Manager) get(name string) *Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.slots[name]; e != nil {
		return e.s
	}
	return nil
}

func (m *Manager) set(e *slot, s *Session) {
	m.mu.Lock()
	e.s = s
	m.mu.Unlock()
}

// Exec runs a cell in the named session, creating it first if the name
// has no live session.
func (m *Manager) Exec(ctx context.Context, name string, req api.ExecRequest, prog Progress) (api.CellResult, error) {
	if err := ValidateName(name); err != nil {
		return api.CellResult{}, err
	}
	timeout, err := Timeout(req.Timeout, req.Client)
	if err != nil {
		return api.CellResult{}, err
	}
	switch {
	case strings.TrimSpace(req.Code) == "":
		return api.CellResult{}, badInput(api.FieldCode, "", "the code is empty")
	case len(req.Code) > api.MaxCodeBytes:
		return api.CellResult{}, badRequest("put the data in a file and read it from the cell", "the code is %d bytes; the limit is %d bytes (2 MiB)", len(req.Code), api.MaxCodeBytes)
	case strings.ContainsRune(req.Code, 0):
		return api.CellResult{}, badRequest("remove the NUL bytes from the code", "the code contains NUL bytes")
	}
	if req.Spawn.Sandbox, err = normalAsked(req.Spawn.Sandbox); err != nil {
		return api.CellResult{}, err
	}
	if err := m.checkReach(name, req.Client); err != nil {
		return api.CellResult{}, err
	}
	if err := m.unreachableError(name); err != nil {
		return api.CellResult{}, err
	}
	// A runtime as a raw API call may name it (R, nodejs) is kept as the
	// daemon names it, as the CLI and MCP already send it.
	req.Spawn.Runtime = driver.Canonical(req.Spawn.Runtime)
	e := m.slot(name)
	e.life.Lock()
	s := m.get(name)
	if err := m.checkGeneration(name, s, req.Generation); err != nil {
		e.life.Unlock()
		return api.CellResult{}, err
	}
	// Again under the name's lock: another client may have made a new
	// life of it meanwhile.
	if err := m.checkReach(name, req.Client); err != nil {
		e.life.Unlock()
		return api.CellResult{}, err
	}
	if s != nil && !s.isDead() {
		if err := otherPolicy(s, req.Spawn); err != nil {
			e.life.Unlock()
			return api.CellResult{}, err
		}
	}
	if s != nil && !s.isDead() && req.Spawn.Runtime != "" && req.Spawn.Runtime != s.Runtime {
		e.life.Unlock()
		return api.CellResult{}, &Error{api.ErrorReply{Code: api.CodeBadRequest, Error: fmt.Sprintf("session %q is %s session, not %s", name, article(s.Runtime), req.Spawn.Runtime),
			Hint: "or use another session name for " + req.Spawn.Runtime, Next: []api.Action{{Do: api.DoKill, Session: name}}}}
	}
	var opening []api.Note
	if s != nil && !s.isDead() {
		opening = unchangedSpawn(s, req.Spawn)
	}
	if s == nil || s.isDead() {
		sp, lin := m.respawn(name, s, req.Spawn)
		if s != nil {
			// Its death is written down before a new life may start, so
			// that the new life's first reply says what was lost.
			select {
			case <-s.exited:
			case <-ctx.Done():
				e.life.Unlock()
				return api.CellResult{}, ctx.Err()
			}
			m.forgetDead(s)
		}
		var err error
		s, opening, err = m.create(ctx, e, name, sp, lin, req.Client)
		if err != nil {
			e.life.Unlock()
			return api.CellResult{}, err
		}
	}
	e.life.Unlock()
	r, err := s.Exec(ctx, req.Code, req.Client, timeout, prog, progressEvery(req.Progress))
	if err != nil {
		return r, err
	}
	r.Notes = append(opening, r.Notes...)
	r.Notes = append(r.Notes, m.othersNotes(name, req.Client)...)
	m.tell(&r, name, req.Client)
	return r, nil
}

func (s *Session) isDead() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == Dead
}

// lookup finds the session for wait/interrupt, or says why there is none.
func (m *Manager) lookup(name, gen string, asker api.Client) (*Session, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if err := m.checkReach(name, asker); err != nil {
		return nil, err
	}
	if err := m.unreachableError(name); err != nil {
		return nil, err
	}
	s := m.get(name)
	if err := m.checkGeneration(name, s, gen); err != nil {
		return nil, err
	}
	if s != nil {
		return s, nil
	}
	if loss, _ := m.state.Loss(name); loss != nil {
		n := lossNote(*loss)
		err := &Error{api.ErrorReply{Code: api.CodeDead, Error: lossMsg(n), Death: loss.Death, Next: []api.Action{{Do: api.DoExec, Session: name}}}}
		if m.told.TellDeath(name, loss.Generation, asker) {
			err.Lost = &n
		}
		return nil, err
	}
	return nil, m.noSession(name, asker)
}

func (m *Manager) noSession(name string, asker api.Client) error {
	var live []string
	for _, i := range Reachable(m.List(false), asker) {
		live = append(live, i.Name)
	}
	hint := ""
	if len(live) > api.MaxOthers {
		// Hundreds of sessions would make the refusal a listing.
		hint = fmt.Sprintf("sessions now: %s … and %d more", strings.Join(live[:api.MaxOthers], ", "), len(live)-api.MaxOthers)
	} else if len(live) > 0 {
		hint = "sessions now: " + strings.Join(live, ", ")
	}
	return &Error{api.ErrorReply{Code: api.CodeNoSession, Error: fmt.Sprintf("no session named %q", name), Hint: hint,
		Next: []api.Action{{Do: api.DoExec, Session: name}}}}
}

// Wait collects the named session's running or uncollected cell.
func (m *Manager) Wait(ctx context.Context, name string, req api.WaitRequest, prog Progress) (api.CellResult, error) {
	timeout, err := Timeout(req.Timeout, req.Client)
	if err != nil {
		return api.CellResult{}, err
	}
	s, err := m.lookup(name, req.Generation, req.Client)
	if err != nil {
		return api.CellResult{}, err
	}
	if s.isDead() {
		// A dead session answers once with the cell it died in, then says
		// how it died.
		s.mu.Lock()
		c := s.cur
		// Another client's cell that its sender (or anyone) collected is
		// not: the death is what this client is told.
		pending := c != nil && (!c.collected() || readerKey(c.client) == readerKey(req.Client) && !c.collectedBy(req.Client))
		s.mu.Unlock()
		if !pending {
			return api.CellResult{}, s.deadError(req.Client)
		}
	}
	r, err := s.Wait(ctx, timeout, req.Client, prog, progressEvery(req.Progress))
	if err == nil {
		r.Notes = append(r.Notes, m.othersNotes(name, req.Client)...)
		m.tell(&r, name, req.Client)
	}
	return r, err
}

// Interrupt stops the named session's running cell.
func (m *Manager) Interrupt(ctx context.Context, name string, req api.ControlRequest) (api.CellResult, error) {
	s, err := m.lookup(name, req.Generation, req.Client)
	if err != nil {
		return api.CellResult{}, err
	}
	r, err := s.Interrupt(ctx, req.Client)
	if err == nil {
		r.Notes = append(r.Notes, m.othersNotes(name, req.Client)...)
		m.tell(&r, name, req.Client)
	}
	return r, err
}

// Kill ends the named session and its whole process tree.
func (m *Manager) Kill(name string, req api.ControlRequest) (api.KillReply, error) {
	if err := ValidateName(name); err != nil {
		return api.KillReply{}, err
	}
	if err := m.checkReach(name, req.Client); err != nil {
		return api.KillReply{}, err
	}
	if reply, ok, err := m.killUnreachable(name, req.Client, api.ByKill, "killed by "+req.Client.Label()); ok {
		return reply, err
	}
	e := m.slot(name)
	e.life.Lock()
	defer e.life.Unlock()
	s, err := m.lookup(name, req.Generation, req.Client)
	if err != nil {
		return api.KillReply{}, err
	}
	if s.isDead() {
		// It died before this call (its runtime ended, or another call
		// ended it): this kill ended nothing, and says that death, its
		// time and its cause, not a kill of its own.
		if !s.waitExited(5 * time.Second) {
			return api.KillReply{}, fmt.Errorf("session %q: its death was not written down within 5s (see the daemon log)", name)
		}
		return api.KillReply{}, s.deadError(req.Client)
	}
	info := s.Info(true)
	kerr := s.kill(api.ByKill, "killed by "+req.Client.Label(), req.Client)
	// The reply says what was lost: the killer has heard of this death.
	m.told.TellDeath(name, s.Generation, req.Client)
	m.forgetDead(s)
	reply := api.KillReply{Session: name, Info: s.Info(false)}
	reply.Info.Memory = info.Memory
	if kerr != nil {
		return reply, kerr
	}
	reply.Notes = m.othersNotes(name, req.Client)
	return reply, nil
}

// Restart replaces the named session's process with a fresh one started
// the same way; the namespace is gone.
func (m *Manager) Restart(ctx context.Context, name string, req api.ControlRequest) (api.KillReply, error) {
	if err := ValidateName(name); err != nil {
		return api.KillReply{}, err
	}
	e := m.slot(name)
	e.life.Lock()
	defer e.life.Unlock()
	old, err := m.lookup(name, req.Generation, req.Client)
	if err != nil {
		return api.KillReply{}, err
	}
	before := old.Info(false)
	if err := old.kill(api.ByRestart, fmt.Sprintf("restarted by %s", req.Client.Label()), req.Client); err != nil {
		return api.KillReply{}, err
	}
	// The names gone are the loss note's, taken once the old life has
	// ended (a cell that finished while it was ended may have changed
	// them), so a restart and a death never disagree on what was lost.
	lost := lossNote(m.life(old))
	m.forgetDead(old)
	s := m.newSession(name, old.Spawn)
	if err := m.start(ctx, s); err != nil {
		return api.KillReply{}, err
	}
	m.set(e, s)
	restarted := api.Note{Kind: api.NoteRestarted, Session: name, Runtime: s.Runtime, Version: s.p.Version(),
		Cwd: s.Spawn.Cwd, PID: s.p.PID(), Names: lost.Names, Sandbox: s.Spawn.Sandbox, Enforced: s.p.Hello().Enforced}
	if before.Running != nil {
		restarted.Cell = before.Running.Cell
	}
	m.note(s, req.Client, restarted)
	return api.KillReply{Session: name, Info: s.Info(false), Notes: append([]api.Note{restarted}, m.othersNotes(name, req.Client)...)}, nil
}

// sessions are the sessions in the table now.
func (m *Manager) sessions() []*Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ss []*Session
	for _, e := range m.slots {
		if e.s != nil {
			ss = append(ss, e.s)
		}
	}
	return ss
}

// List describes every session, sorted by name. Their memory comes from
// one scan of the process table for them all.
func (m *Manager) List(withMemory bool) []api.SessionInfo {
	var tb *proc.Table
	if withMemory {
		tb, _ = proc.ReadTable()
	}
	return m.list("", func(s *Session) (api.SessionInfo, bool) { return s.info(true, withMemory, tb), true })
}

// glances is List for the notes about other sessions: every session but
// except that may need a client's attention (Session.mayNeedAttention),
// each at a glance (Session.glance). Those that cannot are not described
// at all: with 500 idle sessions, describing and sorting them all took
// most of the daemon's time of every exec (5 ms a cell).
func (m *Manager) glances(except string) []api.SessionInfo {
	return m.list(except, func(s *Session) (api.SessionInfo, bool) {
		if !s.mayNeedAttention() {
			return api.SessionInfo{}, false
		}
		return s.glance(), true
	})
}

// list describes every session but except ("": none, as no session has
// that name) that describe describes, and the unreachable ones, by name.
func (m *Manager) list(except string, describe func(*Session) (api.SessionInfo, bool)) []api.SessionInfo {
	ss := m.sessions()
	infos := []api.SessionInfo{} // a listing of none is [], not null
	for _, s := range ss {
		if s.Name != except {
			if i, ok := describe(s); ok {
				infos = append(infos, i)
			}
		}
	}
	if us := m.listUnreachable(); len(us) > 0 {
		have := make(map[string]bool, len(ss))
		for _, s := range ss {
			have[s.Name] = true
		}
		for _, u := range us {
			// One being taken up is in the table a moment before it
			// leaves this list.
			if u.Name != except && !have[u.Name] {
				infos = append(infos, u)
			}
		}
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	return infos
}

// Describe lists one session, or says why there is none.
func (m *Manager) Describe(name string, asker api.Client) (api.SessionInfo, error) {
	if err := ValidateName(name); err != nil {
		return api.SessionInfo{}, err
	}
	if err := m.checkReach(name, asker); err != nil {
		return api.SessionInfo{}, err
	}
	m.mu.Lock()
	u := m.unreach[name]
	m.mu.Unlock()
	if u != nil {
		return u.listed(), nil
	}
	asker.How = "cli"
	s, err := m.lookup(name, "", asker)
	if err != nil {
		return api.SessionInfo{}, err
	}
	return s.Info(true), nil
}

// closeLauncher ends what the holders' launcher keeps (a spare holder),
// for a daemon that leaves.
func (m *Manager) closeLauncher() {
	if c, ok := m.launcher.(interface{ Close() }); ok {
		c.Close()
	}
}

// stopAtOnce bounds how many sessions StopAll ends at a time. Their
// kills share scans of the process table (proc's shared scans: one scan
// serves every kill waiting for one), so the more end together, the
// fewer scans in all: 500 sh sessions took 14–20 s at 32 at a time on
// a loaded machine (each wave waiting out its own scans and holders),
// 8 s all at once. The bound keeps a daemon with thousands from
// signalling and waiting on all of them in one go.
const stopAtOnce = 512

// StopAll ends every session, for a daemon that is stopping: in
// parallel, stopAtOnce at a time, each verified ended (Session.kill).
func (m *Manager) StopAll(cause string) []api.SessionInfo {
	defer m.closeLauncher()
	// A holder that answers from now on is not taken up: those being
	// taken up are ended below, their holders with them.
	m.dropDials()
	m.mu.Lock()
	var es []*slot
	for _, e := range m.slots {
		es = append(es, e)
	}
	m.mu.Unlock()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		ended []api.SessionInfo
		slots = make(chan struct{}, stopAtOnce)
	)
	for _, e := range es {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			e.life.Lock()
			defer e.life.Unlock()
			m.mu.Lock()
			s := e.s
			m.mu.Unlock()
			if s == nil {
				return
			}
			info := s.Info(false)
			if err := s.kill(api.ByStop, cause, api.Client{}); err != nil {
				log.Printf("stopping session %s: %v", s.Name, err)
			}
			if info.State != Dead {
				mu.Lock()
				ended = append(ended, info)
				mu.Unlock()
			}
			m.forgetDead(s)
		}()
	}
	wg.Wait()
	for _, u := range m.listUnreachable() {
		if r, ok, err := m.killUnreachable(u.Name, api.Client{}, api.ByStop, cause); ok {
			if err != nil {
				log.Printf("stopping session %s: %v", u.Name, err)
			}
			ended = append(ended, r.Info)
		}
	}
	sort.Slice(ended, func(i, j int) bool { return ended[i].Name < ended[j].Name })
	return ended
}

func newGeneration() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(errors.New("no randomness for a session generation"))
	}
	return hex.EncodeToString(b[:])
}
