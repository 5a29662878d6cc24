package cli

import (
	"fmt"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/render"
)

func init() {
	register(&command{
		name:    "sessions",
		args:    "[NAME]",
		summary: "list sessions: pid, runtime, uptime, idle time, cells, memory, cwd, names",
		help: `Lists every session (or just NAME): its pid, runtime and version, uptime,
idle time or running cell, cells run, memory of its whole process tree
(and the limit holding it, if one does: on macOS none can), working
directory, and the names defined in its namespace.`,
		new: withJSON("print the list as JSON", runSessions),
	})
}

func runSessions(e *env, pos []string, asJSON bool) int {
	c := e.cmd
	if len(pos) > 1 {
		return e.usageError(c, "sessions takes at most one session name")
	}
	name := ""
	if len(pos) == 1 {
		name = pos[0]
	}
	list, err := e.client.Sessions(e.ctx, name)
	if err != nil {
		return e.fail(err)
	}
	if asJSON {
		printJSON(e.stdout, api.SessionsReply{Sessions: list})
	} else {
		if len(list) == 0 {
			fmt.Fprintln(e.stdout, "No sessions. `polyrepl exec NAME CODE` creates one.")
		}
		for _, s := range list {
			render.Session(e.stdout, s, time.Now(), render.People)
		}
	}
	e.versionWarning()
	return ExitOK
}
