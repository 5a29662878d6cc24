// Package node is the Node.js runtime: the embedded worker.js run by the
// user's node, in the worker driver family. A worker rather than a driven
// `node` REPL gives exact output capture, real interrupts and structured
// values and errors, while cells still behave as the REPL's do: the same
// global context, the same value display (util.inspect) and the REPL's own
// rewrite of top-level await.
package node

import (
	_ "embed"
	"syscall"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
	"github.com/polyrepl/polyrepl/internal/proc"
)

//go:embed worker.js
var serve []byte

// vars.js is the worker's looks (Inspects), appended to worker.js as one
// script: its functions run only once commands arrive.
//
//go:embed vars.js
var looks []byte

// source is the worker program, joined when a session starts
// (worker.Runtime.Source).
func source() []byte { return append(append(append([]byte(nil), serve...), '\n'), looks...) }

// Runtime is Node.js's worker runtime.
var Runtime = &worker.Runtime{
	Info: driver.Info{
		Exit: "process.exit()",
		Name: "node", Family: "worker", Ext: ".js", Lang: "javascript",
		Exes: []string{"node", "nodejs"}, EnvVar: "POLYREPL_NODE",
		Needs:  "Node.js 18 or newer (Debian: nodejs)",
		NoFork: "Node runs its event loop, its libuv pool and V8 on threads, which a fork does not copy",
		Limits: "code that runs after a cell's first await, or in a timer or callback, cannot be " +
			"interrupted mid-loop (an await itself can; kill a stuck loop); process.exit() ends the " +
			"session; import statements are refused (use await import(), which needs Node 20.12 or " +
			"newer); let/const/class names are listed only where Node has its inspector",
		VersionArgs: []string{"--version"},
	},
	Source:   source,
	FileName: "node-worker.js",
	// The worker uses the REPL's own top-level await rewrite, which lives
	// in Node's internal modules.
	Args:      []string{"--expose-internals"},
	Interrupt: interrupt,
	Hint:      hint,
	// The end marker is not on the command line, and results echo each
	// exec's nonce (worker.js).
	SentinelEnv: true,
	CellNonce:   true,
	// readline on process.stdin, and any command reading standard input,
	// asks (status input).
	Console: true,
	// Tab in attach: names, keywords and properties (worker.js).
	Completes: true,
	// polyrepl vars: the names cells defined and what a path (a.b, a[0],
	// a["k"]) names, from own-property descriptors (vars.js).
	Inspects: true,
}

// staticImport is the message V8 gives a static import in code that is
// not a module, as a cell is not.
const staticImport = "Cannot use import statement outside a module"

// hint names the trap a static import falls into, so the reply can point
// at await import(); only that SyntaxError gets it, not every error of a
// cell that mentions import.
func hint(r driver.Result) string {
	if r.Status == api.StatusError && r.Error != nil && r.Error.Type == "SyntaxError" && r.Error.Message == staticImport {
		return api.HintDynamicImport
	}
	return ""
}

func init() { driver.Register(worker.Driver{R: Runtime}) }

// interrupt stops the running cell. SIGINT to node stops synchronous code
// at once (vm's breakOnSigint) and ends a cell that awaits a promise; node
// never dies of it, so later attempts can go to the whole process group:
// a cell blocked in execSync stops only once its child has ended, and that
// child may have started after the first attempt.
func interrupt(tree proc.Tree, attempt int) error {
	if attempt == 0 {
		return proc.Signal(tree.Leader, syscall.SIGINT)
	}
	return tree.SignalGroup(syscall.SIGINT)
}
