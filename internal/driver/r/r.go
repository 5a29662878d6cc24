// Package r is the R runtime: the embedded worker.R run by the user's R, in
// the worker driver family. A worker rather than a driven R prompt gives
// exact output capture, real interrupts and structured values and errors.
package r

import (
	_ "embed"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

//go:embed worker.R
var source []byte

// loader is the one R expression given with -e: R takes its script file
// only before --args, where the worker protocol cannot put it, so the
// worker's path arrives after --args (last: the end marker comes in the
// environment) and
// this sources it into a private environment, keeping the worker's own
// names out of the user's .GlobalEnv. Rscript passes the same arguments on,
// so $POLYREPL_R may name either.
const loader = "sys.source(.subset2(rev(commandArgs(TRUE)), 1L), envir = new.env(parent = baseenv()))"

// Runtime is R's worker runtime. It keeps the worker family's default
// interrupt: SIGINT to R raises an interrupt condition in the cell at its
// next check; a cell waiting on a subprocess (system()) is freed by the
// second attempt's SIGINT to the whole process group.
var Runtime = &worker.Runtime{
	Info: driver.Info{
		Exit: "quit()",
		Name: "r", Family: "worker", Ext: ".R",
		Exes: []string{"R"}, EnvVar: "POLYREPL_R",
		Needs: "R 4 (Debian: r-base-core)",
		Limits: "R runs as Rscript does: non-interactive (interactive() is FALSE, so " +
			"readline() and menu() return at once, and browser() does not stop; a cell's plots " +
			"come back as 640x480 PNGs, one a page, unless a device is open), reading .Rprofile and .Renviron but " +
			"neither restoring nor saving .RData; q() and closeAllConnections() end the " +
			"session; an interrupt ends a subprocess the cell waits on (system()) and, as " +
			"at R's prompt, the cell runs on until interrupted again; C code that never " +
			"checks for interrupts cannot be interrupted (kill it); traceback() shows " +
			"nothing after an error, whose stack is in the error itself",
		VersionArgs: []string{"--version"},
	},
	Source:   source,
	FileName: "r-worker.R",
	Args:     []string{"--no-echo", "--no-restore", "--no-save", "-e", loader, "--args"},
	// The end marker is not on the command line, and results echo each
	// exec's nonce (worker.R).
	SentinelEnv: true,
	CellNonce:   true,
}

func init() { driver.Register(worker.Driver{R: Runtime}) }
