// Package python is the Python runtime: the embedded worker.py run by the
// user's interpreter, in the worker driver family.
package python

import (
	"bytes"
	"context"
	_ "embed"
	"syscall"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// Worker is a Python worker program: the worker protocol's Python half
// (protocol.py, then the look at a session's names and paths: vars.py,
// varpath.py; its fork: fork.py), shared with the IPython runtime,
// followed by the runtime's own part. It is joined when a session
// starts (worker.Runtime.Source), not at the binary's start.
func Worker(own []byte) []byte {
	return bytes.Join([][]byte{protocol, vars, varpath, fork, own}, nil)
}

var (
	//go:embed protocol.py
	protocol []byte
	//go:embed vars.py
	vars []byte
	//go:embed varpath.py
	varpath []byte
	//go:embed fork.py
	fork []byte
)

//go:embed worker.py
var own []byte

// VarsSource is the Python worker's look (vars.py, varpath.py) as the
// worker embeds it, for a runtime that runs it inside another program:
// the Jupyter driver installs it in ipykernel as a module. It needs from
// its surroundings what protocol.py defines for it: os, sys, serve (any
// function), high_fd, _dup2 and _libc.
func VarsSource() string { return string(vars) + string(varpath) }

// Runtime is Python's worker runtime.
var Runtime = &worker.Runtime{
	Info: driver.Info{
		Exit: "os._exit()",
		Name: "python", Family: "worker", Ext: ".py",
		Exes: []string{"python3", "python"}, EnvVar: "POLYREPL_PYTHON",
		Needs:       "Python 3.8 or newer",
		Limits:      "a cell stuck in C code that never checks for signals cannot be interrupted (kill it)",
		VersionArgs: []string{"--version"},
		ValueFormat: "Out[{n}]: {v}",
		// fork: the worker copies itself between cells (fork.py).
		Forks: true,
	},
	Source:   func() []byte { return Worker(own) },
	FileName: "python-worker.py",
	// -u: unbuffered, so prints interleave with subprocess output as written.
	Args:      []string{"-u"},
	Interrupt: Interrupt,
	// An executable not named as a Python is asked whether it is one.
	Interpreter: func(ctx context.Context, spec driver.Spec) (string, string, error) {
		return Interpreter(ctx, spec, false)
	},
	// The worker takes its end marker from the environment and echoes
	// each cell's nonce (protocol.py).
	SentinelEnv: true,
	CellNonce:   true,
	// A subprocess reading standard input asks (status input); the
	// runtime's own reads ask through the worker.
	Console: true,
	// Tab in attach: rlcompleter on the session's namespace (worker.py).
	Completes: true,
	// vars: the worker looks at the session's names and paths between
	// cells, and a cell's result carries the look at its names (vars.py).
	Inspects: true,
}

func init() { driver.Register(worker.Driver{R: Runtime}) }

// Interrupt raises KeyboardInterrupt in the running cell of a Python
// worker (also the IPython runtime's). First SIGINT to
// the worker, as a terminal's Ctrl-C would; if the cell runs on, it is
// probably waiting on a child (os.system ignores SIGINT meanwhile): SIGUSR2
// to the worker, which raises as soon as the wait returns, and SIGINT to the
// whole process group to end that child.
func Interrupt(tree proc.Tree, attempt int) error {
	switch attempt {
	case 0:
		return proc.Signal(tree.Leader, syscall.SIGINT)
	case 1:
		if err := proc.Signal(tree.Leader, syscall.SIGUSR2); err != nil {
			return err
		}
		return tree.SignalGroup(syscall.SIGINT)
	default:
		return proc.Signal(tree.Leader, syscall.SIGUSR2)
	}
}
