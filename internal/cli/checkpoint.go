package cli

import (
	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/render"
)

func init() {
	register(&command{
		name:    "checkpoint",
		args:    "NAME [LABEL]",
		summary: "keep a frozen copy of session NAME's runtime, taken between cells, to roll back to",
		help: `Keeps a checkpoint of session NAME: a copy of its runtime's process,
taken between cells as a fork is, and stopped. It shares the session's
memory copy-on-write, so it costs milliseconds and only the pages the
session changes later. LABEL names it (letters, digits, '.', '_', '-');
without one it is "cN", N the cell it was taken after. A label already
used replaces that checkpoint, and the reply says so. A session keeps at
most 8: the ninth ends the oldest, and the reply says which.

'polyrepl rollback NAME [LABEL]' resumes one in the runtime's place.
'polyrepl sessions NAME' lists them with their cell, age, pid and
memory (PSS). kill, stop and restart end them all. Python, IPython, R
and Ruby sessions take checkpoints; others are refused with the reason,
as fork refuses them. A running cell is not checkpointed: wait for it
or interrupt it first.`,
		new: withJSON("print the reply as JSON", runCheckpoint),
	})
	register(&command{
		name:    "rollback",
		args:    "NAME [LABEL]",
		summary: "end session NAME's runtime and resume a checkpoint (LABEL, or the latest) in its place",
		help: `Rolls session NAME back to its checkpoint LABEL (the latest without
one): the runtime ends and a copy of the checkpoint runs in its place,
holding the names the session held then. The checkpoint stays, for
another rollback. The session keeps its name, generation and record;
the record notes the rollback and which cells it rolled back, and the
next cell is numbered on from the checkpoint's. A running cell is not
rolled back: interrupt it first.`,
		new: withJSON("print the reply as JSON", runRollback),
	})
}

func labelArgs(pos []string) (string, string, bool) {
	if len(pos) < 1 || len(pos) > 2 {
		return "", "", false
	}
	label := ""
	if len(pos) == 2 {
		label = pos[1]
	}
	return pos[0], label, true
}

func runCheckpoint(e *env, pos []string, asJSON bool) int {
	name, label, ok := labelArgs(pos)
	if !ok {
		return e.usageError(e.cmd, "checkpoint takes the session and, if you like, a label")
	}
	r, err := e.client.Checkpoint(e.ctx, name, api.CheckpointRequest{Label: label, Client: e.me()})
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

func runRollback(e *env, pos []string, asJSON bool) int {
	name, label, ok := labelArgs(pos)
	if !ok {
		return e.usageError(e.cmd, "rollback takes the session and, if you like, a checkpoint's label")
	}
	r, err := e.client.Rollback(e.ctx, name, api.CheckpointRequest{Label: label, Client: e.me()})
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
