package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
	"github.com/polyrepl/polyrepl/internal/sandbox"
)

// SandboxEnv names the environment variable whose policy is the CLI's
// default for the sessions it creates (and an MCP server's default and
// ceiling).
const SandboxEnv = "POLYREPL_SANDBOX"

// sandboxFlags are the flags that give a new session's sandbox: exec's,
// and the MCP server's default and ceiling.
type sandboxFlags struct {
	policy     policyValue
	network    networkValue
	readable   dirsValue
	writable   dirsValue
	bestEffort bool
	// fromEnv is set by build when the policy is $POLYREPL_SANDBOX's.
	fromEnv string
}

// declare adds the flags to fs: whose says whose policy it is ("a new
// session"), its how the other flags name it ("a new session's sandbox").
func (f *sandboxFlags) declare(fs *flagSet, whose, its string) {
	fs.Var(&f.policy, "sandbox", "POLICY", "sandbox of "+whose+": read-only, workspace-write or full (default $"+SandboxEnv+", else full)")
	fs.Var(&f.network, "network", "on|off", "network of "+its+" (default off, on for full)")
	fs.Var(&f.readable, "readable", "DIR", "also let "+its+" read DIR, even where secrets usually are (repeatable)")
	fs.Var(&f.writable, "writable", "DIR", "also let "+its+" write DIR (repeatable)")
	fs.Bool(&f.bestEffort, "sandbox-best-effort", "accept a kernel that enforces less of the sandbox than it needs (what holds is said)")
}

// flagged says whether a flag beside the policy was given (--network,
// --readable, --writable, --sandbox-best-effort): with one, a policy
// from $POLYREPL_SANDBOX is asked of this call, not only a default.
func (f *sandboxFlags) flagged() bool {
	return f.network != "" || len(f.readable) > 0 || len(f.writable) > 0 || f.bestEffort
}

// build is the sandbox the flags ask for, the policy taken from
// getenv(SandboxEnv) when --sandbox is not given; nil when neither
// names one (the daemon's default: full, or a ceiling's policy).
// Directories are made absolute from base and must exist. A bad value
// is an error worded by the flag it came from; nothing is sent.
func (f *sandboxFlags) build(getenv func(string) string, base string) (*api.Sandbox, error) {
	policy, from := string(f.policy), "--sandbox"
	if policy == "" {
		if env := strings.TrimSpace(getenv(SandboxEnv)); env != "" {
			p, err := sandbox.ParsePolicy(env)
			if err != nil {
				return nil, fmt.Errorf("$%s: %v", SandboxEnv, err)
			}
			policy, from, f.fromEnv = p, "$"+SandboxEnv, p
		}
	}
	if policy == "" {
		var given []string
		for _, g := range []struct {
			set  bool
			flag string
		}{{f.network != "", "--network"}, {len(f.readable) > 0, "--readable"}, {len(f.writable) > 0, "--writable"}, {f.bestEffort, "--sandbox-best-effort"}} {
			if g.set {
				given = append(given, g.flag)
			}
		}
		if len(given) == 0 {
			return nil, nil
		}
		them := "it"
		if len(given) > 1 {
			them = "them"
		}
		return nil, fmt.Errorf("%s without a sandbox policy: give --sandbox read-only or --sandbox workspace-write with %s (or set $%s)",
			strings.Join(given, " and "), them, SandboxEnv)
	}
	s := api.Sandbox{Policy: policy, Network: string(f.network), BestEffort: f.bestEffort}
	var err error
	if s.Readable, err = existingDirs(base, "--readable", f.readable); err != nil {
		return nil, err
	}
	if s.Writable, err = existingDirs(base, "--writable", f.writable); err != nil {
		return nil, err
	}
	n, err := sandbox.Normal(&s)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", from, policy, err)
	}
	return &n, nil
}

// explain adds to a refusal of the policy asked for that it was
// $POLYREPL_SANDBOX's, which a person may not have in mind, and how to
// leave it out: set for a shell, it is asked of every exec, a live
// session's of another policy included.
func (f *sandboxFlags) explain(err error) error {
	var ae *client.APIError
	if f.fromEnv == "" || !errors.As(err, &ae) || (ae.Field != "sandbox" && ae.Code != api.CodeSandbox) {
		return err
	}
	c := *ae
	said := fmt.Sprintf("the policy %s came from $%s; an empty $%s leaves it out (`%s= polyrepl exec …`)", f.fromEnv, SandboxEnv, SandboxEnv, SandboxEnv)
	if c.Hint != "" {
		said += "; " + c.Hint
	}
	c.Hint = said
	return &c
}

// existingDirs makes each directory absolute from base and checks that
// it is one.
func existingDirs(base, flag string, dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			if base == "" {
				return nil, fmt.Errorf("%s %s is relative, and the current directory cannot be found: give an absolute path", flag, d)
			}
			d = filepath.Join(base, d)
		}
		d = filepath.Clean(d)
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%s %s: no such directory; give an existing one", flag, d)
		}
		out = append(out, d)
	}
	return out, nil
}

// policyValue is --sandbox: a policy, checked when given.
type policyValue string

func (p *policyValue) Set(v string) error {
	s, err := sandbox.ParsePolicy(v)
	if err != nil {
		return err
	}
	*p = policyValue(s)
	return nil
}
func (p *policyValue) String() string { return string(*p) }

// networkValue is --network: on or off, checked when given.
type networkValue string

func (n *networkValue) Set(v string) error {
	s, err := sandbox.ParseNetwork(v)
	if err != nil {
		return err
	}
	*n = networkValue(s)
	return nil
}
func (n *networkValue) String() string { return string(*n) }

// dirsValue is a repeatable directory flag.
type dirsValue []string

func (d *dirsValue) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("an empty directory")
	}
	if len(*d) >= sandbox.MaxDirs {
		return fmt.Errorf("at most %d directories", sandbox.MaxDirs)
	}
	*d = append(*d, v)
	return nil
}
func (d *dirsValue) String() string { return strings.Join(*d, ",") }
