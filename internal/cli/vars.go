package cli

import (
	"fmt"

	"github.com/polyrepl/polyrepl/internal/render"
)

func init() {
	register(&command{
		name:    "vars",
		args:    "NAME [PATH]",
		summary: "what a session holds — names, types, sizes, previews — without running a cell",
		help: `Lists session NAME's own names, one line each: name, type, size (a
frame's or an array's shape, a collection's length, a string's
characters), memory where the runtime knows it cheaply, and a short
preview. With PATH — df, df.columns, cfg["db"], model.layers[0], R's
fit$coefficients, in the runtime's own syntax — lists the members,
items, columns or fields of what it names instead. --all also lists
imports and the runtime's built-ins. At most 100 lines; the rest are
counted.

A look runs no cell: it is not in the record, prints nothing into the
session's output, changes nothing in its namespace, and other clients are
not told of it. Known types are described from their structure; anything
else gets its type and size, and a preview only through a short,
time-limited call whose failure is said. While a cell runs, the names are
answered from the look taken when the previous cell ended, and it says so.

Exit status: 0 looked, 1 the runtime cannot look (or not now, with the
reason), 2 refused (no session of that name, a path naming nothing).`,
		new: func() runner { return &varsCmd{} },
	})
}

type varsCmd struct {
	all, json bool
}

func (v *varsCmd) flags(fs *flagSet) {
	fs.Bool(&v.all, "all", "also list imports and the runtime's built-ins")
	fs.Bool(&v.json, "json", "print the look as JSON")
}

func (v *varsCmd) run(e *env, pos []string) int {
	c := e.cmd
	if len(pos) < 1 || len(pos) > 2 {
		return e.usageError(c, "vars takes a session name and, to look inside one thing, its path")
	}
	path := ""
	if len(pos) == 2 {
		path = pos[1]
	}
	r, err := e.client.Vars(e.ctx, pos[0], path, v.all)
	if err != nil {
		return e.fail(err)
	}
	if v.json {
		printJSON(e.stdout, r)
		return ExitOK
	}
	fmt.Fprint(e.stdout, render.Vars(r, render.People))
	return ExitOK
}
