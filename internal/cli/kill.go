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
		args:    "NAME",
		summary: "end a session and its whole process tree",
		help: `Ends session NAME: SIGTERM to its whole process tree (children, and
grandchildren that left its process group), then SIGKILL to whatever is
left after a second, and checks that nothing survived. The namespace is
lost; the next exec under NAME says so and starts a fresh session as this
one was started (its runtime, interpreter, directory and limits) unless it
names another runtime. A session that had died already is not killed
again: kill says when and how it died, and exits 1.`,
		new: withJSON("print the reply as JSON", runKill),
	})
	register(&command{
		name:    "restart",
		args:    "NAME",
		summary: "replace a session's process with a fresh one (the namespace is gone)",
		help: `Hard reset of session NAME: its process tree is ended as by kill, and a
fresh process starts with the same interpreter, working directory and
environment. Every name it held is gone.`,
		new: withJSON("print the reply as JSON", runRestart),
	})
}

func runKill(e *env, pos []string, asJSON bool) int {
	return control(e, pos, asJSON, e.client.Kill, func(r api.KillReply) string { return render.Killed(r.Info) })
}

func runRestart(e *env, pos []string, asJSON bool) int {
	return control(e, pos, asJSON, e.client.Restart, func(api.KillReply) string { return "" })
}

// control runs kill or restart, which share their shape.
func control(e *env, pos []string, asJSON bool,
	call func(ctx context.Context, name string, req api.ControlRequest) (api.KillReply, error),
	describe func(api.KillReply) string) int {
	c := e.cmd
	if len(pos) != 1 {
		return e.usageError(c, "%s takes one session name", c.name)
	}
	r, err := call(e.ctx, pos[0], api.ControlRequest{Client: e.me()})
	if err != nil {
		return e.fail(err)
	}
	if asJSON {
		r.Notes = render.Worded(r.Notes, render.People)
		printJSON(e.stdout, r)
	} else {
		if text := describe(r); text != "" {
			fmt.Fprintln(e.stdout, text)
		}
		render.Notes(e.stdout, r.Notes, render.People)
	}
	e.versionWarning()
	return ExitOK
}
