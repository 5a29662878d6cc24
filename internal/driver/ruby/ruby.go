// Package ruby is the Ruby runtime: the embedded worker.rb run by the
// user's interpreter, in the worker driver family. A worker rather than a
// driven irb gives exact output capture, real interrupts and structured
// values and errors.
package ruby

import (
	"bytes"
	_ "embed"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

//go:embed worker.rb
var serve []byte

// vars.rb is the worker's looks (Inspects): more of the body of
// worker.rb's anonymous module, put in before its last line, which
// starts the worker.
//
//go:embed vars.rb
var looks []byte

// fork.rb is the worker's fork (Forks): more of the same module's body.
//
//go:embed fork.rb
var fork []byte

// source is the worker program, joined when a session starts
// (worker.Runtime.Source).
func source() []byte { return withLooks(serve, bytes.Join([][]byte{looks, fork}, []byte{'\n'})) }

// withLooks is worker.rb with vars.rb (and fork.rb) inside its module,
// before the line that starts it.
func withLooks(serve, looks []byte) []byte {
	last := []byte("end.main(ARGV)")
	i := bytes.LastIndex(serve, last)
	if i < 0 {
		panic("ruby: worker.rb does not end with " + string(last))
	}
	out := append([]byte(nil), serve[:i]...)
	out = append(append(out, looks...), '\n')
	return append(out, serve[i:]...)
}

// Runtime is Ruby's worker runtime. It keeps the worker family's default
// interrupt: SIGINT to ruby raises Interrupt in the cell at once, except
// while the cell waits on a subprocess (system, backticks), where Ruby
// handles it only once the wait returns; the second attempt's SIGINT to the
// whole process group ends that subprocess.
var Runtime = &worker.Runtime{
	Info: driver.Info{
		Exit: "exit!",
		Name: "ruby", Family: "worker", Ext: ".rb",
		Exes: []string{"ruby"}, EnvVar: "POLYREPL_RUBY",
		Needs: "Ruby 2.7 or newer (Debian: ruby)",
		Limits: "a cell stuck in a C extension that never checks for interrupts cannot be " +
			"interrupted (kill it); exit! ends the session; values wider than a line are " +
			"laid out by pp as irb does, values longer than the value limit by inspect",
		VersionArgs: []string{"--version"},
		ValueFormat: "=> {v}", // as irb shows it
		// fork: the worker copies itself between cells (fork.rb; Linux).
		Forks: true,
	},
	Source:   source,
	FileName: "ruby-worker.rb",
	// The end marker is not on the command line, and results echo each
	// exec's nonce (worker.rb).
	SentinelEnv: true,
	CellNonce:   true,
	// A subprocess reading standard input asks (status input); the
	// runtime's own reads ask through the worker.
	Console: true,
	// Tab in attach: the binding's names, and a named object's methods (worker.rb).
	Completes: true,
	// polyrepl vars: locals, main's @ivars, the cells' globals, constants
	// and methods, and what a path (x[0], h["k"], h[:k], obj.@ivar) names,
	// from their structure (vars.rb).
	Inspects: true,
}

func init() { driver.Register(worker.Driver{R: Runtime}) }
