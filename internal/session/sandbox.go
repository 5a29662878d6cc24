package session

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/record"
	"github.com/polyrepl/polyrepl/internal/sandbox"
	"github.com/polyrepl/polyrepl/internal/state"
)

// A session's sandbox in the daemon: its policy made Normal where a
// request brings it and kept in the session's spawn (so its holder has
// it, and gives it back to the next daemon in its hello); a different
// one for a live session refused; and the ceilings a client is under
// (api.Client.Reach), which decide the sessions it may see, use and
// create. A session outside a client's ceilings is not listed to it and
// every call naming it is refused with CodeSandbox: a cell in a
// sandboxed session cannot leave its sandbox through a session that
// allows more.

// normalAsked makes a request's policy Normal; nil (not asked) stays nil.
func normalAsked(sb *api.Sandbox) (*api.Sandbox, error) {
	if sb == nil {
		return nil, nil
	}
	n, err := sandbox.Normal(sb)
	if err != nil {
		return nil, badInput(api.FieldSandbox, "give the policy read-only, workspace-write or full, network on or off, and absolute directories", "%v", err)
	}
	return &n, nil
}

// policyOf is a session's policy, Normal: nil (a session of an older
// daemon, or not yet made Normal) is full.
func policyOf(sb *api.Sandbox) api.Sandbox {
	n, err := sandbox.Normal(sb)
	if err != nil {
		// Kept policies are Normal; one that is not is taken as the
		// widest, so no ceiling lets it through.
		return api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}
	}
	return n
}

// samePolicy says whether two Normal policies allow the same: best
// effort is how much of a policy the kernel must enforce, not the policy.
func samePolicy(a, b api.Sandbox) bool {
	return a.Policy == b.Policy && a.Network == b.Network &&
		sameDirs(a.Readable, b.Readable) && sameDirs(a.Writable, b.Writable)
}

func sameDirs(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// PolicyWords says a policy briefly, for an error's words: "read-only,
// network off", with its extra directories counted.
func PolicyWords(sb api.Sandbox) string {
	w := sb.Policy
	if sb.Policy != api.SandboxFull {
		w += ", network " + sb.Network
	}
	if n := len(sb.Readable); n > 0 {
		w += fmt.Sprintf(", %d readable directories", n)
	}
	if n := len(sb.Writable); n > 0 {
		w += fmt.Sprintf(", %d writable directories", n)
	}
	return w
}

// otherPolicy refuses a request that names a policy other than the live
// session s has: its policy is fixed at its creation, as its runtime is.
// A client's default (SandboxDefault) names none for a live session.
func otherPolicy(s *Session, sp api.Spawn) error {
	asked := sp.Sandbox
	if asked == nil || sp.SandboxDefault {
		return nil
	}
	have := policyOf(s.Spawn.Sandbox)
	if samePolicy(have, *asked) {
		return nil
	}
	return &Error{api.ErrorReply{Code: api.CodeBadRequest, Field: api.FieldSandbox,
		Error: fmt.Sprintf("session %q runs under the sandbox %s, not %s: a session's policy is set when it is created", s.Name, PolicyWords(have), PolicyWords(*asked)),
		Hint:  "leave the policy out to use the session as it is, or use another session name for that policy",
		Next:  []api.Action{{Do: api.DoKill, Session: s.Name}}}}
}

// ceilings are those asker is under.
func ceilings(asker api.Client) []api.Ceiling {
	if asker.Reach == nil {
		return nil
	}
	return asker.Reach.Ceilings
}

// within says whether a session whose policy is sb at cwd is within
// every ceiling asker is under, and if not, why.
func within(sb *api.Sandbox, cwd string, asker api.Client) (bool, string) {
	cs := ceilings(asker)
	if len(cs) == 0 {
		return true, ""
	}
	p := policyOf(sb)
	for _, c := range cs {
		if ok, why := sandbox.Within(p, cwd, c.Sandbox, c.Cwd); !ok {
			return false, why
		}
	}
	return true, ""
}

// Reachable keeps the sessions of infos that asker may see: those whose
// policy is within its ceilings. A listing shows no other.
func Reachable(infos []api.SessionInfo, asker api.Client) []api.SessionInfo {
	if len(ceilings(asker)) == 0 {
		return infos
	}
	out := infos[:0:0]
	for _, i := range infos {
		if ok, _ := within(i.Sandbox, i.Cwd, asker); ok {
			out = append(out, i)
		}
	}
	return out
}

// outside is the refusal of a call naming a session outside the asker's
// ceilings.
func outside(name, why string) error {
	return &Error{api.ErrorReply{Code: api.CodeSandbox,
		Error: fmt.Sprintf("session %q is outside your sandbox: %s", name, why),
		Hint:  "a sandboxed caller reaches only the sessions within its own policy; use a session name of your own"}}
}

// namePolicy is the policy of the session a name has now: the live
// one's, one this daemon cannot take up yet, else the last life's (its
// death note). known is false for a name with no session and no record:
// a new session's to take.
func (m *Manager) namePolicy(name string) (sb *api.Sandbox, cwd string, known bool) {
	if s := m.get(name); s != nil {
		return s.Spawn.Sandbox, s.Spawn.Cwd, true
	}
	m.mu.Lock()
	u := m.unreach[name]
	m.mu.Unlock()
	if u != nil {
		return u.info.Sandbox, u.info.Cwd, true
	}
	if loss, _ := m.state.Loss(name); loss != nil {
		if loss.Spawn != nil {
			return loss.Spawn.Sandbox, loss.Cwd, true
		}
		return nil, loss.Cwd, true
	}
	if record.Exists(m.state.RecordDir(), name) {
		// A record whose life is unknown: its entries may hold what a
		// full session read.
		return nil, "", true
	}
	return nil, "", false
}

// checkReach refuses asker a call naming a session outside its ceilings.
func (m *Manager) checkReach(name string, asker api.Client) error {
	if len(ceilings(asker)) == 0 {
		return nil
	}
	sb, cwd, known := m.namePolicy(name)
	if !known {
		return nil
	}
	if ok, why := within(sb, cwd, asker); !ok {
		return outside(name, why)
	}
	return nil
}

// sandboxFor settles the policy of a new life started by asker with
// spawn sp: a policy not asked for is the ceiling's (at the new
// session's cwd), else full; one asked for must be within every ceiling.
// A kernel on a gateway runs on another machine: it is the gateway's to
// confine.
func sandboxFor(sp *api.Spawn, asker api.Client) error {
	if cs := ceilings(asker); sp.Sandbox == nil && len(cs) > 0 {
		c := cs[0]
		for _, o := range cs[1:] {
			// The narrowest: the one within the others.
			if ok, _ := sandbox.Within(o.Sandbox, sp.Cwd, c.Sandbox, sp.Cwd); ok {
				c = o
			}
		}
		// As the ceiling is, best effort too: a cell of a best-effort
		// session makes sessions as its own was made.
		fill := c.Sandbox
		if ok, why := within(&fill, sp.Cwd, asker); !ok {
			return &Error{api.ErrorReply{Code: api.CodeSandbox, Field: api.FieldCwd,
				Error: fmt.Sprintf("a new session under your sandbox (%s) at %s would allow more than it: %s", PolicyWords(c.Sandbox), sp.Cwd, why),
				Hint:  "a working directory inside your sandbox's writable places, or the policy read-only, works"}}
		}
		sp.Sandbox = &fill
	}
	n := policyOf(sp.Sandbox)
	if sp.Sandbox != nil {
		n.BestEffort = sp.Sandbox.BestEffort
	}
	if sp.Gateway != "" && n.Policy != api.SandboxFull {
		return badInput(api.FieldSandbox, "leave the sandbox out for a kernel on a gateway: the gateway's own confinement applies",
			"a kernel on a gateway runs on another machine, where polyrepl cannot confine it to the policy %s", PolicyWords(n))
	}
	if ok, why := within(&n, sp.Cwd, asker); !ok {
		return &Error{api.ErrorReply{Code: api.CodeSandbox, Field: api.FieldSandbox,
			Error: fmt.Sprintf("the policy %s is outside your sandbox: %s", PolicyWords(n), why),
			Hint:  "ask for a policy within your own sandbox, or leave it out to get yours"}}
	}
	sp.Sandbox = &n
	return nil
}

// refusedBy finds a runtime's own words for a refusal by the kernel: a
// denied write, read or connection. The line is kept for the note.
// Compiled at first use: every process of the binary (each CLI command)
// runs this package's initialisation, and only a daemon needs it.
var refusedBy = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(PermissionError|Permission denied|Operation not permitted|EACCES|EPERM|Access is denied|ConnectionRefusedError|Connection refused|ECONNREFUSED)`)
})

// maxRefusalLine bounds the line a sandbox note quotes.
const maxRefusalLine = 200

// sandboxNote is the note that a cell of a sandboxed session was refused
// by its sandbox, if what it printed or raised says so: the edges add
// the policy and how to widen it. Sessions without a sandbox get none.
func sandboxNote(s *Session, cell int, output string, e *api.CellError) *api.Note {
	sb := s.Spawn.Sandbox
	if sb == nil || sb.Policy == api.SandboxFull || sb.Policy == "" {
		return nil
	}
	var texts []string
	if e != nil {
		texts = append(texts, e.Type+": "+e.Message, e.Traceback)
	}
	texts = append(texts, output)
	for _, t := range texts {
		loc := refusedBy().FindStringIndex(t)
		if loc == nil {
			continue
		}
		start := strings.LastIndexByte(t[:loc[0]], '\n') + 1
		end := strings.IndexByte(t[loc[1]:], '\n')
		if end < 0 {
			end = len(t)
		} else {
			end += loc[1]
		}
		line := strings.TrimSpace(t[start:end])
		if len(line) > maxRefusalLine {
			line = api.Clip(line, maxRefusalLine, "line")
		}
		p := *sb
		return &api.Note{Kind: api.NoteSandbox, Session: s.Name, Cell: cell, Sandbox: &p, Said: line}
	}
	return nil
}

// lifeSandbox is the policy a journalled life was started with.
func lifeSandbox(l state.Life) *api.Sandbox {
	if l.Spawn == nil {
		return nil
	}
	return l.Spawn.Sandbox
}

// Placed is the session a peer belongs to, as Manager.Place found it.
type Placed struct {
	Name    string
	Sandbox api.Sandbox // Normal
	Cwd     string
	How     string // how it was told (sandbox.Peer.Place)
}

// Place finds the session peer belongs to among the live sessions and
// those this daemon cannot take up yet, or returns false.
func (m *Manager) Place(peer sandbox.Peer) (Placed, bool) {
	type cand struct {
		name string
		sb   *api.Sandbox
		cwd  string
	}
	var cands []cand
	var marks []sandbox.Mark
	for _, s := range m.sessions() {
		s.mu.Lock()
		p := s.p
		s.mu.Unlock()
		mk := sandbox.Mark{Cookie: CookieVar + "=" + s.Generation}
		if p != nil {
			mk.Leader, mk.Holder = p.Tree().Leader, p.Holder()
		}
		marks = append(marks, mk)
		cands = append(cands, cand{s.Name, s.Spawn.Sandbox, s.Spawn.Cwd})
	}
	m.mu.Lock()
	for _, u := range m.unreach {
		marks = append(marks, sandbox.Mark{Leader: u.tree.Leader, Holder: u.holder, Cookie: u.tree.Cookie})
		cands = append(cands, cand{u.info.Name, u.info.Sandbox, u.info.Cwd})
	}
	m.mu.Unlock()
	i, how := peer.Place(marks)
	if i < 0 {
		return Placed{}, false
	}
	c := cands[i]
	return Placed{Name: c.name, Sandbox: policyOf(c.sb), Cwd: c.cwd, How: how}, true
}

// Oldest is the earliest start among the runtimes and holders of the
// sessions (proc.Proc's Start), or the largest start there is when there
// are none: a peer's ancestor that started before it is no session's
// process, nor are its own ancestors (sandbox.ReadPeer's since).
func (m *Manager) Oldest() uint64 {
	oldest := ^uint64(0)
	see := func(ps ...proc.Proc) {
		for _, p := range ps {
			if p.PID > 1 && p.Start < oldest {
				oldest = p.Start
			}
		}
	}
	for _, s := range m.sessions() {
		s.mu.Lock()
		p := s.p
		s.mu.Unlock()
		if p != nil {
			see(p.Tree().Leader, p.Holder())
		}
	}
	m.mu.Lock()
	for _, u := range m.unreach {
		see(u.tree.Leader, u.holder)
	}
	m.mu.Unlock()
	return oldest
}
