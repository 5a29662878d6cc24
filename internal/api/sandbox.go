package api

import "fmt"

// Sandbox policies, in the words agents' clients use (Codex's
// read-only, workspace-write and danger-full-access).
const (
	// SandboxReadOnly reads where allowed and writes only in the
	// session's own private temporary directory.
	SandboxReadOnly = "read-only"
	// SandboxWorkspaceWrite also writes in the session's cwd and in
	// every Writable directory.
	SandboxWorkspaceWrite = "workspace-write"
	// SandboxFull is no sandbox: everything its user may do.
	SandboxFull = "full"
)

// Network settings of a sandbox.
const (
	NetworkOff = "off" // no TCP connect or bind, except what polyrepl itself needs
	NetworkOn  = "on"
)

// Sandbox is a session's policy: what its runtime, and everything the
// runtime starts, may read, write and reach. It is part of the session,
// as its cwd is: kept across restarts and daemon restarts, and a
// different one for a live session is refused.
//
// A nil *Sandbox in a request means the caller asked for none: the
// client's default ($POLYREPL_SANDBOX, an MCP server's --sandbox), else
// full. sandbox.Normal fills the rest in.
type Sandbox struct {
	Policy string `json:"policy"` // one of the Sandbox constants
	// Network is NetworkOn or NetworkOff; "" is off for read-only and
	// workspace-write, on for full.
	Network string `json:"network,omitempty"`
	// Readable and Writable widen the policy: absolute, cleaned
	// directories. A place that usually holds secrets (~/.ssh, …) is
	// readable only when it, or a directory under it, is listed here.
	Readable []string `json:"readable,omitempty"`
	Writable []string `json:"writable,omitempty"`
	// BestEffort accepts a kernel that enforces less than the policy
	// needs; without it such a session is refused, saying what is
	// missing. What is enforced is always reported (Enforced).
	BestEffort bool `json:"best_effort,omitempty"`
}

// Parts of a sandbox the kernel may or may not enforce (EnforcedPart.Part).
const (
	PartWrite      = "write"       // writes outside the allowed places
	PartSecrets    = "secrets"     // reads of the places that hold secrets
	PartTCPConnect = "tcp-connect" // outgoing TCP connections
	PartTCPBind    = "tcp-bind"    // listening on TCP ports
	PartUDP        = "udp"         // UDP and other non-TCP sockets
	PartUnixPath   = "unix-path"   // connecting to a unix socket by its path
	PartUnixAbs    = "unix-abstract"
	PartSignal     = "signal"   // signalling processes outside the sandbox
	PartPtrace     = "ptrace"   // tracing processes outside the sandbox
	PartPolyrepl   = "polyrepl" // polyrepl's own doors: the daemon's and holders' sockets
)

// Enforced is what the kernel enforces for a session's sandbox, part by
// part: never just "sandboxed".
type Enforced struct {
	// Mechanism is how: "landlock" (with ABI), "seatbelt", or "" for none.
	Mechanism string         `json:"mechanism,omitempty"`
	ABI       int            `json:"abi,omitempty"` // Landlock's ABI version on this kernel
	Parts     []EnforcedPart `json:"parts,omitempty"`
}

// EnforcedPart is one part of a policy and whether it holds.
type EnforcedPart struct {
	Part     string `json:"part"` // one of the Part constants
	Enforced bool   `json:"enforced"`
	// Why it is not: what the kernel lacks ("Landlock ABI 4"), or that
	// the policy does not ask for it.
	Why string `json:"why,omitempty"`
}

// HeaderCeiling carries a client's sandbox ceiling (a Ceiling in JSON): the daemon lets that
// client see and act on only sessions whose policy is within it, and
// create only such sessions. A client sets it on itself (an MCP server
// started with --sandbox); a caller inside a sandboxed session gets its
// session's policy as its ceiling whatever it sends.
const HeaderCeiling = "Polyrepl-Sandbox-Ceiling"

// Ceiling is the most a client may reach: a policy and the cwd its
// workspace-write means.
type Ceiling struct {
	Sandbox Sandbox `json:"sandbox"`
	Cwd     string  `json:"cwd"`
}

// Reach is the ceilings a client is under (api.Client's Reach): a
// session is the client's to see and use only if its policy is within
// every one (sandbox.Within).
type Reach struct {
	Ceilings []Ceiling
}

// Bounds of an Enforced that enters from a holder, which may be of
// another build: at most EnforcedParts parts, each word at most
// EnforcedText characters.
const (
	EnforcedParts = 32
	EnforcedText  = 300
)

// Bounded is e held to those bounds, the cut said in the last part
// kept; nil stays nil.
func (e *Enforced) Bounded() *Enforced {
	if e == nil {
		return nil
	}
	b := *e
	b.Mechanism = Clip(b.Mechanism, EnforcedText, "mechanism")
	n := len(e.Parts)
	b.Parts = append([]EnforcedPart(nil), e.Parts[:min(n, EnforcedParts)]...)
	for i, p := range b.Parts {
		b.Parts[i].Part = Clip(p.Part, EnforcedText, "part")
		b.Parts[i].Why = Clip(p.Why, EnforcedText, "why")
	}
	if n > EnforcedParts {
		b.Parts[EnforcedParts-1].Why += fmt.Sprintf(" [… %d more parts left out]", n-EnforcedParts)
	}
	return &b
}
