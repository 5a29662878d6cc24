// Package julia is the Julia runtime: the embedded worker.jl run by the
// user's julia, in the worker driver family, evaluating cells in Main as
// Julia's REPL does. `--project DIR` activates a project as `julia
// --project` does, and Revise is loaded when it is installed.
//
// Julia cannot be installed on the machines polyrepl is tested on (it is
// not in Debian), so this runtime is tested by its profile only: how it is
// started and found, not a running julia.
package julia

import (
	_ "embed"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

//go:embed worker.jl
var source []byte

// Runtime is Julia's worker runtime. It keeps the worker family's default
// interrupt: SIGINT raises InterruptException in the cell at its next
// safepoint (the worker turns off exit-on-SIGINT).
var Runtime = &worker.Runtime{
	Info: driver.Info{
		Exit: "exit()",
		Name: "julia", Family: "worker", Ext: ".jl",
		Exes: []string{"julia"}, EnvVar: "POLYREPL_JULIA",
		Needs: "Julia 1.9 or newer (juliaup or julialang.org; not in Debian)",
		Limits: "profile-tested only (Julia cannot be installed where polyrepl is tested); " +
			"a loop that never reaches a safepoint (no allocation, no I/O) cannot be " +
			"interrupted (kill it); exit() ends the session; Revise is loaded only when " +
			"installed in the active environment",
		VersionArgs: []string{"--version"},
	},
	Source:   source,
	FileName: "julia-worker.jl",
	Args:     []string{"--history-file=no"},
	Project:  func(dir string) []string { return []string{"--project=" + dir} },
}

func init() { driver.Register(worker.Driver{R: Runtime}) }
