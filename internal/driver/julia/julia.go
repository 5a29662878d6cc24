// Package julia is the Julia runtime: the embedded worker.jl run by the
// user's julia, in the worker driver family, evaluating cells in Main as
// Julia's REPL does. `--project DIR` activates a project as `julia
// --project` does, and Revise is loaded when it is installed.
//
// Julia cannot be installed on the machines polyrepl is tested on (it is
// not in Debian), so this runtime is tested by its profile only: how it is
// started and found, and the worker's source (vars_test.go), not a running
// julia; the tests that run one skip where there is none.
package julia

import (
	"bytes"
	_ "embed"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

//go:embed worker.jl
var serve []byte

// vars.jl is the worker's looks (Inspects): more of the body of
// worker.jl's module, put in before the line that ends it.
//
//go:embed vars.jl
var looks []byte

// source is the worker program, joined when a session starts
// (worker.Runtime.Source).
func source() []byte { return withLooks(serve, looks) }

// moduleEnd is the line that ends worker.jl's module.
const moduleEnd = "end # module"

// withLooks is worker.jl with vars.jl inside its module.
func withLooks(serve, looks []byte) []byte {
	i := bytes.LastIndex(serve, []byte(moduleEnd))
	if i < 0 {
		panic("julia: worker.jl has no " + moduleEnd)
	}
	out := append([]byte(nil), serve[:i]...)
	out = append(append(out, looks...), '\n')
	return append(out, serve[i:]...)
}

// Runtime is Julia's worker runtime. It keeps the worker family's default
// interrupt: SIGINT raises InterruptException in the cell at its next
// safepoint (the worker turns off exit-on-SIGINT).
var Runtime = &worker.Runtime{
	Info: driver.Info{
		Exit: "exit()",
		Name: "julia", Family: "worker", Ext: ".jl",
		Exes: []string{"julia"}, EnvVar: "POLYREPL_JULIA",
		Needs:  "Julia 1.9 or newer (juliaup or julialang.org; not in Debian)",
		NoFork: "Julia's scheduler and garbage collector run on threads, which a fork does not copy",
		Limits: "profile-tested only (Julia cannot be installed where polyrepl is tested): " +
			"polyrepl vars has never run on a julia; a look's show of an object that never yields " +
			"(a loop with no I/O or sleep) holds the worker until an interrupt reaches it; " +
			"a loop that never reaches a safepoint (no allocation, no I/O) cannot be " +
			"interrupted (kill it); exit() ends the session; Revise is loaded only when " +
			"installed in the active environment",
		VersionArgs: []string{"--version"},
	},
	Source:   source,
	FileName: "julia-worker.jl",
	Args:     []string{"--history-file=no"},
	Project:  func(dir string) []string { return []string{"--project=" + dir} },
	// polyrepl vars: the globals cells made in Main and what a path (a.b,
	// a[1], d["k"], d[:k]) names, from their structure (vars.jl). Never
	// run where polyrepl is tested.
	Inspects: true,
}

func init() { driver.Register(worker.Driver{R: Runtime}) }
