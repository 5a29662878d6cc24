package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/export"
	"github.com/polyrepl/polyrepl/internal/render"
)

func init() {
	register(&command{
		name:    "export",
		args:    "NAME",
		summary: "write a session's shared record as Markdown or a Jupyter notebook",
		help: `Writes session NAME's shared record (the entries it keeps) as Markdown
(default: each entry with who, how, time and status, its code in a fenced
block of the runtime's language, its output and value) or as a Jupyter
notebook (--format ipynb: code cells with their outputs, notes as Markdown
cells). Writes to stdout, or to -o FILE, which must not exist unless
--force is given.`,
		new: func() runner { return &exportCmd{} },
	})
}

type exportCmd struct {
	format, out string
	force       bool
}

func (x *exportCmd) flags(fs *flagSet) {
	fs.String(&x.format, "format", "md|ipynb", "md", "Markdown or a Jupyter notebook")
	fs.String(&x.out, "o output", "FILE", "", "write to this file instead of standard output")
	fs.Bool(&x.force, "force", "overwrite the file if it exists")
}

func (x *exportCmd) run(e *env, pos []string) int {
	c := e.cmd
	if len(pos) != 1 {
		return e.usageError(c, "export takes one session name")
	}
	if x.format != "md" && x.format != "ipynb" {
		return e.usageError(c, "unknown format %q: use md or ipynb", x.format)
	}
	if x.out != "" && !x.force {
		if _, err := os.Lstat(x.out); err == nil {
			e.errorf("%s exists; nothing was written", x.out)
			e.hintf("choose another file, or add --force to overwrite it")
			return ExitUsage
		}
	}
	r, err := e.client.History(e.ctx, pos[0], 0)
	if err != nil {
		return e.fail(err)
	}
	var b bytes.Buffer
	if x.format == "md" {
		link := func(x api.Rich) string { return x.File }
		if x.out != "" {
			link = beside(x.out)
		}
		export.Markdown(&b, r, link)
	} else if err := export.Notebook(&b, r); err != nil {
		e.errorf("%v", err)
		return ExitFailed
	}
	if x.out == "" {
		e.stdout.Write(b.Bytes())
		return ExitOK
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if x.force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(x.out, flags, 0o600)
	if errors.Is(err, os.ErrExist) {
		e.errorf("%s exists; nothing was written", x.out)
		e.hintf("choose another file, or add --force to overwrite it")
		return ExitUsage
	}
	if err == nil {
		_, err = f.Write(b.Bytes())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		e.errorf("cannot write %s: %v", x.out, err)
		return ExitFailed
	}
	fmt.Fprintf(e.stderr, "Wrote %s of session '%s' to %s.\n", render.Plural(len(r.Entries), "entry"), pos[0], x.out)
	return ExitOK
}

// beside copies each rich output into a directory next to the Markdown
// file out (out's name without .md, plus "_files", as notebooks' HTML
// exports do) and links it relatively; a file it cannot copy is linked
// where it is.
func beside(out string) func(api.Rich) string {
	dir := strings.TrimSuffix(out, filepath.Ext(out)) + "_files"
	return func(x api.Rich) string {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return x.File
		}
		b, err := os.ReadFile(x.File)
		if err != nil {
			return x.File
		}
		name := filepath.Base(x.File)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return x.File
		}
		return filepath.Join(filepath.Base(dir), name)
	}
}
