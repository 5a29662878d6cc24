package mcp

import (
	"fmt"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/render"
	"github.com/polyrepl/polyrepl/internal/sandbox"
)

// Confine makes sb (Normal) the server's sandbox (polyrepl mcp
// --sandbox): the policy of every session it creates and the most any
// call through it may reach. Its client carries it to the daemon as the
// ceiling of every request (workspace-write meaning the server's
// directory), so the daemon holds the line whatever a model sends; the
// server also checks a model's arguments itself, to refuse in words for
// a model. A full policy is no sandbox and changes nothing.
func (s *Server) Confine(sb api.Sandbox) {
	if sandbox.IsFull(&sb) {
		return
	}
	s.sandbox = &sb
	s.voice = modelVoice{ceiling: &sb}
	s.client.Ceiling = &api.Ceiling{Sandbox: sb, Cwd: s.cwd}
}

// execSandbox is the sandbox a model's exec asks for, for a session at
// cwd: nil when it names none (the daemon gives a new session the
// server's own policy). Network alone shapes the server's policy (or
// full, with none). What is wrong, or wider than the server allows, is
// refused naming the argument and what is allowed.
func (s *Server) execSandbox(policy, network, cwd string) (*api.Sandbox, error) {
	if policy == "" && network == "" {
		return nil, nil
	}
	sb := api.Sandbox{Policy: api.SandboxFull}
	if s.sandbox != nil {
		sb = api.Sandbox{Policy: s.sandbox.Policy, Readable: s.sandbox.Readable, Writable: s.sandbox.Writable, BestEffort: s.sandbox.BestEffort}
	}
	if policy != "" {
		p, err := sandbox.ParsePolicy(policy)
		if err != nil {
			return nil, &argError{fmt.Sprintf("the %q argument: %v", "sandbox", err), s.allowedPolicies()}
		}
		if p != sb.Policy {
			// The model's own policy: the server's directories widen
			// only the server's.
			sb = api.Sandbox{Policy: p, BestEffort: sb.BestEffort}
		}
	}
	if network != "" {
		n, err := sandbox.ParseNetwork(network)
		if err != nil {
			return nil, &argError{fmt.Sprintf("the %q argument: %v", "network", err), `give "network" as on or off, or leave it out (off in a sandbox)`}
		}
		sb.Network = n
	}
	if sb.Policy == api.SandboxFull && sb.Network == api.NetworkOff {
		none := "no sandbox policy is asked for"
		if policy != "" {
			none = "the full policy is no sandbox"
		}
		return nil, &argError{fmt.Sprintf(`the %q argument off needs a sandbox, and %s`, "network", none),
			`add "sandbox": "read-only" or "sandbox": "workspace-write", or leave "network" out`}
	}
	n, err := sandbox.Normal(&sb)
	if err != nil {
		return nil, &argError{fmt.Sprintf("the %q argument: %v", "sandbox", err), s.allowedPolicies()}
	}
	if s.sandbox == nil {
		return &n, nil
	}
	if ok, why := sandbox.Within(n, cwd, *s.sandbox, s.cwd); !ok {
		arg := "sandbox"
		switch {
		case sandbox.Rank(n.Policy) > sandbox.Rank(s.sandbox.Policy):
		case n.Network == api.NetworkOn && s.sandbox.Network != api.NetworkOn:
			arg = "network"
		default:
			arg = "cwd" // workspace-write writes its cwd, outside the server's
		}
		msg := fmt.Sprintf("the %q argument asks for more than this server's sandbox (%s) allows", arg, render.Policy(*s.sandbox))
		if arg != "network" {
			msg += ": " + why
		}
		return nil, &argError{msg, s.within(arg)}
	}
	return &n, nil
}

// allowedPolicies says which policies a model may ask for here.
func (s *Server) allowedPolicies() string {
	var ok []string
	for _, p := range sandbox.Policies {
		if s.sandbox == nil || sandbox.Rank(p) <= sandbox.Rank(s.sandbox.Policy) {
			ok = append(ok, p)
		}
	}
	return fmt.Sprintf("give %q as %s", "sandbox", render.Or(ok))
}

// within says what a model may send instead of arg, asking no more than
// the server's sandbox.
func (s *Server) within(arg string) string {
	leave := fmt.Sprintf(`or leave "sandbox" and "network" out for the server's own policy (%s); only the user can widen it, where the server is registered`, render.Policy(*s.sandbox))
	switch arg {
	case "network":
		return `give "network": "off", ` + leave
	case "cwd":
		return fmt.Sprintf(`give a "cwd" inside %s, or "sandbox": "read-only", %s`, s.cwd, leave)
	}
	return s.allowedPolicies() + ", " + leave
}
