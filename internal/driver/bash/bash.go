// Package bash is the bash runtime: the embedded worker.bash run by the
// user's bash, in the worker driver family. The worker runs each cell in
// its own interactive shell, sourced from its top level, so variables,
// functions, aliases, cd, exports and shell options persist between cells
// as they do at a prompt, and an error, exit, set -e or interrupt ends the
// cell but not the session. worker.bash's header says how and why.
package bash

import (
	_ "embed"
	"syscall"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
	"github.com/polyrepl/polyrepl/internal/proc"
)

//go:embed worker.bash
var source []byte

// traps is the worker's first part: how a cell is stopped and how the
// session's plumbing is kept from what a cell does to it. It is written
// ahead of worker.bash, in one file.
//
//go:embed traps.bash
var traps []byte

// looks is the worker's looks (Inspects): polyrepl vars, written after
// traps.bash, ahead of worker.bash.
//
//go:embed vars.bash
var looks []byte

// program is the worker: traps.bash and vars.bash ahead of worker.bash,
// joined when a session starts (worker.Runtime.Source).
func program() []byte {
	out := append(append(append([]byte(nil), traps...), '\n'), looks...)
	return append(out, source...)
}

// Runtime is bash's worker runtime. A shell has no expression values: a
// cell reports no value, and a non-zero exit status of its last command
// makes it an error of type ExitStatus (the shell has already printed why).
var Runtime = &worker.Runtime{
	Info: driver.Info{
		Exit: "exit",
		Name: "bash", Family: "worker", Ext: ".sh",
		Exes: []string{"bash"}, EnvVar: "POLYREPL_BASH",
		Needs: "bash 4.1 or newer",
		Limits: "no values: a cell's result is its exit status; " +
			"exit and set -e end the cell, not the session (set -e stays on for later cells), but exec of a program replaces the shell and ends it; " +
			"a cell's ERR and INT traps run from polyrepl's own, DEBUG and RETURN traps are kept but do not run, TERM and signal 40 (SIGRTMIN+6) are polyrepl's; " +
			"what a cell does to the session's plumbing is put back after it and said in its note (exec >file, exec 2>file, exec <file, set +E, set -m); " +
			"an interrupt spares the background jobs of earlier cells (a job of the interrupted cell itself may die of it); " +
			"an external command that ignores SIGINT runs on until it ends (kill it); " +
			"descriptors 10 and up are bash's own, and the session's while a cell runs (closing them can end it); " +
			"a cell runs sourced, so a top-level return ends it and BASH_SOURCE, FUNCNAME and xtrace depth show the worker's frames",
		VersionArgs: []string{"--version"},
	},
	Source:   program,
	FileName: "bash-worker.bash",
	// No startup files: a session starts clean and fast, whatever ~/.bashrc
	// prints or sets. The worker re-executes itself with -i (see its top).
	Args:          []string{"--norc", "--noprofile"},
	InterruptCell: interrupt,
	// The end marker is not on the command line, and results echo each
	// exec's nonce (worker.bash).
	SentinelEnv: true,
	CellNonce:   true,
	// read, and any command reading standard input, asks (status input).
	Console: true,
	// polyrepl vars: the session's variables and functions, and an
	// array's items, through namerefs and declare -f (vars.bash).
	Inspects: true,
}

func init() { driver.Register(worker.Driver{R: Runtime}) }

// interrupt does what Ctrl-C at a terminal does: SIGINT to the process
// group, so that a foreground command dies of it and the shell's trap ends
// the cell (SIGINT to the shell alone would wait for the command to end by
// itself) — but not to the background jobs earlier cells started (before:
// the shell's children as the cell began) nor anything under them. A
// shell without job control runs its jobs in its own group, ignoring
// SIGINT, but not all of them: a job's child that has not yet set SIGINT
// aside dies of it (TestInterrupt's `sleep 30 &` did, under load), and the
// commands of a job of a function or a { …; } group do not ignore it at
// all. Bash drops a SIGINT that lands while it waits for a command that
// then exits normally (it takes it that the command handled it), which a
// loop of short commands makes common under load. So the third attempt
// sends the shell alone wakeSignal, which worker.bash traps as it traps
// SIGINT and bash never drops: the cell ends when the running command
// does, which also leaves a command that caught SIGINT twice to finish its
// own cleanup. (Sent with a SIGINT, the wake signal can outlive the cell
// it was meant for and cut the next cell's first `wait` short.)
func interrupt(tree proc.Tree, before []proc.Proc, attempt int) error {
	if attempt < 2 {
		return tree.SignalGroupSparing(syscall.SIGINT, before)
	}
	return proc.Signal(tree.Leader, wakeSignal)
}

// wakeSignal is SIGRTMIN+6 as bash (through glibc, which keeps the first
// two real-time signals) numbers it; worker.bash traps it by number.
const wakeSignal = syscall.Signal(40)
