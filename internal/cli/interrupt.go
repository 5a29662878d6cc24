package cli

import "github.com/polyrepl/polyrepl/internal/api"

func init() {
	register(&command{
		name:    "interrupt",
		usage:   "interrupt NAME [--json]",
		summary: "stop the running cell (as Ctrl-C would); the session stays",
		help: `Raises KeyboardInterrupt in the running cell of session NAME, also inside
time.sleep or a subprocess, and prints the cell's result. The namespace is
kept. A cell stuck in C code that never checks for signals cannot be
interrupted: kill the session instead.

Exit status: 0 the cell stopped (or nothing was running), 1 the session is
dead, 2 refused, 124 the cell is still running.`,
		run: runInterrupt,
	})
}

func runInterrupt(e *env, args []string) int {
	c := lookup("interrupt")
	fs := flags("interrupt")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	pos, code, ok := e.parseOrHelp(c, fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return e.usageError(c, "interrupt takes one session name")
	}
	r, err := e.client.Interrupt(e.ctx, pos[0], api.ControlRequest{Client: e.me()})
	if err != nil {
		return e.fail(err)
	}
	status := e.result(r, *asJSON)
	if r.Status == api.StatusRunning {
		return status
	}
	return ExitOK
}
