package cli

import "github.com/polyrepl/polyrepl/internal/api"

func init() {
	register(&command{
		name:    "wait",
		args:    "NAME",
		summary: "collect a running cell's output and result",
		help: `Waits up to -t seconds (default 30, at most 600) for the running cell of
session NAME and prints what it printed since the last reply, and its
result once it has one. For a finished cell, prints what nobody has
collected yet; -t 0 looks without waiting. Exit status as for exec.`,
		new: func() runner { return &waitCmd{} },
	})
}

type waitCmd struct {
	timeout secondsFlag
	json    bool
}

func (w *waitCmd) flags(fs *flagSet) {
	fs.Var(&w.timeout, "t timeout", "SECS", "seconds to wait for the cell (default 30, at most 600; 0 looks without waiting)")
	fs.Bool(&w.json, "json", "print the result as JSON")
}

func (w *waitCmd) run(e *env, pos []string) int {
	c := e.cmd
	if len(pos) != 1 {
		return e.usageError(c, "wait takes one session name")
	}
	r, err := e.client.Wait(e.ctx, pos[0], api.WaitRequest{Timeout: w.timeout.v, Client: e.me()})
	if err != nil {
		return e.fail(err)
	}
	return e.result(r, w.json)
}
