// Package ipython is the IPython runtime: the embedded worker.py runs each
// cell through IPython's InteractiveShell inside the user's Python, so
// magics (%timeit, %time), !shell commands and Out[n] work as in IPython,
// while values, errors and interrupts follow polyrepl's worker protocol.
package ipython

import (
	"context"
	_ "embed"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/python"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

// The worker is the python runtime's protocol half followed by the
// IPython part (python.Worker).
//
//go:embed worker.py
var own []byte

// Runtime is IPython's worker runtime. IPython is a library imported by the
// worker, so the executable is a Python interpreter that has it installed;
// IPython's launcher (ipython3) is taken for its Python.
var Runtime = &worker.Runtime{
	Info: driver.Info{
		Exit: "os._exit()",
		Name: "ipython", Family: "worker", Ext: ".ipy", Lang: "python",
		// $POLYREPL_PYTHON too: the Python a person chose for Python
		// sessions is the one whose packages they expect in IPython.
		Exes: []string{"python3", "python"}, EnvVar: "POLYREPL_IPYTHON", AlsoEnvVar: "POLYREPL_PYTHON",
		Needs: "Python 3.8+ with IPython (Debian: ipython3), or IPython's launcher (ipython3)",
		Limits: "a cell stuck in C code that never checks for signals cannot be interrupted (kill it); " +
			"an interrupted !command ends the command but IPython runs the rest of the cell; " +
			"starting takes as long as importing IPython",
		VersionArgs: []string{"-c", "import IPython; print('IPython', IPython.__version__)"},
		ValueFormat: "Out[{n}]: {v}",
		// fork: the Python worker's (fork.py); IPython keeps no history
		// database here, so no thread or file of its own is lost.
		Forks: true,
	},
	Source:   func() []byte { return python.Worker(own) },
	FileName: "ipython-worker.py",
	// -u: unbuffered, so prints interleave with subprocess output as written.
	Args: []string{"-u"},
	// The worker handles SIGINT and SIGUSR2 as the Python worker does.
	Interrupt: python.Interrupt,
	// IPython's launcher runs its Python; anything not named as a Python
	// is asked whether it is one, with IPython.
	Interpreter: func(ctx context.Context, spec driver.Spec) (string, string, error) {
		return python.Interpreter(ctx, spec, true)
	},
	// The worker takes its end marker from the environment and echoes
	// each cell's nonce (protocol.py).
	SentinelEnv: true,
	CellNonce:   true,
	// A subprocess reading standard input asks (status input); the
	// runtime's own reads ask through the worker.
	Console: true,
	// Tab in attach: IPython's own completer on the session (worker.py).
	Completes: true,
	// vars: the Python worker's look over IPython's user_ns, IPython's
	// own names hidden (worker.py).
	Inspects: true,
}

func init() { driver.Register(worker.Driver{R: Runtime}) }
