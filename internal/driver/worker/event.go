package worker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// Reading a worker's events: a line at a time, bounded, and held to what
// a session can show.

// readLine reads the next line from r into buf, without its newline, and
// returns it with its length n; a line over max bytes is read through and
// only its first max bytes returned (n is still its whole length).
func readLine(r *bufio.Reader, buf []byte, max int) (line []byte, n int, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		n += len(chunk)
		if room := max + 1 - len(buf); room > 0 {
			buf = append(buf, chunk[:min(len(chunk), room)]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == nil {
			n--
			if len(buf) > 0 && buf[len(buf)-1] == '\n' {
				buf = buf[:len(buf)-1]
			}
		}
		if len(buf) > max {
			buf = buf[:max]
		}
		return buf, n, err
	}
}

// head is what the start of an event line says about it.
type head struct {
	op, status, nonce        string
	cell                     int
	flushed, password, shown bool
}

// eventHead reads the top-level op, cell, nonce, status, flushed,
// password and shown of an event from its first bytes (the Python worker
// sends them first), as far as they go.
func eventHead(b []byte) head {
	var h head
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return h
		}
		key, _ := t.(string)
		var v any
		switch key {
		case "op", "cell", "nonce", "status", "flushed", "password", "shown":
			if dec.Decode(&v) != nil {
				return h
			}
		default:
			return h // the first long field: what follows is cut
		}
		switch key {
		case "flushed":
			h.flushed, _ = v.(bool)
		case "password":
			h.password, _ = v.(bool)
		case "shown":
			h.shown, _ = v.(bool)
		case "op":
			h.op, _ = v.(string)
		case "status":
			h.status, _ = v.(string)
		case "nonce":
			h.nonce, _ = v.(string)
		case "cell":
			if f, ok := v.(float64); ok {
				h.cell = int(f)
			}
		}
	}
	return h
}

// parseInput reads a cell's question, {"op":"input","cell":N,
// "nonce":…,"flushed":…,"password":…,"shown":…,"prompt":…,
// "prompt_total":…} (flushed: the worker wrote the end marker to its
// output first; prompt_total: the prompt had that many characters, and
// the worker cut it to its head and tail); ok is false for any other
// event.
func parseInput(line []byte) (q driver.Prompt, nonce string, flushed, ok bool) {
	if !bytes.Contains(line, []byte(`"op": "input"`)) && !bytes.Contains(line, []byte(`"op":"input"`)) {
		return q, "", false, false
	}
	var m struct {
		Op       string `json:"op"`
		Cell     int    `json:"cell"`
		Nonce    string `json:"nonce"`
		Prompt   string `json:"prompt"`
		Password bool   `json:"password"`
		Shown    bool   `json:"shown"`
		Flushed  bool   `json:"flushed"`
		Total    int    `json:"prompt_total"`
	}
	if json.Unmarshal(line, &m) != nil || m.Op != "input" {
		return q, "", false, false
	}
	q = driver.Prompt{Cell: m.Cell, Text: m.Prompt, Password: m.Password, Shown: m.Shown, Total: max(m.Total, 0)}
	q.Text, q.Total = api.BoundPrompt(q.Text, q.Total, api.PromptLimit)
	return q, m.Nonce, m.Flushed, true
}

// maxNames bounds the names a worker may report for one cell.
const maxNames = 10000

// parseEvent reads one line of a worker's events: a hello, a cell's
// result (and whether its output was flushed), or nothing it knows. A
// result is held to what the session can show: a known status, an error
// when it failed, a bounded list of names.
func parseEvent(line []byte) (hello *helloMsg, done *driver.Result, flushed bool, nonce string) {
	var head struct {
		Op string `json:"op"`
	}
	if json.Unmarshal(line, &head) != nil {
		return nil, nil, false, ""
	}
	switch head.Op {
	case "hello":
		var hm helloMsg
		if json.Unmarshal(line, &hm) == nil {
			return &hm, nil, false, ""
		}
	case "done":
		var dm doneMsg
		if json.Unmarshal(line, &dm) == nil {
			r := resultOf(dm)
			return nil, &r, dm.Flushed, dm.Nonce
		}
	}
	return nil, nil, false, ""
}

func resultOf(dm doneMsg) driver.Result {
	r := driver.Result{
		Cell: dm.Cell, Status: dm.Status,
		Names: dm.Names, Rich: dm.Rich, RichMore: dm.RichMore, Note: dm.Note, ValueTotal: dm.ValueTotal, ValueName: dm.ValueName,
		Unrestored: dm.Unrestored,
	}
	if e := dm.Error; e != nil {
		r.Error = &e.CellError
		r.ErrorFile, r.ErrorSaveErr = e.Whole, e.WholeErr
		r.MessageTotal, r.TracebackTotal = e.MessageTotal, e.TracebackTotal
	}
	for _, fd := range dm.Redirected {
		if (fd == 1 || fd == 2) && !slices.Contains(r.Redirected, fd) {
			r.Redirected = append(r.Redirected, fd)
		}
	}
	switch {
	case dm.Value != nil:
		r.Value = *dm.Value
	case dm.ValueHead != "" || dm.ValueTail != "":
		head, tail := utf8.RuneCountInString(dm.ValueHead), utf8.RuneCountInString(dm.ValueTail)
		r.ValueTotal = max(r.ValueTotal, head+tail)
		r.Value = dm.ValueHead + bound.Marker(r.ValueTotal-head-tail) + dm.ValueTail
		r.ValueCut = &bound.Cut{Total: r.ValueTotal, Head: head, Tail: tail}
		r.ValueFile, r.ValueSaveErr = dm.ValueWhole, dm.ValueErr
	}
	switch r.Status {
	case "":
		r.Status = api.StatusDone
	case api.StatusDone, api.StatusError, api.StatusInterrupted:
	default:
		r.Error = &api.CellError{Type: "WorkerError", Message: fmt.Sprintf("the worker reported the unknown status %q", r.Status)}
		r.Status = api.StatusError
	}
	if r.Status == api.StatusError && r.Error == nil {
		r.Error = &api.CellError{Type: "Error", Message: "the cell failed (the runtime said no more)"}
	}
	if len(dm.Vars) > api.VarsWorkerMax {
		dm.Vars = dm.Vars[:api.VarsWorkerMax]
	}
	if r.Vars = cellLook(dm.Vars, dm.VarsTotal); r.Vars != nil && r.Names == nil {
		// The names sessions lists come from the same look.
		r.Names = make([]string, 0, len(dm.Vars))
		for _, v := range dm.Vars {
			r.Names = append(r.Names, v.Name)
		}
	}
	if len(r.Names) > maxNames {
		r.Names = r.Names[:maxNames]
	}
	return r
}

// tooLong reports an event line of n bytes, over maxEvent, from its head:
// a result for the cell in flight ends that cell, saying what was lost; a
// question of the cell in flight is asked with a text that says its
// prompt was too long to take (the cell waits for its answer: nobody
// would know, else); anything else is a stray.
func (p *process) tooLong(head []byte, n int) {
	h := eventHead(head)
	if h.op == "input" {
		q := driver.Prompt{Cell: h.cell, Password: h.password, Shown: h.shown,
			Text: fmt.Sprintf("[the runtime's question was too long to take (%d bytes), and its prompt is not shown]", n)}
		if h.shown {
			q.Text = "" // the cell printed it: its last line is the text
		}
		p.asked(q, h.nonce, h.flushed)
		return
	}
	if h.op != "done" {
		p.evMu.Lock()
		p.stray++
		p.evMu.Unlock()
		return
	}
	r := driver.Result{Cell: h.cell, Status: h.status, Dropped: n}
	switch r.Status {
	case api.StatusDone, api.StatusError, api.StatusInterrupted:
	default:
		r.Status = api.StatusError
	}
	if r.Status == api.StatusError {
		r.Error = &api.CellError{Type: "Error", Message: fmt.Sprintf(
			"the cell failed, and the runtime's report of it (%d bytes) was too long to take", n)}
	}
	p.result(r, h.nonce, true)
}
