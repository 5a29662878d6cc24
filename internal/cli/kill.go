package cli

import (
	"context"
	"fmt"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/render"
)

func init() {
	register(&command{
		name:    "kill",
		usage:   "kill NAME [--json]",
		summary: "end a session and its whole process tree",
		help: `Ends session NAME: SIGTERM to its whole process tree (children, and
grandchildren that left its process group), then SIGKILL to whatever is
left after a second, and checks that nothing survived. The namespace is
lost; the next exec under NAME says so and starts a fresh session.`,
		run: runKill,
	})
	register(&command{
		name:    "restart",
		usage:   "restart NAME [--json]",
		summary: "replace a session's process with a fresh one (the namespace is gone)",
		help: `Hard reset of session NAME: its process tree is ended as by kill, and a
fresh process starts with the same interpreter, working directory and
environment. Every name it held is gone.`,
		run: runRestart,
	})
}

func runKill(e *env, args []string) int {
	return control(e, "kill", args, e.client.Kill, func(r api.KillReply) string { return render.Killed(r.Session) })
}

func runRestart(e *env, args []string) int {
	return control(e, "restart", args, e.client.Restart, func(api.KillReply) string { return "" })
}

// control runs kill or restart, which share their shape.
func control(e *env, name string, args []string,
	call func(ctx context.Context, name string, req api.ControlRequest) (api.KillReply, error),
	describe func(api.KillReply) string) int {
	c := lookup(name)
	fs := flags(name)
	asJSON := fs.Bool("json", false, "print the reply as JSON")
	pos, code, ok := e.parseOrHelp(c, fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return e.usageError(c, "%s takes one session name", name)
	}
	r, err := call(e.ctx, pos[0], api.ControlRequest{Client: e.me()})
	if err != nil {
		return e.fail(err)
	}
	if *asJSON {
		printJSON(e.stdout, r)
	} else {
		if text := describe(r); text != "" {
			fmt.Fprintln(e.stdout, text)
		}
		for _, n := range r.Notes {
			fmt.Fprint(e.stdout, render.Bracket(n.Text))
		}
	}
	e.versionWarning()
	return ExitOK
}
