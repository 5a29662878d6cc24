package holder

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/sandbox"
)

// confine prepares the sandbox of the session's runtime, when its
// policy is not full: it refuses a gateway's session, and a policy the
// kernel cannot enforce unless the caller accepted less; it makes the
// session's private places (removed when the holder ends) and has the
// driver start the runtime confined (spec.Sandbox), with the session's
// own driver directory. It returns what the kernel enforces.
func (s *server) confine(spec *driver.Spec) (*api.Enforced, error) {
	if sandbox.IsFull(s.sp.Spawn.Sandbox) {
		return nil, nil
	}
	if s.sp.Spawn.Gateway != "" {
		return nil, errors.New(sandbox.GatewayRefusal)
	}
	p, err := sandbox.Normal(s.sp.Spawn.Sandbox)
	if err != nil {
		return nil, err
	}
	enf, err := sandbox.Check(p)
	if err != nil {
		return nil, err
	}
	priv, err := sandbox.MakePrivate(s.sp.Generation, sandbox.TempParent(s.stateDir()), s.sp.RuntimeDir)
	if err != nil {
		return nil, err
	}
	s.private = priv
	ss := sandbox.NewSpec(p, s.sp.Spawn.Cwd, s.secrets(), priv.Tmp, priv.RuntimeDir)
	spec.Sandbox, spec.RuntimeDir = &ss, priv.RuntimeDir
	return &enf, nil
}

// secrets are the places a sandboxed session may not read: those that
// hold secrets in the home directory its environment names and in the
// holder's own, and polyrepl's — the state directory (records of every
// session), the socket directory (the daemon's and holders' sockets,
// every session's driver files) and the sandboxes' temporary directory.
func (s *server) secrets() []string {
	state := s.stateDir()
	if b := filepath.Dir(state); filepath.Base(b) == "polyrepl" {
		state = b // every host's
	}
	own := []string{state, filepath.Dir(s.sp.RuntimeDir), filepath.Dir(s.sp.Socket), sandbox.TempParent(s.stateDir())}
	if s.sp.Log != "" {
		own = append(own, filepath.Dir(s.sp.Log))
	}
	var homes []string
	if h := driver.Getenv(s.sp.Spawn.Env, "HOME"); h != "" {
		homes = append(homes, h)
	}
	if h, err := os.UserHomeDir(); err == nil && (len(homes) == 0 || homes[0] != h) {
		homes = append(homes, h)
	}
	seen := map[string]bool{}
	var out []string
	add := func(ps []string) {
		for _, p := range ps {
			// A place that is the root would hide everything: only a
			// test's odd directories could make one.
			if !seen[p] && p != "/" {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	add(sandbox.SecretPlaces("", own...))
	for _, h := range homes {
		add(sandbox.SecretPlaces(h))
	}
	return out
}

// stateDir is this host's state directory, where the spool directory is.
func (s *server) stateDir() string { return filepath.Dir(s.sp.SpoolDir) } // <state>/<host>/output

// unconfine removes the session's private places, once its runtime
// ended (or never started).
func (s *server) unconfine() {
	if s.private != nil {
		s.private.Remove()
		s.private = nil
	}
}
