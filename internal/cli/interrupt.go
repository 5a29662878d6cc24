package cli

import "github.com/polyrepl/polyrepl/internal/api"

func init() {
	register(&command{
		name:    "interrupt",
		args:    "NAME",
		summary: "stop the running cell (as Ctrl-C would); the session stays",
		help: `Stops the running cell of session NAME as Ctrl-C would — in Python a
KeyboardInterrupt, also inside time.sleep or a subprocess; in other
runtimes their own interrupt (polyrepl runtimes lists each one's limits)
— and prints the cell's result. The namespace is kept. A stopped runtime
(SIGSTOP) is woken first. A cell stuck in code that never checks for
signals cannot be interrupted: kill the session instead.

Exit status: 0 the cell stopped (or nothing was running), 1 the session is
dead or died meanwhile, 2 refused (no session of that name), 3 the cell
asks for input, 124 the cell is still running.`,
		new: withJSON("print the result as JSON", runInterrupt),
	})
}

func runInterrupt(e *env, pos []string, asJSON bool) int {
	c := e.cmd
	if len(pos) != 1 {
		return e.usageError(c, "interrupt takes one session name")
	}
	r, err := e.client.Interrupt(e.ctx, pos[0], api.ControlRequest{Client: e.me()})
	if err != nil {
		return e.fail(err)
	}
	status := e.result(r, asJSON)
	switch r.Status {
	case api.StatusRunning, api.StatusDead, api.StatusInput:
		// Still running, the session died of the interrupt (or as it
		// came), or the cell asks for input: as exec says each.
		return status
	}
	return ExitOK
}
