package sandbox

import (
	"fmt"
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
)

// SeatbeltExec is macOS's program that runs a command under a Seatbelt
// profile.
const SeatbeltExec = "/usr/bin/sandbox-exec"

// SeatbeltProfile writes s as a Seatbelt (SBPL) profile for
// sandbox-exec -p. Seatbelt can deny, so unlike Landlock's rules the
// profile names the hidden places themselves. Paths must be resolved
// (/private/tmp, not /tmp): Seatbelt matches the real path. In SBPL the
// last matching rule wins, so the order below is the policy:
// everything, but no write; writes in the private temporary directory,
// the driver directory, the writable roots and the devices; no read or
// write of a hidden place, unless it is listed by name; under network
// off, no IP at all but the kernel's ports on loopback; no signal to a
// process outside the sandbox.
func SeatbeltProfile(s Spec) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n")
	b.WriteString("(deny file-write*)\n")
	var writable []string
	for _, d := range append(WritableRoots(s.Policy, s.Cwd), s.Tmp, s.RuntimeDir) {
		if d != "" {
			writable = append(writable, fmt.Sprintf("(subpath %s)", sbplString(d)))
		}
	}
	for _, g := range devices {
		if g.Dir {
			writable = append(writable, fmt.Sprintf("(subpath %s)", sbplString(g.Path)))
		} else {
			writable = append(writable, fmt.Sprintf("(literal %s)", sbplString(g.Path)))
		}
	}
	fmt.Fprintf(&b, "(allow file-write*\n  %s)\n", strings.Join(writable, "\n  "))
	if len(s.Hidden) > 0 {
		var hidden []string
		for _, h := range s.Hidden {
			hidden = append(hidden, fmt.Sprintf("(subpath %s)", sbplString(h)))
		}
		fmt.Fprintf(&b, "(deny file-read* file-write*\n  %s)\n", strings.Join(hidden, "\n  "))
		// A unix socket in a hidden place (polyrepl's own) is not
		// reached either.
		fmt.Fprintf(&b, "(deny network-outbound\n  %s)\n", strings.Join(remoteUnix(s.Hidden), "\n  "))
	}
	// Listed places inside hidden ones open, and only they; the private
	// directories lie in hidden places.
	var open []string
	for _, d := range s.Policy.Readable {
		if underAny(d, s.Hidden) {
			open = append(open, fmt.Sprintf("(allow file-read* (subpath %s))", sbplString(d)))
		}
	}
	for _, d := range append(append([]string(nil), s.Policy.Writable...), s.Tmp, s.RuntimeDir) {
		if d != "" && underAny(d, s.Hidden) {
			open = append(open, fmt.Sprintf("(allow file-read* file-write* (subpath %s))", sbplString(d)))
		}
	}
	for _, o := range open {
		b.WriteString(o + "\n")
	}
	if s.Policy.Network != api.NetworkOn {
		b.WriteString("(deny network-outbound (remote ip))\n(deny network-inbound (local ip))\n(deny network-bind (local ip))\n")
		for _, p := range s.Ports {
			fmt.Fprintf(&b, "(allow network-bind network-inbound (local ip \"localhost:%d\"))\n", p)
		}
	}
	b.WriteString("(deny signal (target others))\n")
	return b.String()
}

func remoteUnix(places []string) []string {
	var out []string
	for _, h := range places {
		out = append(out, fmt.Sprintf("(remote unix-socket (subpath %s))", sbplString(h)))
	}
	return out
}

// sbplString quotes s as an SBPL string literal.
func sbplString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// SeatbeltParts says what a Seatbelt profile of policy p enforces.
func SeatbeltParts(p api.Sandbox) api.Enforced {
	e := api.Enforced{Mechanism: "seatbelt"}
	on := func(n string) { e.Parts = append(e.Parts, api.EnforcedPart{Part: n, Enforced: true}) }
	off := func(n, why string) { e.Parts = append(e.Parts, api.EnforcedPart{Part: n, Why: why}) }
	on(api.PartWrite)
	on(api.PartSecrets)
	for _, n := range []string{api.PartTCPConnect, api.PartTCPBind, api.PartUDP} {
		if p.Network == api.NetworkOn {
			off(n, "network on: the policy allows it")
		} else {
			on(n)
		}
	}
	off(api.PartUnixPath, "Seatbelt keeps a runtime from unix sockets in hidden places only")
	off(api.PartUnixAbs, "macOS has no abstract unix sockets")
	on(api.PartSignal)
	off(api.PartPtrace, "the profile does not govern task ports: macOS itself refuses task_for_pid without the debugger entitlement")
	on(api.PartPolyrepl)
	return e
}
