package cli

import (
	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/render"
)

func init() {
	register(&command{
		name:    "fork",
		args:    "NAME NEW",
		summary: "a new session NEW whose runtime is a copy of NAME's, taken between cells",
		help: `Makes session NEW a fork of session NAME: its runtime is a copy of
NAME's process, taken between cells, holding the same names, working
directory, environment, memory limit and sandbox; from then on each
changes only its own. The copy shares NAME's memory copy-on-write, so a
fork of a session holding gigabytes takes milliseconds, and memory only
for the pages either side changes later. NEW has its own holder,
process, generation and record, whose first entry says it was forked
from NAME at which cell; its cells are numbered on from NAME's. NAME
goes on unchanged.

A fork is a fork of the process: threads other than the one running
polyrepl's worker are not copied (a BLAS pool, a data loader, a server
thread: the creation line names them), open sockets and files are
shared by both, and NAME's child processes stay NAME's. Python, IPython,
R and Ruby sessions fork; others are refused with the reason. A running
cell is not forked: wait for it or interrupt it first.`,
		new: withJSON("print the reply as JSON", runFork),
	})
}

func runFork(e *env, pos []string, asJSON bool) int {
	c := e.cmd
	if len(pos) != 2 {
		return e.usageError(c, "fork takes the session to fork and the new session's name")
	}
	r, err := e.client.Fork(e.ctx, pos[0], api.ForkRequest{New: pos[1], Client: e.me()})
	if err != nil {
		return e.fail(err)
	}
	if asJSON {
		r.Notes = render.Worded(r.Notes, render.People)
		printJSON(e.stdout, r)
	} else {
		render.Notes(e.stdout, r.Notes, render.People)
	}
	e.versionWarning()
	return ExitOK
}
