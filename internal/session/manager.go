package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/limit"
	"github.com/polyrepl/polyrepl/internal/record"
	"github.com/polyrepl/polyrepl/internal/state"
)

// Error is a refusal a client can act on: it maps to an HTTP status and an
// api.ErrorReply.
//
// Msg and Hint are written for any reader: they name no command, flag or
// tool. Field and Next carry the rest as data, for the CLI and the MCP
// server to word in their reader's terms.
type Error struct {
	Code  string // one of the api.Code constants
	Msg   string
	Hint  string
	Field string       // the input that was wrong, one of the api.Field constants
	Next  []api.Action // steps that help
	Death *api.Death
	Lost  *api.Note // what the death lost, if this client was not told yet
}

func (e *Error) Error() string { return e.Msg }

func badRequest(hint, format string, a ...any) error {
	return &Error{Code: api.CodeBadRequest, Msg: fmt.Sprintf(format, a...), Hint: hint}
}

// badInput is a refusal of one input of the request, named by field.
func badInput(field, hint, format string, a ...any) error {
	return &Error{Code: api.CodeBadRequest, Msg: fmt.Sprintf(format, a...), Hint: hint, Field: field}
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

	// defaultMemory limits every session that asks for no limit of its
	// own, in bytes (0: none).
	defaultMemory int64
	// limits holds sessions to their memory limits.
	limits limit.Limiter

	// told remembers who has heard of each name's last death.
	told told

	mu      sync.Mutex
	entries map[string]*entry
	records map[string]*record.Record // of live sessions; others are read from disk
}

// entry serializes the lifecycle (create, restart, kill) of one name.
type entry struct {
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
}

// NewManager makes a manager of no sessions yet.
func NewManager(c Config) *Manager {
	return &Manager{state: c.State, runtimeDir: c.RuntimeDir, outputDir: c.State.OutputDir(),
		defaultMemory: c.DefaultMemory, limits: limit.Limiter{Want: c.MemoryBy},
		entries: map[string]*entry{}, records: map[string]*record.Record{}}
}

// Memory says the default memory limit in bytes (0: none) and how limits
// are held, for the daemon's status.
func (m *Manager) Memory() (dflt int64, how string) { return m.defaultMemory, m.limits.Describe() }

// record returns the shared record of name, opening it if needed. A
// record that cannot be read starts empty, and the error says why.
func (m *Manager) record(name string) *record.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.records[name]; r != nil {
		return r
	}
	r, err := record.Open(m.state.RecordDir(), name)
	if err != nil {
		log.Printf("session %s: %v", name, err)
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
	rt, ok := p.(driver.RawTerminal)
	if !ok {
		return nil, nil, nil, badRequest("attach without --raw shows the record and sends cells",
			"session %q runs %s over pipes: there is no terminal to attach to; runtimes hosted on a terminal (sh, lfortran) have one", name, s.Runtime)
	}
	in, out, detach, err = rt.Raw()
	if err != nil {
		return nil, nil, nil, badRequest("attach without --raw shows the record and sends cells", "session %q: %v", name, err)
	}
	m.note(s, asker, api.Note{Kind: api.NoteAttached, Session: name, Client: clientRef(asker)})
	return in, out, detach, nil
}

// note adds note n to the record of s, said by c.
func (m *Manager) note(s *Session, c api.Client, n api.Note) {
	s.rec.Add(api.Entry{Kind: api.EntryNote, Generation: s.Generation, Runtime: s.Runtime,
		Who: c.Who, How: c.How, Conn: c.Conn, Note: &n, Started: time.Now()})
}

// tell adds to a reply what other clients did in the session since the
// asker last heard, and what the session printed while idle, unless it
// asked not to hear (it then gets the idle note instead).
func (m *Manager) tell(r *api.CellResult, name string, asker api.Client) {
	if asker.Quiet {
		return
	}
	m.mu.Lock()
	rec := m.records[name]
	m.mu.Unlock()
	if rec == nil {
		return
	}
	r.Activity = rec.Activity(asker)
	if a := r.Activity; a != nil && len(a.Entries) > 0 {
		// A death this client has heard of already is not told again.
		kept := a.Entries[:0]
		for _, e := range a.Entries {
			if e.Kind == api.EntryNote && e.Note != nil && e.Note.Kind == api.NoteEnded && m.told.has(name, e.Generation, asker) {
				continue
			}
			kept = append(kept, e)
		}
		a.Entries = kept
		if len(a.Entries) == 0 && a.Earlier == 0 {
			r.Activity = nil
		}
	}
	if err := rec.SaveError(); err != nil {
		r.Notes = append(r.Notes, api.Note{Kind: api.NoteSave, Session: name, Saved: api.SavedRecord, Err: err.Error()})
	}
}

func (m *Manager) entry(name string) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[name]
	if e == nil {
		e = &entry{}
		m.entries[name] = e
	}
	return e
}

func (m *Manager) get(name string) *Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[name]; e != nil {
		return e.s
	}
	return nil
}

func (m *Manager) set(e *entry, s *Session) {
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
	e := m.entry(name)
	e.life.Lock()
	s := m.get(name)
	if err := m.checkGeneration(name, s, req.Generation); err != nil {
		e.life.Unlock()
		return api.CellResult{}, err
	}
	if s != nil && !s.isDead() && req.Spawn.Runtime != "" && req.Spawn.Runtime != s.Runtime {
		e.life.Unlock()
		return api.CellResult{}, &Error{Code: api.CodeBadRequest, Msg: fmt.Sprintf("session %q is a %s session, not %s", name, s.Runtime, req.Spawn.Runtime),
			Hint: "or use another session name for " + req.Spawn.Runtime, Next: []api.Action{{Do: api.DoKill, Session: name}}}
	}
	var opening []api.Note
	if s != nil && !s.isDead() {
		opening = unchangedSpawn(s, req.Spawn)
	}
	if s == nil || s.isDead() {
		sp, again := m.respawn(name, s, req.Spawn)
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
		s, opening, err = m.create(ctx, e, name, sp, req.Client)
		if err != nil {
			e.life.Unlock()
			return api.CellResult{}, err
		}
		if again {
			for i := range opening {
				if opening[i].Kind == api.NoteCreated {
					opening[i].Again = true
				}
			}
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

// respawn is how a new life of name starts: as the life before it if
// that one died unasked (its runtime exited or crashed, the kernel killed
// it, its daemon was lost) — its runtime, executable, working directory,
// environment, project and memory limit, as restart would, unless the
// call asks for another runtime or names an executable, directory,
// project or limit of its own — and otherwise as the call asks. prev is the dead life if
// it is still in the table.
func (m *Manager) respawn(name string, prev *Session, asked api.Spawn) (api.Spawn, bool) {
	var was api.Spawn
	switch {
	case prev != nil:
		prev.mu.Lock()
		d := prev.death
		was = prev.Spawn
		prev.mu.Unlock()
		if d == nil || !unasked(d.By) {
			return asked, false
		}
	default:
		loss, _ := m.state.Loss(name)
		if loss == nil || loss.Death == nil || !unasked(loss.Death.By) {
			return asked, false
		}
		was = api.Spawn{Runtime: loss.Runtime, Exe: loss.Exe, Cwd: loss.Cwd, Env: asked.Env}
	}
	if asked.Runtime != "" && asked.Runtime != was.Runtime {
		return asked, false
	}
	if fi, err := os.Stat(was.Cwd); asked.CwdAsked || err != nil || !fi.IsDir() {
		was.Cwd = asked.Cwd
	}
	if asked.Exe != "" {
		was.Exe = asked.Exe
	}
	if asked.Project != "" {
		was.Project = asked.Project
	}
	if asked.Memory != 0 {
		was.Memory = asked.Memory
	}
	if was.Env == nil {
		was.Env = asked.Env
	}
	return was, true
}

// unasked says whether a death of this cause was nobody's choice.
func unasked(by string) bool {
	switch by {
	case api.ByExit, api.BySignal, api.ByMemory, api.ByDaemonLost:
		return true
	}
	return false
}

func (s *Session) isDead() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == Dead
}

// create starts a new session under name; e.life is held.
func (m *Manager) create(ctx context.Context, e *entry, name string, sp api.Spawn, asker api.Client) (*Session, []api.Note, error) {
	if sp.Runtime == "" {
		sp.Runtime = api.DefaultRuntime
	}
	drv, err := driver.Lookup(sp.Runtime)
	if err != nil {
		return nil, nil, badInput(api.FieldRuntime, "choose one of the known runtimes", "%v", err)
	}
	if !filepath.IsAbs(sp.Cwd) {
		return nil, nil, badInput(api.FieldCwd, "give an absolute directory", "the working directory %q is not an absolute path", sp.Cwd)
	}
	if fi, err := os.Stat(sp.Cwd); err != nil || !fi.IsDir() {
		return nil, nil, badInput(api.FieldCwd, "give an existing directory", "the working directory %s does not exist or is not a directory", sp.Cwd)
	}
	if sp.Exe == "" {
		sp.Exe = drv.Info().DefaultExe(sp.Env, sp.Cwd)
	}
	if sp.Project != "" {
		if !filepath.IsAbs(sp.Project) {
			return nil, nil, badInput(api.FieldProject, "give an absolute directory", "the project directory %q is not an absolute path", sp.Project)
		}
		if fi, err := os.Stat(sp.Project); err != nil || !fi.IsDir() {
			return nil, nil, badInput(api.FieldProject, "give an existing directory", "the project directory %s does not exist or is not a directory", sp.Project)
		}
	}
	s := m.newSession(name, sp, drv)
	if err := m.start(ctx, s); err != nil {
		return nil, nil, err
	}
	var notes []api.Note
	if loss, _ := m.state.Loss(name); loss != nil {
		if m.told.first(name, loss.Generation, asker) {
			notes = append(notes, lossNote(*loss))
		}
		if err := m.state.ClearLoss(name); err != nil {
			log.Printf("session %s: cannot remove its death note: %v", name, err)
		}
	}
	created := api.Note{Kind: api.NoteCreated, Session: name, Runtime: s.Runtime, Version: s.p.Version(),
		Cwd: sp.Cwd, PID: s.p.PID(), Said: s.p.Note()}
	notes = append(notes, created)
	m.note(s, asker, created)
	m.set(e, s)
	return s, notes, nil
}

// newSession makes a session, not yet started, for a new life of name.
func (m *Manager) newSession(name string, sp api.Spawn, drv driver.Driver) *Session {
	return &Session{
		Name: name, Generation: newGeneration(), Created: time.Now(), Spawn: sp,
		Runtime: sp.Runtime, Transcript: m.state.TranscriptPath(name, drv.Info().Ext),
		m: m, drv: drv, changed: make(chan struct{}), state: Starting,
		exited: make(chan struct{}),
		idle:   bound.NewSink(api.OutputLimit, m.outputDir, name+"-idle-*.txt"),
		rec:    m.record(name),
	}
}

// start launches s's runtime process and records it as live.
func (m *Manager) start(ctx context.Context, s *Session) error {
	mem := s.Spawn.Memory
	if mem == 0 {
		mem = m.defaultMemory
	}
	if mem > 0 {
		m.limits.Prepare()
	}
	p, err := s.drv.Start(ctx, driver.Spec{
		Exe: s.Spawn.Exe, Cwd: s.Spawn.Cwd, Env: s.Spawn.Env,
		Cookie:     CookieVar + "=" + s.Generation,
		RuntimeDir: m.runtimeDir, ValueLimit: api.ValueLimit, Project: s.Spawn.Project,
	}, s)
	if err != nil {
		return badInput(api.FieldExe, "choose the executable", "cannot start a %s session: %v", s.Runtime, err)
	}
	var lim *limit.Limit
	if mem > 0 {
		if lim, err = m.limits.Apply(p.PID(), "polyrepl-"+s.Generation, mem); err != nil {
			p.Tree().Kill(killGrace)
			return badInput(api.FieldMemory, "run without a memory limit, or give the daemon a delegated cgroup", "cannot start a %s session with a memory limit: %v", s.Runtime, err)
		}
	}
	s.mu.Lock()
	s.limit = lim
	s.p = p
	s.state = Idle
	s.lastActive = time.Now()
	s.notifyLocked()
	s.mu.Unlock()
	header := fmt.Sprintf("=== session %q generation %s created %s: %s %s (%s), cwd %s ===",
		s.Name, s.Generation, s.Created.Format(time.RFC3339), s.Runtime, p.Version(), p.Exe(), s.Spawn.Cwd)
	t, err := state.OpenTranscript(s.Transcript)
	if err != nil {
		log.Printf("session %s: %v", s.Name, err)
	} else if err := t.Append("#", header, ""); err != nil {
		log.Printf("session %s: %v", s.Name, err)
	}
	s.mu.Lock()
	s.transcript = t
	s.mu.Unlock()
	if err := m.state.SaveLive(m.life(s)); err != nil {
		log.Printf("session %s: cannot record it as live: %v", s.Name, err)
	}
	return nil
}

// forgetDead drops a dead session from the table; its death note stays.
func (m *Manager) forgetDead(s *Session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[s.Name]; e != nil && e.s == s {
		e.s = nil
	}
	// Close spool files nobody will collect now, so no descriptor leaks.
	s.mu.Lock()
	s.idle.Close()
	if s.cur != nil {
		s.cur.out.Close()
	}
	s.mu.Unlock()
	// The record is saved and let go; it is read back when needed.
	if r := m.records[s.Name]; r == s.rec && (m.entries[s.Name] == nil || m.entries[s.Name].s == nil) {
		delete(m.records, s.Name)
		if err := r.Close(); err != nil {
			log.Printf("session %s: %v", s.Name, err)
		}
	}
}

// lookup finds the session for wait/interrupt, or says why there is none.
func (m *Manager) lookup(name, gen string, asker api.Client) (*Session, error) {
	if err := ValidateName(name); err != nil {
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
		err := &Error{Code: api.CodeDead, Msg: lossMsg(n), Death: loss.Death, Next: []api.Action{{Do: api.DoExec, Session: name}}}
		if m.told.first(name, loss.Generation, asker) {
			err.Lost = &n
		}
		return nil, err
	}
	return nil, m.noSession(name, asker)
}

func (m *Manager) noSession(name string, asker api.Client) error {
	var live []string
	for _, i := range m.List(false) {
		live = append(live, i.Name)
	}
	hint := ""
	if len(live) > 0 {
		hint = "sessions now: " + strings.Join(live, ", ")
	}
	return &Error{Code: api.CodeNoSession, Msg: fmt.Sprintf("no session named %q", name), Hint: hint,
		Next: []api.Action{{Do: api.DoExec, Session: name}}}
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
		pending := c != nil && (!c.delivered || c.out.Len() > 0)
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
	e := m.entry(name)
	e.life.Lock()
	defer e.life.Unlock()
	s, err := m.lookup(name, req.Generation, req.Client)
	if err != nil {
		return api.KillReply{}, err
	}
	info := s.Info(true)
	kerr := s.kill(api.ByKill, "killed by "+who(req.Client), req.Client)
	// The reply says what was lost: the killer has heard of this death.
	m.told.first(name, s.Generation, req.Client)
	m.forgetDead(s)
	reply := api.KillReply{Session: s.Info(false)}
	reply.Session.Memory = info.Memory
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
	e := m.entry(name)
	e.life.Lock()
	defer e.life.Unlock()
	old, err := m.lookup(name, req.Generation, req.Client)
	if err != nil {
		return api.KillReply{}, err
	}
	before := old.Info(false)
	if err := old.kill(api.ByRestart, fmt.Sprintf("restarted by %s", who(req.Client)), req.Client); err != nil {
		return api.KillReply{}, err
	}
	m.forgetDead(old)
	s := m.newSession(name, old.Spawn, old.drv)
	if err := m.start(ctx, s); err != nil {
		return api.KillReply{}, err
	}
	m.set(e, s)
	restarted := api.Note{Kind: api.NoteRestarted, Session: name, Runtime: s.Runtime, Version: s.p.Version(),
		Cwd: s.Spawn.Cwd, PID: s.p.PID(), Names: before.Names}
	m.note(s, req.Client, restarted)
	return api.KillReply{Session: s.Info(false), Notes: append([]api.Note{restarted}, m.othersNotes(name, req.Client)...)}, nil
}

// List describes every session, sorted by name.
func (m *Manager) List(withMemory bool) []api.SessionInfo {
	m.mu.Lock()
	var ss []*Session
	for _, e := range m.entries {
		if e.s != nil {
			ss = append(ss, e.s)
		}
	}
	m.mu.Unlock()
	infos := make([]api.SessionInfo, 0, len(ss))
	for _, s := range ss {
		infos = append(infos, s.Info(withMemory))
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	return infos
}

// Describe lists one session, or says why there is none.
func (m *Manager) Describe(name string) (api.SessionInfo, error) {
	s, err := m.lookup(name, "", api.Client{How: "cli"})
	if err != nil {
		return api.SessionInfo{}, err
	}
	return s.Info(true), nil
}

// othersNotes mentions the other sessions that have a cell running or
// something nobody collected, so no client forgets work in flight.
//
// A session that died with a cell nobody collected is mentioned with what
// its death lost, once to each client: it is the first this client hears
// of the death, so the reply that collects the cell does not tell it again.
func (m *Manager) othersNotes(except string, asker api.Client) []api.Note {
	n := api.Note{Kind: api.NoteOthers}
	for _, i := range m.List(false) {
		if i.Name == except {
			continue
		}
		switch {
		case i.Running != nil:
		case i.State == Dead && i.Unread:
			if !m.told.first(i.Name, i.Generation, asker) {
				continue
			}
		case i.Unread:
		default:
			continue
		}
		o := api.Other{Session: i.Name, State: i.State, Running: i.Running, Death: i.Death, Unread: i.Unread}
		if i.State == Dead {
			o.Names = i.Names
		}
		n.Others = append(n.Others, o)
		n.Next = append(n.Next, api.Action{Do: api.DoWait, Session: i.Name})
	}
	if len(n.Others) == 0 {
		return nil
	}
	return []api.Note{n}
}

// StopAll ends every session, for a daemon that is stopping.
func (m *Manager) StopAll(cause string) []api.SessionInfo {
	m.mu.Lock()
	var es []*entry
	for _, e := range m.entries {
		es = append(es, e)
	}
	m.mu.Unlock()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		ended []api.SessionInfo
	)
	for _, e := range es {
		wg.Add(1)
		go func() {
			defer wg.Done()
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
