package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
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
		exportMarkdown(&b, r, link)
	} else if err := exportNotebook(&b, r); err != nil {
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

// mdPath is a path as a Markdown link target: spaces and parentheses
// escaped.
func mdPath(p string) string {
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29").Replace(p)
}

// language is the runtime's language name for fences and notebooks.
func language(runtime string) string {
	if d, err := driver.Lookup(runtime); err == nil {
		return d.Info().Language()
	}
	return runtime
}

// fence is a Markdown code fence longer than any run of backticks in s.
func fence(s string) string {
	n, run := 3, 0
	for _, r := range s {
		if r == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", n)
}

func block(w io.Writer, lang, text string) {
	f := fence(text)
	fmt.Fprintf(w, "%s%s\n%s\n%s\n\n", f, lang, strings.TrimSuffix(text, "\n"), f)
}

// exportMarkdown writes the record as Markdown, one section per entry.
// exportMarkdown writes the record as Markdown; link gives the path a
// rich output is linked by (a copy beside the file, or the saved file).
func exportMarkdown(w io.Writer, r api.RecordReply, link func(api.Rich) string) {
	fmt.Fprintf(w, "# Session `%s`\n\n", r.Session)
	fmt.Fprintf(w, "Exported from polyrepl's shared record on %s: %s.\n\n", time.Now().Format("2006-01-02 15:04:05 MST"), render.Plural(len(r.Entries), "entry"))
	if r.Dropped > 0 {
		fmt.Fprintf(w, "Entries 1 to %d were dropped earlier: the record keeps the last %d.\n\n", r.Dropped, api.RecordKeep)
	}
	for _, e := range r.Entries {
		at := e.Started.Local().Format("2006-01-02 15:04:05")
		switch e.Kind {
		case api.EntryCell:
			fmt.Fprintf(w, "## %s · cell %d\n\n", e.ID, e.Cell)
			fmt.Fprintf(w, "%s via %s · %s · **%s**", orSomeone(e.Who), orUnknown(e.How), at, e.Status)
			if e.Ended != nil {
				fmt.Fprintf(w, " after %s", e.Ended.Sub(e.Started).Round(time.Millisecond))
			}
			fmt.Fprint(w, "\n\n")
			block(w, language(e.Runtime), e.Code)
			if e.CodeCut != nil {
				fmt.Fprintf(w, "%s\n\n", e.CodeCut.Describe("code"))
			}
			if e.Output != "" {
				fmt.Fprint(w, "Output:\n\n")
				block(w, "text", e.Output)
			}
			if e.OutputCut != nil {
				fmt.Fprintf(w, "%s\n\n", e.OutputCut.Describe("output"))
			}
			vi := valueRich(e)
			for i, x := range e.Rich {
				if i == vi {
					continue // linked with the value, below
				}
				target := link(x)
				if strings.HasPrefix(x.MIME, "image/") {
					fmt.Fprintf(w, "![image %d](%s)\n\n", i+1, mdPath(target))
				} else {
					fmt.Fprintf(w, "[%s %d](%s)\n\n", x.MIME, i+1, mdPath(target))
				}
			}
			if e.Display != "" {
				fmt.Fprint(w, "Value:\n\n")
				block(w, "text", e.Display)
				if vi >= 0 {
					x := e.Rich[vi]
					bang := ""
					if strings.HasPrefix(x.MIME, "image/") {
						bang = "!"
					}
					fmt.Fprintf(w, "%s[the value as %s](%s)\n\n", bang, x.MIME, mdPath(link(x)))
				}
			}
			if e.Error != nil {
				fmt.Fprint(w, "Error:\n\n")
				msg, cut := render.ErrorParts(e.Error)
				block(w, "text", msg)
				if cut != nil {
					fmt.Fprintf(w, "%s\n\n", render.ErrorCut(cut))
				}
			}
			if e.Text != "" {
				fmt.Fprintf(w, "_%s_\n\n", e.Text)
			}
		case api.EntryIdle:
			fmt.Fprintf(w, "## %s · printed while no cell ran\n\n%s\n\n", e.ID, at)
			block(w, "text", e.Output)
		default:
			fmt.Fprintf(w, "## %s · note\n\n%s", e.ID, at)
			if e.Who != "" {
				fmt.Fprintf(w, " · %s via %s", e.Who, orUnknown(e.How))
			}
			fmt.Fprintf(w, "\n\n%s\n\n", render.EntryText(e))
		}
	}
}

func orSomeone(s string) string {
	if s == "" {
		return "someone"
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Notebook types: the nbformat 4.5 schema, as much of it as polyrepl fills.
type notebook struct {
	Cells         []nbCell       `json:"cells"`
	Metadata      map[string]any `json:"metadata"`
	NBFormat      int            `json:"nbformat"`
	NBFormatMinor int            `json:"nbformat_minor"`
}

type nbCell struct {
	CellType       string         `json:"cell_type"`
	ID             string         `json:"id"`
	Metadata       map[string]any `json:"metadata"`
	Source         []string       `json:"source"`
	ExecutionCount *int           `json:"execution_count,omitempty"`
	Outputs        *[]nbOutput    `json:"outputs,omitempty"` // code cells only, [] at least
}

// nbOutput is one output of a code cell: each output type has its own
// required fields and no others.
type nbOutput map[string]any

// nbLines splits text into notebook source lines, each keeping its "\n".
func nbLines(s string) []string {
	if s == "" {
		return []string{}
	}
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// tracebackLines splits a traceback as nbformat keeps one: a list of
// lines without their newlines, which the notebook's readers join with
// "\n" (unlike the lines of a source or a stream).
func tracebackLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// nbRich is a rich output as a notebook's display_data (see nbBundle).
func nbRich(x api.Rich) nbOutput {
	plain := x.Text
	if plain == "" {
		plain = render.RichLine(1, x)
	}
	data, meta := nbBundle(x, plain)
	return nbOutput{"output_type": "display_data", "data": data, "metadata": meta}
}

// nbBundle is a rich output's MIME bundle as nbformat keeps one: the
// image base64 (as nbformat keeps binary data), text as lines, and plain
// as its text/plain form beside it; a file gone is said in the text.
func nbBundle(x api.Rich, plain string) (data, meta map[string]any) {
	data = map[string]any{"text/plain": nbLines(plain)}
	meta = map[string]any{}
	if b, err := os.ReadFile(x.File); err != nil {
		data["text/plain"] = nbLines(fmt.Sprintf("%s\n(its %s form could not be read: %v)", strings.TrimRight(plain, "\n"), x.MIME, err))
	} else if strings.HasPrefix(x.MIME, "image/") && x.MIME != "image/svg+xml" {
		data[x.MIME] = base64.StdEncoding.EncodeToString(b)
		if x.Width > 0 {
			meta[x.MIME] = map[string]any{"width": x.Width, "height": x.Height}
		}
	} else {
		data[x.MIME] = nbLines(string(b))
	}
	return data, meta
}

// valueRich is which of a cell's rich outputs is its value in another
// form (a DataFrame's HTML beside its text): the last whose text/plain
// form is the value's; -1 if none is. A notebook shows the two as one
// output, as Jupyter does, and Markdown links it with the value.
func valueRich(e api.Entry) int {
	value := strings.TrimRight(strings.TrimPrefix(e.Display, e.Prompt), "\n")
	if value == "" {
		return -1
	}
	for i := len(e.Rich) - 1; i >= 0; i-- {
		if t := strings.TrimRight(e.Rich[i].Text, "\n"); t != "" && t == value {
			return i
		}
	}
	return -1
}

// exportNotebook writes the record as a Jupyter notebook: cells as code
// cells with their outputs, notes and idle output as Markdown cells.
func exportNotebook(w io.Writer, r api.RecordReply) error {
	lang, runtime := "python", ""
	for _, e := range r.Entries {
		if e.Runtime != "" {
			runtime, lang = e.Runtime, language(e.Runtime)
		}
	}
	kernel := map[string]any{"name": lang, "display_name": runtime, "language": lang}
	if name, ok := strings.CutPrefix(runtime, api.JupyterPrefix); ok {
		// A kernel session's notebook opens on the same kernel.
		kernel["name"] = name
	} else if lang == "python" {
		kernel["name"], kernel["display_name"] = "python3", "Python 3"
	}
	nb := notebook{NBFormat: 4, NBFormatMinor: 5, Cells: []nbCell{}, Metadata: map[string]any{
		"kernelspec":    kernel,
		"language_info": map[string]any{"name": lang},
		"polyrepl":      map[string]any{"session": r.Session, "runtime": runtime, "dropped": r.Dropped},
	}}
	for _, e := range r.Entries {
		meta := map[string]any{"polyrepl": map[string]any{
			"id": e.ID, "who": e.Who, "how": e.How, "status": e.Status, "started": e.Started,
			"ended": e.Ended, "runtime": e.Runtime,
		}}
		id := fmt.Sprintf("entry-%d", e.Seq)
		switch e.Kind {
		case api.EntryCell:
			n := e.Cell
			outs := []nbOutput{}
			cell := nbCell{CellType: "code", ID: id, Metadata: meta, Source: nbLines(e.Code), ExecutionCount: &n, Outputs: &outs}
			if e.Output != "" {
				text := e.Output
				if e.OutputCut != nil {
					text += "\n" + e.OutputCut.Describe("output") + "\n"
				}
				outs = append(outs, nbOutput{"output_type": "stream", "name": "stdout", "text": nbLines(text)})
			}
			vi := valueRich(e)
			for i, x := range e.Rich {
				if i != vi {
					outs = append(outs, nbRich(x))
				}
			}
			if e.Display != "" {
				// The value alone: a notebook shows its own Out[n]: prompt.
				// Its other forms (HTML, an image) are in the same bundle.
				value := strings.TrimPrefix(e.Display, e.Prompt)
				data, vmeta := map[string]any{"text/plain": nbLines(value)}, map[string]any{}
				if vi >= 0 {
					data, vmeta = nbBundle(e.Rich[vi], value)
				}
				outs = append(outs, nbOutput{"output_type": "execute_result", "execution_count": n,
					"data": data, "metadata": vmeta})
			}
			if e.Error != nil {
				msg := e.Error.Message
				tb := tracebackLines(e.Error.Traceback)
				if len(tb) == 0 {
					tb = []string{render.ErrorLine(e.Error)}
				}
				if _, cut := render.ErrorParts(e.Error); cut != nil {
					tb = append(tb, render.ErrorCut(cut))
				}
				outs = append(outs, nbOutput{"output_type": "error", "ename": orUnknown(e.Error.Type), "evalue": msg, "traceback": tb})
			}
			nb.Cells = append(nb.Cells, cell)
		case api.EntryIdle:
			var b strings.Builder
			fmt.Fprintf(&b, "**%s** · printed while no cell ran · %s\n\n", e.ID, e.Started.Local().Format("2006-01-02 15:04:05"))
			block(&b, "text", e.Output)
			nb.Cells = append(nb.Cells, nbCell{CellType: "markdown", ID: id, Metadata: meta, Source: nbLines(b.String())})
		default:
			text := fmt.Sprintf("**%s** · %s · %s", e.ID, e.Started.Local().Format("2006-01-02 15:04:05"), render.EntryText(e))
			nb.Cells = append(nb.Cells, nbCell{CellType: "markdown", ID: id, Metadata: meta, Source: nbLines(text)})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(nb)
}
