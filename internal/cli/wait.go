package cli

import "github.com/polyrepl/polyrepl/internal/api"

func init() {
	register(&command{
		name:    "wait",
		usage:   "wait NAME [-t SECS] [--json]",
		summary: "collect a running cell's output and result",
		help: `Waits up to -t seconds (default 30, at most 600) for the running cell of
session NAME and prints what it printed since the last reply, and its
result once it has one. For a finished cell, prints what nobody has
collected yet. Exit status as for exec.`,
		run: runWait,
	})
}

func runWait(e *env, args []string) int {
	c := lookup("wait")
	fs := flags("wait")
	var timeout secondsFlag
	fs.Var(&timeout, "t", "seconds to wait")
	fs.Var(&timeout, "timeout", "seconds to wait")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	pos, code, ok := e.parseOrHelp(c, fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return e.usageError(c, "wait takes one session name")
	}
	r, err := e.client.Wait(e.ctx, pos[0], api.WaitRequest{Timeout: timeout.v, Client: e.me()})
	if err != nil {
		return e.fail(err)
	}
	return e.result(r, *asJSON)
}
