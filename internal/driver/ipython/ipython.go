// Package ipython is the IPython runtime: the embedded worker.py runs each
// cell through IPython's InteractiveShell inside the user's Python, so
// magics (%timeit, %time), !shell commands and Out[n] work as in IPython,
// while values, errors and interrupts follow polyrepl's worker protocol.
package ipython

import (
	_ "embed"
	"syscall"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
	"github.com/polyrepl/polyrepl/internal/proc"
)

//go:embed worker.py
var source []byte

// Runtime is IPython's worker runtime. IPython is a library imported by the
// worker, so the executable is a Python interpreter that has it installed.
var Runtime = &worker.Runtime{
	Info: driver.Info{
		Name: "ipython", Family: "worker", Ext: ".ipy",
		Exes: []string{"python3", "python"}, EnvVar: "POLYREPL_IPYTHON",
		Needs: "Python 3.8+ with IPython (Debian: ipython3)",
		Limits: "a cell stuck in C code that never checks for signals cannot be interrupted (kill it); " +
			"an interrupted !command ends the command but IPython runs the rest of the cell; " +
			"starting takes as long as importing IPython",
		VersionArgs: []string{"-c", "import IPython; print('IPython', IPython.__version__)"},
		ValueFormat: "Out[{n}]: {v}",
	},
	Source:   source,
	FileName: "ipython-worker.py",
	// -u: unbuffered, so prints interleave with subprocess output as written.
	Args:      []string{"-u"},
	Interrupt: interrupt,
}

func init() { driver.Register(worker.Driver{R: Runtime}) }

// interrupt raises KeyboardInterrupt in the running cell. First SIGINT to
// the worker, as a terminal's Ctrl-C would; if the cell runs on, it is
// probably waiting on a child that ignores or outlives SIGINT to the worker:
// SIGUSR2 to the worker, which raises as soon as the wait returns, and
// SIGINT to the whole process group to end that child.
func interrupt(tree proc.Tree, attempt int) error {
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
