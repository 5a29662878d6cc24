// Package sandbox owns a session's policy: what a session's runtime, and
// everything it starts, may read, write and reach; how that policy is
// compared with a ceiling (a client's, or a sandboxed caller's own), and
// how the kernel is made to enforce it (Landlock on Linux, a Seatbelt
// profile on macOS).
//
// The policy itself is data (api.Sandbox) so that it travels with the
// session's spawn through the daemon, the holder and back on adoption;
// this package gives it meaning.
package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Policies lists the policies in the order of what they allow, least first.
var Policies = []string{api.SandboxReadOnly, api.SandboxWorkspaceWrite, api.SandboxFull}

// aliases are other clients' words for the same policies.
var aliases = map[string]string{
	"danger-full-access": api.SandboxFull, // Codex's name
	"readonly":           api.SandboxReadOnly,
	"workspace":          api.SandboxWorkspaceWrite,
}

// ParsePolicy reads a policy as a person or a client names it.
func ParsePolicy(s string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	for _, p := range Policies {
		if v == p {
			return p, nil
		}
	}
	if p, ok := aliases[v]; ok {
		return p, nil
	}
	return "", fmt.Errorf("no sandbox policy %q: give one of %s", cut(s), strings.Join(Policies, ", "))
}

// ParseNetwork reads a network setting: on or off.
func ParseNetwork(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case api.NetworkOn:
		return api.NetworkOn, nil
	case api.NetworkOff:
		return api.NetworkOff, nil
	}
	return "", fmt.Errorf("no network setting %q: give on or off", cut(s))
}

// cut bounds a word from a client in an error.
func cut(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Rank orders policies by what they allow, least first; a word that is
// no policy ranks above them all.
func Rank(p string) int {
	for i, q := range Policies {
		if p == q {
			return i
		}
	}
	return len(Policies)
}

// Normal checks a policy and fills in what it leaves to defaults: the
// network (off unless full), cleaned absolute directories. nil is full.
// It refuses what means nothing: a relative directory, network off or
// extra directories with full (full is no sandbox).
func Normal(s *api.Sandbox) (api.Sandbox, error) {
	if s == nil {
		return api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}, nil
	}
	out := *s
	p, err := ParsePolicy(s.Policy)
	if err != nil {
		return out, err
	}
	out.Policy = p
	if s.Network == "" {
		out.Network = api.NetworkOff
		if p == api.SandboxFull {
			out.Network = api.NetworkOn
		}
	} else if out.Network, err = ParseNetwork(s.Network); err != nil {
		return out, err
	}
	if p == api.SandboxFull {
		if out.Network == api.NetworkOff {
			return out, fmt.Errorf("network off needs a sandbox: give the policy read-only or workspace-write with it")
		}
		if len(s.Readable)+len(s.Writable) > 0 {
			return out, fmt.Errorf("the full policy already reads and writes everywhere: readable and writable directories widen read-only or workspace-write")
		}
	}
	if out.Readable, err = cleanDirs(s.Readable, "readable"); err != nil {
		return out, err
	}
	if out.Writable, err = cleanDirs(s.Writable, "writable"); err != nil {
		return out, err
	}
	return out, nil
}

// MaxDirs bounds how many readable or writable directories one policy lists.
const MaxDirs = 64

func cleanDirs(dirs []string, what string) ([]string, error) {
	if len(dirs) > MaxDirs {
		return nil, fmt.Errorf("%d %s directories: at most %d", len(dirs), what, MaxDirs)
	}
	var out []string
	for _, d := range dirs {
		if len(d) > 4096 {
			return nil, fmt.Errorf("a %s directory of %d bytes: at most 4096", what, len(d))
		}
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("%s directory %q is not absolute: give its whole path", what, cut(d))
		}
		out = append(out, filepath.Clean(d))
	}
	return out, nil
}

// IsFull says whether a policy is no sandbox at all.
func IsFull(s *api.Sandbox) bool { return s == nil || s.Policy == api.SandboxFull || s.Policy == "" }

// WritableRoots are the directories a policy lets its runtime write
// besides its private temporary directory: the cwd under
// workspace-write, and the Writable ones.
func WritableRoots(s api.Sandbox, cwd string) []string {
	var roots []string
	if s.Policy == api.SandboxWorkspaceWrite && cwd != "" {
		roots = append(roots, filepath.Clean(cwd))
	}
	return append(roots, s.Writable...)
}

// Within says whether policy p (of a session whose cwd is pCwd) allows
// nothing that ceiling c (whose cwd is cCwd) does not, and if not, why
// in words about the policies. Both are Normal.
func Within(p api.Sandbox, pCwd string, c api.Sandbox, cCwd string) (bool, string) {
	if c.Policy == api.SandboxFull {
		return true, ""
	}
	if Rank(p.Policy) > Rank(c.Policy) {
		return false, fmt.Sprintf("%s allows more than %s", p.Policy, c.Policy)
	}
	if p.Network == api.NetworkOn && c.Network != api.NetworkOn {
		return false, fmt.Sprintf("network on, where the ceiling has network %s", c.Network)
	}
	cw := WritableRoots(c, cCwd)
	for _, d := range WritableRoots(p, pCwd) {
		if !underAny(d, cw) {
			return false, fmt.Sprintf("%s would be writable, which %s does not allow", d, c.Policy)
		}
	}
	for _, d := range p.Readable {
		if !underAny(d, append(append([]string(nil), c.Readable...), cw...)) {
			return false, fmt.Sprintf("%s would be readable, which %s does not allow", d, c.Policy)
		}
	}
	return true, ""
}

// Under says whether path is root or inside it; both are clean and absolute.
func Under(path, root string) bool {
	if root == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == root || strings.HasPrefix(path, root+"/")
}

func underAny(path string, roots []string) bool {
	for _, r := range roots {
		if Under(path, r) {
			return true
		}
	}
	return false
}

// secretsInHome are the places under a home directory that usually hold
// secrets: keys, cloud and cluster credentials, password stores and
// keyrings.
var secretsInHome = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker",
	".netrc", ".git-credentials", ".password-store", ".local/share/keyrings",
	".config/gh", ".pypirc", ".npmrc", ".config/op", ".vault-token",
}

// SecretPlaces lists the places a read-only or workspace-write session
// may not read unless its policy lists them: those under home that
// usually hold secrets, and polyrepl's own state and runtime
// directories (given as own), whose records and sockets belong to every
// session.
func SecretPlaces(home string, own ...string) []string {
	var out []string
	if home != "" && filepath.IsAbs(home) {
		for _, s := range secretsInHome {
			out = append(out, filepath.Join(home, s))
		}
	}
	for _, o := range own {
		if o != "" && filepath.IsAbs(o) {
			out = append(out, filepath.Clean(o))
		}
	}
	return out
}

// Hidden lists the secret places a policy keeps unreadable: every one
// unless the policy lists it, or a directory inside it, as readable or
// writable. A listed parent does not open it: a workspace at $HOME
// still hides ~/.ssh, so enforcing a rule on a directory that holds a
// hidden place must leave that place out.
func Hidden(s api.Sandbox, secrets []string) []string {
	if s.Policy == api.SandboxFull {
		return nil
	}
	listed := append(append([]string(nil), s.Readable...), s.Writable...)
	var out []string
	for _, p := range secrets {
		open := false
		for _, d := range listed {
			if Under(d, p) {
				open = true
			}
		}
		if !open {
			out = append(out, p)
		}
	}
	return out
}
