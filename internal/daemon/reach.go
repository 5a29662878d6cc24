package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/sandbox"
	"github.com/polyrepl/polyrepl/internal/session"
)

// What a caller may reach: the ceilings of each request (api.Client's
// Reach), from the ceiling the client declares (api.HeaderCeiling) and,
// whatever it declares, from the session its process belongs to. A cell
// of a sandboxed session can connect to the daemon's socket (Landlock
// does not govern connecting to a unix socket by its path): the daemon
// tells it by its process (sandbox.Peer) and gives it at most its
// session's policy.

// maxCeilingHeader bounds a declared ceiling, in bytes: a policy lists
// at most sandbox.MaxDirs directories of each kind.
const maxCeilingHeader = 64 << 10

// peerKey keys a connection's peer (*peerFacts) in its context.
type peerKey struct{}

// peerFacts is what was read of a connection's peer when it connected.
type peerFacts struct {
	peer sandbox.Peer
	err  error
}

// reachKey keys a request's ceilings in its context.
type reachKey struct{}

// selfNoNewPrivs is the daemon's own no_new_privs: a peer that has it
// while the daemon does not was confined by something since.
var selfNoNewPrivs = sync.OnceValue(sandbox.SelfNoNewPrivs)

// cannotTell is logged once: this system cannot place peers.
var cannotTell sync.Once

// connContext reads the peer of a new connection from the kernel and
// /proc, once: the pid the kernel recorded at connect names that process
// only while it runs, so it is read now, before it could be reused. Its
// ancestors are read back to the first older than every session
// (Manager.Oldest): a person's shell costs one read.
func (d *Daemon) connContext(ctx context.Context, c net.Conn) context.Context {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return ctx
	}
	f := &peerFacts{}
	_, pid, err := paths.Peer(uc)
	if err == nil {
		f.peer, err = sandbox.ReadPeer(pid, session.CookieVar, d.sessions.Oldest())
	}
	f.err = err
	return context.WithValue(ctx, peerKey{}, f)
}

// withReach finds each request's ceilings and refuses a request whose
// declared ceiling is malformed.
func (d *Daemon) withReach(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reach, err := d.reach(r)
		if err != nil {
			fail(w, err)
			return
		}
		if len(reach) > 0 {
			r = r.WithContext(context.WithValue(r.Context(), reachKey{}, &api.Reach{Ceilings: reach}))
		}
		h.ServeHTTP(w, r)
	})
}

// reachOf is the ceilings of request r (nil: none).
func reachOf(r *http.Request) *api.Reach {
	c, _ := r.Context().Value(reachKey{}).(*api.Reach)
	return c
}

// asker is a request's client as far as its ceilings go, for calls
// whose body names no client.
func asker(r *http.Request) api.Client { return api.Client{Reach: reachOf(r)} }

// reach is the ceilings of request r: the one its client declares, and
// its peer's.
func (d *Daemon) reach(r *http.Request) ([]api.Ceiling, error) {
	var out []api.Ceiling
	if h := r.Header.Get(api.HeaderCeiling); h != "" {
		c, err := declaredCeiling(h)
		if err != nil {
			return nil, err
		}
		if c != nil {
			out = append(out, *c)
		}
	}
	if c := d.peerCeiling(r); c != nil {
		out = append(out, *c)
	}
	return out, nil
}

// declaredCeiling reads a client's declared ceiling; a full one is none.
func declaredCeiling(h string) (*api.Ceiling, error) {
	bad := func(format string, a ...any) error {
		return &session.Error{ErrorReply: api.ErrorReply{Code: api.CodeBadRequest, Field: api.FieldCeiling,
			Error: "the sandbox ceiling the client declared: " + fmt.Sprintf(format, a...),
			Hint:  "send it as one JSON object: a sandbox policy and the absolute directory its workspace is"}}
	}
	if len(h) > maxCeilingHeader {
		return nil, bad("%d bytes, over the %d a ceiling takes", len(h), maxCeilingHeader)
	}
	var c api.Ceiling
	dec := json.NewDecoder(strings.NewReader(h))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, bad("malformed: %v", err)
	}
	if dec.More() {
		return nil, bad("malformed: data after the JSON object")
	}
	sb, err := sandbox.Normal(&c.Sandbox)
	if err != nil {
		return nil, bad("%v", err)
	}
	if sb.Policy == api.SandboxFull {
		return nil, nil
	}
	if c.Cwd == "" || !filepath.IsAbs(c.Cwd) {
		return nil, bad("its directory %q is not absolute", api.Clip(c.Cwd, 200, "directory"))
	}
	c.Sandbox, c.Cwd = sb, filepath.Clean(c.Cwd)
	return &c, nil
}

// peerCeiling is the ceiling of the process that connected: the policy
// of the sandboxed session it belongs to; read-only if it runs with
// no_new_privs (which the daemon has not) and belongs to no sandboxed
// session, or if it cannot be read; none otherwise.
func (d *Daemon) peerCeiling(r *http.Request) *api.Ceiling {
	f, _ := r.Context().Value(peerKey{}).(*peerFacts)
	if f == nil {
		return nil
	}
	if f.err == sandbox.ErrCannotTell {
		cannotTell.Do(func() { log.Printf("%v: callers inside sandboxed sessions are held by their sandbox alone", f.err) })
		return nil
	}
	if f.err != nil {
		// It went before it could be read: what it was cannot be told,
		// so it is given what the least of them gets.
		log.Printf("a caller (pid %d) gets read-only: %v", f.peer.PID, f.err)
		c := sandbox.Confined("/")
		return &c
	}
	p, placed := d.sessions.Place(f.peer)
	if placed && p.Sandbox.Policy != api.SandboxFull {
		return &api.Ceiling{Sandbox: p.Sandbox, Cwd: p.Cwd}
	}
	if f.peer.NoNewPrivs && !selfNoNewPrivs() {
		cwd := f.peer.Cwd
		if cwd == "" {
			cwd = "/"
		}
		c := sandbox.Confined(cwd)
		return &c
	}
	return nil
}

// outsideStop refuses to stop the daemon for a caller under a ceiling:
// stopping it ends every session, those outside its sandbox too.
func outsideStop() error {
	return &session.Error{ErrorReply: api.ErrorReply{Code: api.CodeSandbox,
		Error: "stopping the daemon is outside your sandbox: it ends every session, not only those within your policy",
		Hint:  "end your own sessions one by one instead"}}
}
