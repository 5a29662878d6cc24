// Package r is the R runtime: the embedded worker.R run by the user's R, in
// the worker driver family. A worker rather than a driven R prompt gives
// exact output capture, real interrupts and structured values and errors.
package r

import (
	"bytes"
	_ "embed"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

//go:embed worker.R
var serve []byte

// vars.R is the worker's looks (Inspects), sourced first into the same
// environment: worker.R's last line starts the worker.
//
//go:embed vars.R
var looks []byte

// VarsSource is the R worker's looks (vars.R) as the worker sources
// them, for a runtime that evaluates them inside another program: the
// Jupyter driver runs them in IRkernel. They need from their
// surroundings an environment st, as worker.R makes it.
func VarsSource() string { return string(looks) }

// fork.R is the worker's fork (Forks), sourced after the looks.
//
//go:embed fork.R
var fork []byte

// source is the worker program, joined when a session starts
// (worker.Runtime.Source).
func source() []byte { return bytes.Join([][]byte{looks, fork, serve}, []byte{'\n'}) }

// loader is the first line R reads from its console (its standard input,
// a pipe the driver keeps): it sources the worker, whose path arrives
// after --args (last: the end marker comes in the environment), into a
// private environment, keeping the worker's own names out of the user's
// .GlobalEnv, and quits once the worker returns. Rscript passes the same
// arguments on, so $POLYREPL_R may name either.
const loader = "sys.source(.subset2(rev(commandArgs(TRUE)), 1L), envir = new.env(parent = baseenv())); quit(save = \"no\")\n"

// Runtime is R's worker runtime. It keeps the worker family's default
// interrupt: SIGINT to R raises an interrupt condition in the cell at its
// next check; a cell waiting on a subprocess (system()) is freed by the
// second attempt's SIGINT to the whole process group.
var Runtime = &worker.Runtime{
	Info: driver.Info{
		Exit:         "quit()",
		ConsoleLines: "in R's browser, c continues and Q quits it",
		Name:         "r", Family: "worker", Ext: ".R",
		Exes: []string{"R"}, EnvVar: "POLYREPL_R",
		Needs: "R 4 (Debian: r-base-core)",
		Limits: "R runs interactive (interactive() is TRUE) with its console on a pipe: readline(), menu(), " +
			"browser() and debug() ask (status input), seen by the operating system telling polyrepl that R waits on " +
			"its console (Linux); such a question takes lines, not end of file; " +
			"a cell's plots come back as 640x480 PNGs, one a page, unless a device is open; R reads .Rprofile and .Renviron but " +
			"neither restoring nor saving .RData; q() and closeAllConnections() end the " +
			"session; an interrupt ends a subprocess the cell waits on (system()) and, as " +
			"at R's prompt, the cell runs on until interrupted again (it is reported interrupted); C code that never " +
			"checks for interrupts cannot be interrupted (kill it); traceback() shows " +
			"nothing after an error, whose stack is in the error itself",
		VersionArgs: []string{"--version"},
		// fork: the worker copies itself between cells, through libc's
		// fork() and setsid() (fork.R; Linux).
		Forks: true,
	},
	Source:   source,
	FileName: "r-worker.R",
	// Interactive, so that readline(), menu() and browser() read the
	// console; without readline (given before --interactive, or R 4.2
	// takes readline anyway), so answers pass untouched — no tab
	// completion, no echo. The worker turns the prompts back on once
	// started (--no-echo keeps the start quiet).
	Args: []string{"--no-echo", "--no-restore", "--no-save", "--no-readline", "--interactive",
		// No-op, so that Rscript takes the worker's path as an argument
		// rather than as its script; R reads its console, not this.
		"-e", "invisible()", "--args"},
	Console: true,
	// Tab in attach: R's own completion on the session (worker.R).
	Completes: true,
	// polyrepl vars: the global environment's names and what a path
	// ($, [[ ]], @) names, from their structure (vars.R).
	Inspects:     true,
	ConsoleFirst: func(string) []byte { return []byte(loader) },
	ConsoleNoEOF: true,
	// The end marker is not on the command line, and results echo each
	// exec's nonce (worker.R).
	SentinelEnv: true,
	CellNonce:   true,
	RanOn:       RanOn,
}

// RanOn reports a cell that ran to its end after an interrupt ended the
// subprocess it waited on (R ignores SIGINT inside system(), and runs the
// cell on once the child ends): interrupted, as R's worker reports an
// interrupt, saying that the rest of the cell ran.
func RanOn(r driver.Result) driver.Result {
	r.Status = api.StatusInterrupted
	r.Error = &api.CellError{Type: "interrupt", Message: "interrupted",
		Traceback: "Interrupted: the interrupt ended the subprocess the cell waited on (system()), " +
			"and R ran the cell on from there to its end, as at its prompt"}
	return r
}

func init() { driver.Register(worker.Driver{R: Runtime}) }
