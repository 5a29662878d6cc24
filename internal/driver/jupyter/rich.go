package jupyter

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// richForms are the forms of a MIME bundle polyrepl keeps as files, the
// richest first, with each one's extension and whether the bundle
// carries it base64-encoded. Text forms (HTML, Markdown, LaTeX) are kept
// only when the bundle has no text/plain: a kernel such as IRkernel
// gives every value all of them, and the plain form says the same.
var richForms = []struct {
	mime, ext string
	binary    bool
	text      bool
}{
	{"image/png", ".png", true, false},
	{"image/jpeg", ".jpg", true, false},
	{"image/svg+xml", ".svg", false, false},
	{"text/html", ".html", false, true},
	{"text/markdown", ".md", false, true},
	{"text/latex", ".tex", false, true},
}

// shown takes a MIME bundle the kernel displayed: a cell's value
// (execute_result, its text/plain form), or a display (display_data),
// whose richest form is saved as the cell's rich output, or printed if
// it has only text.
func (k *kernel) shown(c *cellState, result bool, data map[string]json.RawMessage) {
	text := str(data["text/plain"])
	if result {
		c.value = strings.TrimSuffix(text, "\n")
	}
	for _, f := range richForms {
		raw, ok := data[f.mime]
		if !ok || (f.text && text != "") {
			continue
		}
		if c == nil {
			break // a display between cells: nowhere to keep it
		}
		if len(c.rich) >= richLimit {
			c.richMore++
			return
		}
		var body []byte
		if f.binary {
			b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(str(raw)))
			if err != nil {
				c.notes = append(c.notes, fmt.Sprintf("the kernel sent a %s that is not base64 (%v): it was not kept", f.mime, err))
				return
			}
			body = b
		} else {
			body = []byte(str(raw))
		}
		file, why := k.save("rich", f.ext, body)
		if file == "" {
			c.notes = append(c.notes, fmt.Sprintf("a %s the cell showed could not be kept: %s", f.mime, why))
			return
		}
		x := api.Rich{MIME: f.mime, File: file, Bytes: int64(len(body)), Text: cutText(text, 200)}
		if f.mime == "image/png" {
			x.Width, x.Height = driver.PNGSize(file)
		}
		c.rich = append(c.rich, x)
		return
	}
	if !result && text != "" {
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		k.h.Output([]byte(text))
	}
}

// str reads a JSON string, or a list of strings (the notebook format's
// way of splitting text in lines), as one string.
func str(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var lines []string
	if json.Unmarshal(raw, &lines) == nil {
		return strings.Join(lines, "")
	}
	return string(raw)
}

// cutText keeps the first n characters of s.
func cutText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// askQuiet is how long iopub must be quiet before a cell's question is
// passed on: ipykernel flushes the cell's output before it asks, but on
// another channel. A gateway relays each channel on its own, so there
// the output can come later still (seen under load: 30 ms was not
// enough); askQuietGateway is its wait.
const (
	askQuiet        = 30 * time.Millisecond
	askQuietGateway = 250 * time.Millisecond
)

// askC fires when a question waiting for iopub's quiet may go.
func (k *kernel) askC() <-chan time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.askTimer == nil {
		return nil
	}
	return k.askTimer.C
}

// ask passes the waiting question on.
func (k *kernel) ask() {
	k.mu.Lock()
	q := k.asking
	k.asking, k.askTimer = nil, nil
	k.mu.Unlock()
	if a, ok := k.h.(driver.Asker); ok && q != nil {
		a.InputAsked(*q)
	}
}

// answerInput takes a kernel's request for input: passed on to whoever
// holds the session (a driver.Asker), whose Answer replies; or, with no
// one to ask, answered at once with end of file (ipykernel raises
// EOFError on "\x04") or, from kernels with no such convention, an empty
// line, and the cell's result says so.
func (k *kernel) answerInput(m *Msg, c *cellState) {
	var rq struct {
		Prompt   string `json:"prompt"`
		Password bool   `json:"password"`
	}
	m.Decode(&rq)
	var total int
	rq.Prompt, total = api.BoundPrompt(rq.Prompt, 0, api.PromptLimit)
	if _, ok := k.h.(driver.Asker); ok && c != nil {
		// The question comes on the stdin channel, what the cell printed
		// before it on iopub: it is passed on once iopub has been quiet
		// for askQuiet, so that the output comes first.
		k.mu.Lock()
		k.asked = &m.Header
		k.asking = &driver.Prompt{Cell: c.n, Text: rq.Prompt, Password: rq.Password, Total: total}
		k.askTimer = time.NewTimer(k.askQuiet())
		k.mu.Unlock()
		return
	}
	gave := "an empty line"
	if k.ipython {
		gave = "end of file"
	}
	err := k.reply(m.Header, "", true)
	if c == nil {
		return
	}
	note := fmt.Sprintf("the cell asked for input (prompt %q); polyrepl cannot answer input yet, so it was given %s", cutText(rq.Prompt, 80), gave)
	if err != nil {
		note = fmt.Sprintf("the cell asked for input (prompt %q) and polyrepl could not answer it: %v", cutText(rq.Prompt, 80), err)
	}
	c.notes = append(c.notes, note)
}

// askQuiet is how long iopub must be quiet before this kernel's
// question is passed on.
func (k *kernel) askQuiet() time.Duration {
	if k.where != "" {
		return askQuietGateway
	}
	return askQuiet
}

// reply answers the input request parent: a line, or end of file.
func (k *kernel) reply(parent Header, text string, eof bool) error {
	if eof {
		text = ""
		if k.ipython {
			text = "\x04"
		}
	}
	m, err := k.id.request("input_reply", map[string]string{"value": text})
	if err != nil {
		return err
	}
	m.Parent = parent
	return k.t.send(stdinCh, m)
}

// Answer implements driver.Answerer.
func (k *kernel) Answer(text string, eof bool) error {
	k.mu.Lock()
	asked := k.asked
	k.asked = nil
	k.mu.Unlock()
	if asked == nil {
		return errors.New("the kernel asks for no input now")
	}
	return k.reply(*asked, text, eof)
}
