package sandbox

import (
	"fmt"
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Landlock ABI versions that bring each part.
const (
	abiFS          = 1 // filesystem rules; ptrace confined to the domain
	abiNet         = 4 // TCP bind and connect
	abiScope       = 6 // abstract unix sockets and signals scoped to the domain
	abiResolveUnix = 9 // connecting to a pathname unix socket
	abiUDP         = 10
)

// LandlockParts says, part by part, what Landlock of ABI abi (0: none)
// enforces of policy p (Normal, not full) — with seccomp's filter for
// the non-TCP sockets under network off when seccomp says so — and which parts the policy
// needs that it lacks, grouped by the ABI that brings them. A part no
// Landlock before abiResolveUnix or abiUDP governs is reported, never
// needed: without it no session could start on most kernels.
func LandlockParts(p api.Sandbox, abi int, seccomp bool) (api.Enforced, []string) {
	e := api.Enforced{ABI: abi}
	if abi > 0 {
		e.Mechanism = "landlock"
	}
	need := map[int][]string{}
	lacks := func(v int) string {
		if abi == 0 {
			return "this kernel has no Landlock"
		}
		return fmt.Sprintf("needs Landlock ABI %d; this kernel has ABI %d", v, abi)
	}
	part := func(name string, v int, needed bool) {
		if abi >= v {
			e.Parts = append(e.Parts, api.EnforcedPart{Part: name, Enforced: true})
			return
		}
		e.Parts = append(e.Parts, api.EnforcedPart{Part: name, Why: lacks(v)})
		if needed {
			need[v] = append(need[v], name)
		}
	}
	off := p.Network != api.NetworkOn
	part(api.PartWrite, abiFS, true)
	part(api.PartSecrets, abiFS, true)
	if off {
		part(api.PartTCPConnect, abiNet, true)
		part(api.PartTCPBind, abiNet, true)
		if seccomp && abi > 0 {
			e.Parts = append(e.Parts, api.EnforcedPart{Part: api.PartUDP, Enforced: true})
		} else {
			part(api.PartUDP, abiUDP, false)
		}
	} else {
		for _, n := range []string{api.PartTCPConnect, api.PartTCPBind, api.PartUDP} {
			e.Parts = append(e.Parts, api.EnforcedPart{Part: n, Why: "network on: the policy allows it"})
		}
	}
	part(api.PartUnixPath, abiResolveUnix, false)
	part(api.PartUnixAbs, abiScope, true)
	part(api.PartSignal, abiScope, true)
	part(api.PartPtrace, abiFS, true)
	// TODO(lead): the daemon's and holders' sockets are reached by path,
	// which Landlock governs from ABI 9 only (their directory is hidden);
	// below that, whether a sandboxed peer gets at most its own policy is
	// the daemon's peer check (internal/sandbox/peer*.go), not the
	// kernel's: mark the part enforced once that check is known to hold.
	if abi >= abiResolveUnix {
		e.Parts = append(e.Parts, api.EnforcedPart{Part: api.PartPolyrepl, Enforced: true})
	} else {
		e.Parts = append(e.Parts, api.EnforcedPart{Part: api.PartPolyrepl,
			Why: fmt.Sprintf("the kernel keeps a runtime from polyrepl's sockets from Landlock ABI %d (this kernel has %d): until then the daemon's peer check must", abiResolveUnix, abi)})
	}
	var missing []string
	for _, v := range []int{abiFS, abiNet, abiScope} {
		if len(need[v]) == 0 {
			continue
		}
		w := fmt.Sprintf("Landlock ABI %d", v)
		if v == abiFS {
			w = "Landlock"
		}
		missing = append(missing, fmt.Sprintf("%s (%s)", w, strings.Join(need[v], ", ")))
		if v == abiFS {
			break // without Landlock the rest is implied
		}
	}
	return e, missing
}

// Judge turns what the kernel enforces into the session's answer: nil
// when the policy holds or the caller accepts less (BestEffort), else a
// *Refused naming what is missing.
func Judge(p api.Sandbox, missing []string) error {
	if len(missing) == 0 || p.BestEffort {
		return nil
	}
	return &Refused{Policy: p.Policy, Missing: missing}
}
