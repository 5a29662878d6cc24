package cli

import (
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/render"
)

func init() {
	register(&command{
		name:    "history",
		args:    "NAME [ID]",
		summary: "list a session's shared record, or show one entry whole",
		help: `Lists the entries of session NAME's shared record, one line each: every
cell from every client (who, how, status, code), output printed while no
cell ran, and notes (created, restarted, ended). With ID (a seq such as
12, or NAME#12; NAME#12 alone does the same) shows that entry whole:
code, output, value or error, and its figures' files. --since SEQ lists
only the entries after SEQ. The record keeps the last 300 entries of each
session, across restarts and daemon restarts.`,
		new: func() runner { return &historyCmd{} },
	})
}

type historyCmd struct {
	since int
	json  bool
}

func (h *historyCmd) flags(fs *flagSet) {
	fs.Int(&h.since, "since", "SEQ", "list the entries after this seq")
	fs.Bool(&h.json, "json", "print JSON")
}

func (h *historyCmd) run(e *env, pos []string) int {
	c := e.cmd
	if len(pos) < 1 || len(pos) > 2 {
		return e.usageError(c, "history takes a session name and, optionally, an entry id (or NAME#SEQ alone)")
	}
	if h.since < 0 {
		return e.usageError(c, "--since takes a seq, 0 or more")
	}
	name, id := entryArgs(pos)
	if id != "" {
		seq, err := api.EntrySeq(name, id)
		if err != nil {
			return e.usageError(c, "%v", err)
		}
		en, err := e.client.Entry(e.ctx, name, seq)
		if err != nil {
			return e.fail(err)
		}
		if h.json {
			printJSON(e.stdout, render.WordedEntry(en))
		} else {
			render.Entry(e.stdout, en)
		}
		return ExitOK
	}
	r, err := e.client.History(e.ctx, name, h.since)
	if err != nil {
		return e.fail(err)
	}
	if h.json {
		for i, en := range r.Entries {
			r.Entries[i] = render.WordedEntry(en)
		}
		printJSON(e.stdout, r)
	} else {
		render.History(e.stdout, r)
	}
	return ExitOK
}

// entryArgs splits history's arguments into the session name and the
// entry id, if any: "NAME ID", or "NAME#SEQ" alone, the id the listing
// prints.
func entryArgs(pos []string) (name, id string) {
	if len(pos) == 2 {
		return pos[0], pos[1]
	}
	if n, _, ok := strings.Cut(pos[0], "#"); ok {
		return n, pos[0]
	}
	return pos[0], ""
}
