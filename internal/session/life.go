package session

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/holder"
	"github.com/polyrepl/polyrepl/internal/limit"
	"github.com/polyrepl/polyrepl/internal/record"
	"github.com/polyrepl/polyrepl/internal/state"
)

// The start of a life: how a new life of a name is spawned (as the one
// before it, after a death nobody asked for), created, started and
// recorded as live, and how a dead one leaves the table.

// lineage is how a new life of a name stands to the life before it.
type lineage struct {
	again    bool   // started as the life before it
	ended    string // how the life before it was ended, if that was asked for (kill, stop)
	replaced string // the runtime of the life before it, which the call replaced
}

// respawn is how a new life of name starts: as the life before it,
// however that one ended (killed, stopped, or dead unasked: its runtime
// exited or crashed, the kernel killed it, its daemon was lost) — its
// runtime, executable, working directory, project, memory limit and
// gateway, as restart would, unless the call asks for another runtime or
// names an executable, directory, project or limit of its own. A life
// that died unasked keeps its environment too; after a kill or a stop
// the environment is the caller's. prev is the dead life if it is still
// in the table; else the death note (kept across daemons) says how the
// last life was started. A name with no life before it, or whose call
// names another runtime, starts as the call asks.
func (m *Manager) respawn(name string, prev *Session, asked api.Spawn) (api.Spawn, lineage) {
	var was api.Spawn
	var lin lineage
	switch {
	case prev != nil:
		prev.mu.Lock()
		d := prev.death
		was = prev.Spawn
		was.Runtime = prev.Runtime
		prev.mu.Unlock()
		if d == nil {
			return asked, lin
		}
		if !unasked(d.By) {
			lin.ended, was.Env = d.By, asked.Env
		}
	default:
		loss, _ := m.state.Loss(name)
		if loss == nil || loss.Runtime == "" {
			return asked, lin
		}
		if loss.Spawn != nil {
			was = *loss.Spawn
		}
		was.Runtime, was.Env = loss.Runtime, asked.Env
		if was.Exe == "" {
			was.Exe = loss.Exe
		}
		if was.Cwd == "" {
			was.Cwd = loss.Cwd
		}
		if loss.Death != nil && !unasked(loss.Death.By) {
			lin.ended = loss.Death.By
		}
	}
	if asked.Runtime != "" && asked.Runtime != was.Runtime {
		lin.replaced = was.Runtime
		return asked, lin
	}
	lin.again = true
	if fi, err := os.Stat(was.Cwd); asked.CwdAsked || err != nil || !fi.IsDir() {
		was.Cwd, was.CwdAsked = asked.Cwd, asked.CwdAsked
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
	if asked.Gateway != "" {
		was.Gateway, was.GatewayHTTP = asked.Gateway, asked.GatewayHTTP
	}
	if asked.Sandbox != nil {
		was.Sandbox = asked.Sandbox
	}
	if was.Env == nil {
		was.Env = asked.Env
	}
	return was, lin
}

// unasked says whether a death of this cause was nobody's choice.
func unasked(by string) bool {
	switch by {
	case api.ByExit, api.BySignal, api.ByMemory, api.ByMemoryCap, api.ByDaemonLost, api.ByHolder:
		return true
	}
	return false
}

// create starts a new session under name; e.life is held. lin says how
// it stands to the life before it (see respawn).
func (m *Manager) create(ctx context.Context, e *slot, name string, sp api.Spawn, lin lineage, asker api.Client) (*Session, []api.Note, error) {
	if sp.Runtime == "" {
		sp.Runtime = api.DefaultRuntime
	}
	drv, err := driver.Lookup(sp.Runtime)
	if err != nil {
		refusal := badInput(api.FieldRuntime, "choose one of the known runtimes", "%v", err).(*Error)
		refusal.Next = []api.Action{{Do: api.DoRuntimes}}
		return nil, nil, refusal
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
	if strings.HasPrefix(sp.Runtime, api.JupyterPrefix) && sp.Gateway == "" {
		sp.Gateway = driver.Getenv(sp.Env, api.GatewayVar)
	}
	if sp.Gateway != "" && !strings.HasPrefix(sp.Runtime, api.JupyterPrefix) {
		return nil, nil, badInput(api.FieldRuntime, "name a Jupyter kernel as the runtime: jupyter:NAME",
			"a gateway runs Jupyter kernels, and the runtime asked for is %s", sp.Runtime)
	}
	if sp.Gateway != "" && sp.Memory > 0 {
		return nil, nil, badInput(api.FieldMemory, "leave the memory limit out: the gateway's own limits apply",
			"a kernel on a gateway runs on another machine, where polyrepl cannot limit its memory")
	}
	if err := sandboxFor(&sp, asker); err != nil {
		return nil, nil, err
	}
	if sp.Project != "" {
		if !filepath.IsAbs(sp.Project) {
			return nil, nil, badInput(api.FieldProject, "give an absolute directory", "the project directory %q is not an absolute path", sp.Project)
		}
		if fi, err := os.Stat(sp.Project); err != nil || !fi.IsDir() {
			return nil, nil, badInput(api.FieldProject, "give an existing directory", "the project directory %s does not exist or is not a directory", sp.Project)
		}
	}
	s := m.newSession(name, sp)
	if err := m.start(ctx, s); err != nil {
		return nil, nil, err
	}
	var notes []api.Note
	if loss, _ := m.state.Loss(name); loss != nil {
		if m.told.TellDeath(name, loss.Generation, asker) {
			notes = append(notes, lossNote(*loss))
		}
		if err := m.state.ClearLoss(name); err != nil {
			log.Printf("session %s: cannot remove its death note: %v", name, err)
		}
	}
	created := api.Note{Kind: api.NoteCreated, Session: name, Runtime: s.Runtime, Version: s.p.Version(),
		Cwd: sp.Cwd, PID: s.p.PID(), Said: s.p.Note(), Again: lin.again,
		Ended: lin.ended, Replaced: lin.replaced, Sandbox: sp.Sandbox, Enforced: s.p.Hello().Enforced}
	notes = append(notes, created)
	m.note(s, asker, created)
	m.set(e, s)
	return s, notes, nil
}

// newSession makes a session, not yet started, for a new life of name.
func (m *Manager) newSession(name string, sp api.Spawn) *Session {
	return m.sessionOf(name, newGeneration(), time.Now(), sp, m.record(name))
}

// sessionOf makes the session of one life of name, generation gen, with
// record rec: not yet started, or not yet taken up from its holder. Its
// runtime's facts and its transcript's path come with its holder's hello
// (see setFacts).
func (m *Manager) sessionOf(name, gen string, created time.Time, sp api.Spawn, rec *record.Record) *Session {
	return &Session{
		Name: name, Generation: gen, Created: created, Spawn: sp, Runtime: sp.Runtime,
		m: m, told: &m.told, changed: make(chan struct{}), state: Starting,
		exited: make(chan struct{}),
		idle:   bound.NewSink(api.OutputLimit, m.outputDir, name+"-idle-*.txt"),
		rec:    rec,
	}
}

// start launches s's runtime process and records it as live.
func (m *Manager) start(ctx context.Context, s *Session) error {
	mem := s.Spawn.Memory
	if mem == 0 && s.Spawn.Gateway == "" {
		mem = m.defaultMemory // a gateway's kernel is on another machine
	}
	// Under a cap on all sessions together every session gets a group,
	// a limit of its own or not; a gateway's kernel is not here to hold.
	capped := m.limits.Total > 0 && s.Spawn.Gateway == ""
	if mem > 0 || capped {
		m.limits.Prepare()
	}
	sp := s.Spawn
	sp.Runtime = s.Runtime
	brief := holder.Brief{
		Name: s.Name, Generation: s.Generation, Created: s.Created, Spawn: sp,
		Cookie: CookieVar + "=" + s.Generation, RuntimeDir: m.runtimeDir, ValueLimit: api.ValueLimit,
		SpoolDir: m.outputDir, Socket: holder.SocketName(m.holdersDir, s.Generation), Log: m.log,
	}
	if f := s.forking; f != nil {
		brief.Fork, brief.ForkFrom = &f.brief, f.from.Fork
		s.forking = nil
	}
	p, err := holder.Start(ctx, m.launcher, brief)
	if err != nil {
		refusal := &Error{api.ErrorReply{Code: api.CodeBadRequest, Error: fmt.Sprintf("cannot start %s session: %v", article(s.Runtime), err),
			Field: api.FieldExe, Hint: "choose the executable"}}
		var sbe *holder.SandboxError
		switch {
		case errors.As(err, &sbe):
			refusal.Field, refusal.Hint = api.FieldSandbox, "choose a policy this kernel enforces, or accept less with best effort"
		case s.Spawn.Gateway != "":
			refusal.Field, refusal.Hint = api.FieldGateway, "check the gateway, its token and the kernel's name"
			refusal.Next = []api.Action{{Do: api.DoKernels}}
		case strings.HasPrefix(s.Runtime, api.JupyterPrefix):
			refusal.Field, refusal.Hint = api.FieldRuntime, "choose an installed kernel, or fix its kernel.json"
			refusal.Next = []api.Action{{Do: api.DoRuntimes}}
		}
		return refusal
	}
	s.mu.Lock()
	s.p = p
	s.setFacts(p.Hello().Facts)
	if f := p.Hello().Forked; f != nil {
		s.cells = f.Cell // a fork's cells go on from its parent's
	}
	s.mu.Unlock()
	p.Start(s)
	var lim *limit.Limit
	if mem > 0 || capped {
		if lim, err = m.limits.Apply(p.PID(), "polyrepl-"+s.Generation, mem); err != nil {
			p.End()
			return badInput(api.FieldMemory, memoryHint, "cannot start %s session with a memory limit: %v", article(s.Runtime), err)
		}
	}
	if lim != nil {
		if err := p.SetLimit(lim.Held()); err != nil {
			log.Printf("session %s: cannot tell its holder the memory limit: %v", s.Name, err)
		}
	}
	s.mu.Lock()
	s.limit = lim
	if s.state == Starting {
		s.state = Idle
	}
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
	s.transcript, s.transcriptErr = t, err
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
	if e := m.slots[s.Name]; e != nil && e.s == s {
		e.s = nil
	}
	// Close spool files nobody will collect now, so no descriptor leaks.
	s.mu.Lock()
	s.idle.Close()
	s.mu.Unlock()
	// The record is saved and let go; it is read back when needed.
	if r := m.records[s.Name]; r == s.rec && (m.slots[s.Name] == nil || m.slots[s.Name].s == nil) {
		delete(m.records, s.Name)
		if err := r.Close(); err != nil {
			log.Printf("session %s: %v", s.Name, err)
		}
	}
}

// article gives a runtime's name with its article: "an ipython", "an r",
// "a python".
func article(runtime string) string {
	if runtime == "r" || (runtime != "" && strings.ContainsRune("aeioAEIO", rune(runtime[0]))) {
		return "an " + runtime
	}
	return "a " + runtime
}
