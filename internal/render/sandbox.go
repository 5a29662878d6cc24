package render

import (
	"fmt"
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Sandbox says a session's policy and exactly what the kernel enforces
// of it, for the creation line and `sessions`: "sandbox workspace-write,
// network off (Landlock ABI 7: writes, secrets, TCP connect/bind,
// signals, ptrace; not enforced: UDP — needs Landlock ABI 10)". Never
// just "sandboxed": a reader must know what holds. "" for no sandbox
// (full), which is what a session always had and says nothing new.
func Sandbox(s *api.Sandbox, e *api.Enforced) string {
	if s == nil || s.Policy == "" || s.Policy == api.SandboxFull {
		return ""
	}
	return "sandbox " + Policy(*s) + " (" + enforced(e, s.BestEffort) + ")"
}

// Policy says a policy in a few words: "workspace-write, network off,
// also writable: /data", its directories bounded.
func Policy(s api.Sandbox) string {
	net := s.Network
	if net == "" {
		net = api.NetworkOff
		if s.Policy == api.SandboxFull {
			net = api.NetworkOn
		}
	}
	text := s.Policy + ", network " + net
	if len(s.Writable) > 0 {
		text += ", also writable: " + dirs(s.Writable)
	}
	if len(s.Readable) > 0 {
		text += ", also readable: " + dirs(s.Readable)
	}
	return text
}

// listedDirs bounds the directories a policy's words list: a policy may
// list 64 of 4,096 bytes each, and the creation line is one line.
const listedDirs = 3

func dirs(ds []string) string {
	var out []string
	for i, d := range ds {
		if i == listedDirs {
			out = append(out, fmt.Sprintf("and %d more", len(ds)-listedDirs))
			break
		}
		out = append(out, api.Clip(d, 200, "directory"))
	}
	return strings.Join(out, ", ")
}

// partWords are the parts of a sandbox as a reader calls them.
var partWords = map[string]string{
	api.PartWrite:      "writes",
	api.PartSecrets:    "secrets",
	api.PartTCPConnect: "TCP connect",
	api.PartTCPBind:    "TCP bind",
	api.PartUDP:        "UDP",
	api.PartUnixPath:   "unix sockets by path",
	api.PartUnixAbs:    "abstract unix sockets",
	api.PartSignal:     "signals",
	api.PartPtrace:     "ptrace",
	api.PartPolyrepl:   "polyrepl's sockets",
}

func partWord(p string) string {
	if w, ok := partWords[p]; ok {
		return w
	}
	return api.Clip(p, 40, "part")
}

// enforced says what the kernel enforces: by what, the parts that hold,
// and each part that does not with why.
func enforced(e *api.Enforced, bestEffort bool) string {
	if e == nil {
		// A daemon or holder that does not say: never claim a sandbox.
		return "what the kernel enforces of it was not reported"
	}
	by := "nothing is enforced by the kernel"
	switch e.Mechanism {
	case "landlock":
		by = fmt.Sprintf("Landlock ABI %d", e.ABI)
	case "seatbelt":
		by = "Seatbelt"
	case "":
	default:
		by = api.Clip(e.Mechanism, 40, "mechanism")
	}
	var held, whys []string
	lacking := map[string][]string{} // why → parts, in the order first seen
	guarded := false
	for _, p := range e.Parts {
		if p.Enforced {
			held = append(held, partWord(p.Part))
			continue
		}
		if p.Part == api.PartPolyrepl {
			// The kernel cannot keep a runtime from a socket's path
			// before Landlock ABI 9; the daemon and the holders check
			// every peer instead, so this is said as what it is.
			guarded = true
			continue
		}
		if strings.HasPrefix(p.Why, "network on") {
			continue // the policy allows it, and its words say so
		}
		why := whyNot(p.Why)
		if _, ok := lacking[why]; !ok {
			whys = append(whys, why)
		}
		lacking[why] = append(lacking[why], partWord(p.Part))
	}
	text := by
	if len(held) > 0 {
		text += ": " + strings.Join(joinTCP(held), ", ")
	} else if e.Mechanism != "" {
		text += ": no part of the policy"
	}
	if len(whys) > 0 {
		var not []string
		for _, why := range whys {
			parts := strings.Join(joinTCP(lacking[why]), ", ")
			switch {
			case why == "":
				not = append(not, parts)
			case strings.HasPrefix(why, "Landlock ABI"):
				not = append(not, parts+" — needs "+why)
			default:
				not = append(not, parts+" — "+why)
			}
		}
		text += "; not enforced: " + strings.Join(not, "; ")
		if bestEffort {
			text += " (accepted: best effort)"
		}
	}
	if guarded {
		text += "; polyrepl's sockets guarded by its peer checks instead"
	}
	return text
}

// whyNot is why a part is not enforced, in a few words: "Landlock ABI
// 10" for any reason that opens with the ABI a part needs ("needs
// Landlock ABI 10; this kernel has ABI 7": the kernel's ABI is said
// once, before), bounded.
func whyNot(why string) string {
	if rest, ok := strings.CutPrefix(strings.TrimPrefix(why, "needs "), "Landlock ABI "); ok {
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n > 0 {
			return "Landlock ABI " + rest[:n]
		}
	}
	return api.Clip(why, 200, "reason")
}

// joinTCP says "TCP connect" and "TCP bind" side by side as "TCP
// connect/bind".
func joinTCP(parts []string) []string {
	var out []string
	for i := 0; i < len(parts); i++ {
		if parts[i] == "TCP connect" && i+1 < len(parts) && parts[i+1] == "TCP bind" {
			out = append(out, "TCP connect/bind")
			i++
			continue
		}
		out = append(out, parts[i])
	}
	return out
}

// widening is one way to give a new session more than a policy allows.
type widening struct {
	field, value, does string
}

// widenings are the inputs that allow more than s, for the part of it
// that refused (one of the Part constants, or "" if not known): the
// policy above it, directories, the network.
func widenings(s api.Sandbox, part string) []widening {
	var out []widening
	write := part == "" || part == api.PartWrite
	if write && s.Policy == api.SandboxReadOnly {
		out = append(out, widening{"sandbox", api.SandboxWorkspaceWrite, "writes in its cwd"})
	}
	if write {
		out = append(out, widening{"writable", "DIR", ""})
	}
	if part == "" || part == api.PartSecrets {
		out = append(out, widening{"readable", "DIR", ""})
	}
	net := part == "" || part == api.PartTCPConnect || part == api.PartTCPBind || part == api.PartUDP
	if net && s.Network != api.NetworkOn {
		out = append(out, widening{"network", api.NetworkOn, ""})
	}
	if part == "" || len(out) == 0 {
		out = append(out, widening{"sandbox", api.SandboxFull, "no sandbox"})
	}
	return out
}

// sandboxNote words a NoteSandbox: the policy that refused what the
// cell's own error says, and how to widen it — on a new session, since a
// live session's policy cannot change — in v's terms.
func sandboxNote(n api.Note, v Voice) string {
	if n.Sandbox == nil {
		return "The session's sandbox refused this."
	}
	text := fmt.Sprintf("The session's sandbox (%s) refused this.", Policy(*n.Sandbox))
	var ways []string
	for _, w := range widenings(*n.Sandbox, n.Why) {
		g := v.Give(w.field, w.value)
		if g == "" {
			continue
		}
		if w.does != "" {
			g += " (" + w.does + ")"
		}
		ways = append(ways, g)
	}
	if len(ways) == 0 {
		return text + " " + upperFirst(v.Confined()) + "."
	}
	return fmt.Sprintf("%s A live session's policy cannot change: %s, then %s giving %s, starts one that allows more.",
		text, v.Step(api.Action{Do: api.DoKill, Session: n.Session}), v.Step(api.Action{Do: api.DoExec, Session: n.Session}), Or(ways))
}

// sandboxHint is what to do about a CodeSandbox refusal: the caller's
// sandbox (its own session's policy, or the ceiling it was started
// with) does not reach the session or the policy it asked for. The
// daemon's own hint comes first; then, for a policy asked for, the one
// that always fits in v's terms, and who can widen the sandbox.
func sandboxHint(e api.ErrorReply, v Voice) string {
	var parts []string
	asked := e.Field == "sandbox" || e.Field == "network" || e.Field == "writable" || e.Field == "readable"
	fits := v.Give("sandbox", api.SandboxReadOnly)
	switch {
	case asked && e.Hint != "" && fits != "":
		parts = append(parts, e.Hint+" ("+fits+" always fits)")
	case asked && fits != "":
		parts = append(parts, "ask for no more than your sandbox allows ("+fits+" always fits), or leave the policy out for your sandbox's own")
	case e.Hint != "":
		parts = append(parts, e.Hint)
	}
	return strings.Join(append(parts, v.Confined()), "; ")
}

// Or joins words as "a, b or c".
func Or(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
