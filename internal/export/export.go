// Package export owns how a session's record is written for other tools
// to read: as Markdown (Markdown) and as a Jupyter notebook (Notebook).
// The record comes whole from the daemon (an api.RecordReply); the writers
// read only the rich outputs' files it names. `polyrepl export` writes to
// a terminal or a file, and the view serves the same bytes as a download.
package export

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/render"
)

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

// Markdown writes the record as Markdown, one section per entry: who
// sent each cell, how, when and how it ended, its code in a fence of the
// runtime's language, its output, value and error; link gives the path a
// rich output is linked by (the saved file, or a copy beside the
// Markdown file).
func Markdown(w io.Writer, r api.RecordReply, link func(api.Rich) string) {
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

// Notebook writes the record as a Jupyter notebook (nbformat 4.5):
// cells as code cells with their outputs, notes and idle output as
// Markdown cells, the kernelspec of the session's runtime.
func Notebook(w io.Writer, r api.RecordReply) error {
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
