package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Command is the hidden subcommand a sandboxed runtime is started
// through: `polyrepl confine SPEC EXE ARGS…` confines itself by SPEC,
// then replaces itself with EXE (same pid, same start time, same process
// group and terminal), so the runtime and all it starts run confined.
const Command = "confine"

// ExitConfine is the trampoline's exit status when it could not confine
// itself or start the runtime: the runtime never ran.
const ExitConfine = 121

// Spec is what the trampoline needs to confine a runtime: the policy and
// the places it names, found by the holder.
type Spec struct {
	Policy api.Sandbox `json:"policy"` // Normal
	Cwd    string      `json:"cwd"`    // the session's: writable under workspace-write
	// Hidden are the places kept unreadable (Hidden's, with the secret
	// places a listed directory lies in: that directory opens, not its
	// parent), each also as its symlinks resolve.
	Hidden []string `json:"hidden,omitempty"`
	// Tmp is the session's private temporary directory and RuntimeDir
	// its own directory of driver files: both writable, though they lie
	// in hidden places.
	Tmp        string `json:"tmp"`
	RuntimeDir string `json:"runtime_dir"`
	// Ports are the TCP ports the runtime may listen on under network
	// off: a local Jupyter kernel's five.
	Ports []int `json:"ports,omitempty"`
}

// NewSpec is the Spec for a Normal policy p of a session in cwd, whose
// secret places are secrets (SecretPlaces'), with its private
// temporary directory tmp and driver directory runtimeDir.
func NewSpec(p api.Sandbox, cwd string, secrets []string, tmp, runtimeDir string) Spec {
	hidden := Hidden(p, secrets)
	listed := append(append([]string(nil), p.Readable...), p.Writable...)
	for _, s := range secrets {
		if slices.Contains(hidden, s) {
			continue
		}
		// Hidden opens a secret place when a directory inside it is
		// listed; only that directory opens here.
		for _, d := range listed {
			if Under(d, s) && d != s {
				hidden = append(hidden, s)
				break
			}
		}
	}
	var all []string
	for _, h := range hidden {
		all = append(all, h)
		if r, err := filepath.EvalSymlinks(h); err == nil && r != h {
			all = append(all, r)
		}
	}
	return Spec{Policy: p, Cwd: cwd, Hidden: all, Tmp: tmp, RuntimeDir: runtimeDir}
}

// Env is what a sandboxed runtime's environment (caller's) gains: its
// temporary files go to its private directory. IPython (and so
// ipykernel) will not start when it cannot make its directory in a
// home it may not write, and matplotlib warns: theirs, when they do not
// exist yet, are made in the private directory instead, for the
// session's life.
func (s Spec) Env(caller []string) []string {
	env := []string{"TMPDIR=" + s.Tmp, "TMP=" + s.Tmp, "TEMP=" + s.Tmp}
	home := getenv(caller, "HOME")
	for _, d := range []struct{ v, in, own string }{
		{"IPYTHONDIR", ".ipython", ".ipython"},
		// matplotlib starts, but warns at every import, and builds its
		// font cache again.
		{"MPLCONFIGDIR", ".config/matplotlib", "matplotlib"},
	} {
		if home == "" || getenv(caller, d.v) != "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(home, d.in)); err != nil {
			env = append(env, d.v+"="+filepath.Join(s.Tmp, d.own))
		}
	}
	return env
}

// getenv is the last value of key in env.
func getenv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// Wrap is the command line that starts argv (an absolute executable and
// its arguments) confined by s: the holder's own binary (self) as the
// trampoline.
func (s Spec) Wrap(self string, argv []string) (path string, args []string, err error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", nil, fmt.Errorf("cannot pass the sandbox on: %w", err)
	}
	return self, append([]string{"polyrepl", Command, string(b)}, argv...), nil
}

// Main runs the trampoline: the hidden `polyrepl confine SPEC EXE
// ARGS…`. It returns only on failure, with ExitConfine, having said why
// on standard error.
func Main(args []string) int {
	if len(args) < 2 {
		fmt.Fprintf(os.Stderr, "polyrepl: error: %s is started by a session's holder, with a sandbox and a command, not by hand\n", Command)
		return ExitConfine
	}
	var s Spec
	if err := json.Unmarshal([]byte(args[0]), &s); err != nil {
		fmt.Fprintf(os.Stderr, "polyrepl: error: the sandbox cannot be read: %v\n", err)
		return ExitConfine
	}
	err := confineExec(s, args[1:])
	fmt.Fprintf(os.Stderr, "polyrepl: error: sandbox: %v\n", err)
	return ExitConfine
}

// IfConfine runs this process as the trampoline when it was started as
// one: for binaries other than polyrepl's own that start runtimes (test
// binaries, the benchmark harness).
func IfConfine() {
	if len(os.Args) > 1 && os.Args[1] == Command {
		os.Exit(Main(os.Args[2:]))
	}
}

// Refused is the error a session gets when the kernel cannot enforce
// what its policy needs and the caller did not accept less.
type Refused struct {
	Policy  string
	Missing []string // what is missing, in words: "Landlock ABI 4 (tcp-connect, tcp-bind)"
}

func (e *Refused) Error() string {
	return fmt.Sprintf("the %s sandbox cannot be enforced here: this kernel lacks %s; accept less with best effort (--sandbox-best-effort), or choose the full policy",
		e.Policy, joinWords(e.Missing))
}

func joinWords(ws []string) string {
	switch len(ws) {
	case 0:
		return "nothing"
	case 1:
		return ws[0]
	}
	out := ""
	for i, w := range ws {
		switch {
		case i == 0:
		case i == len(ws)-1:
			out += " and "
		default:
			out += ", "
		}
		out += w
	}
	return out
}

// GatewayRefusal is why a gateway session cannot take a local policy.
const GatewayRefusal = "a gateway session's runtime is the gateway's to confine: give it no sandbox policy (or full)"
