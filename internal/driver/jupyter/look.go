package jupyter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	_ "embed"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/python"
	"github.com/polyrepl/polyrepl/internal/driver/r"
)

// A look at a kernel's live state (driver.Inspector), by the kernel's own
// means: a silent execute_request (silent: no execution count, no
// execute_input, no In/Out, no history; store_history false) whose answer
// comes back by its msg_id, which carries lookTag so that nothing the
// kernel sends for it — status, streams, displays — ever reaches the
// session's output or record.
//
//   - ipykernel: the Python worker's look (vars.py, varpath.py), installed
//     once as the module _polyrepl_look in sys.modules by an expression
//     (no name enters the user's namespace) and called by a
//     user_expression; its answer is the text/plain of the value, whose
//     repr is the JSON. Each cell's own request carries the look at its
//     names in its user_expressions, so a cell's names and its look come
//     from one source; a cell that fails (ipykernel evaluates no
//     user_expressions then) is followed by a silent look before its
//     result is told.
//   - IRkernel ignores user_expressions: the R worker's look (vars.R) is
//     evaluated by base::local in a private environment, and its answer
//     is a display_data of lookMIME. Each cell is followed by a silent
//     look before its result is told.
//   - Any other kernel cannot look, and says so.
//
// Two things a silent request still does, by the kernels' design:
// IPython's run_cell fires its post_execute event (matplotlib's inline
// backend then shows only figures drawn since the last cell: none), and
// what a thread of the user's prints while a look runs is sent as the
// look's (ipykernel parents its streams by the request in hand) and is
// dropped with it.
//
// A look is refused while a cell runs (ErrCellRuns: the holder answers
// from the last look); a cell sent while a look runs waits for it in the
// kernel's own queue of shell requests, which the kernel serves in order.

// How a kernel is looked at, from its kernel_info.
const (
	lookNone = iota
	lookIPython
	lookIR
)

const (
	// lookTag is in the msg_id of every look's request.
	lookTag = "_look_"
	// lookKey is the user_expression that carries a look.
	lookKey = "polyrepl_look"
	// lookMIME is the type of the display IRkernel's look answers with.
	lookMIME = "application/vnd.polyrepl.look+json"
	// lookModule is the module ipykernel's look lives in.
	lookModule = "_polyrepl_look"
	// lookTimeout is how long an object of unknown type may take to make
	// its preview, in seconds (the worker protocol's timeout).
	lookTimeout = 0.2
	// lookStale is how long an unanswered look keeps the next one from
	// being asked.
	lookStale = 30 * time.Second
	// afterCellWait bounds the wait for the look after a cell: the cell
	// is told without its look past it.
	afterCellWait = 30 * time.Second
)

var (
	//go:embed look.py
	lookPy string
	//go:embed look.R
	lookR string
)

// lookSource is the module ipykernel's look is: look.py, then the Python
// worker's look. It is joined where a kernel's first look installs it,
// not at the binary's start (every process would copy it).
func lookSource() string { return lookPy + python.VarsSource() }

// lookState is one look in flight: its request's msg_id and what came
// back for it.
type lookState struct {
	id      string
	sent    time.Time
	ch      chan lookAnswer // a look asked for by Vars: its answer
	replied bool            // execute_reply came
	idle    bool            // iopub said idle for it
	got     bool            // its answer came
	ans     lookAnswer
}

// lookAnswer is what a look's JSON says, or why there is none.
type lookAnswer struct {
	Vars   []lookLine `json:"vars"`
	Total  int        `json:"total"`
	Names  []string   `json:"names"`
	Error  string     `json:"error"`
	Failed bool       `json:"failed"` // Error is the look's own failure, not a path's
	// missing: ipykernel's module was not there (the user removed it).
	missing bool
}

// lookLine is api.Var as a runtime writes it: a memory in bytes as any
// JSON number (R's jsonlite may write 1.5e+09).
type lookLine struct {
	api.Var
	Memory float64 `json:"memory"`
}

// look is the answer's lines as a driver.Look, bounded.
func (a lookAnswer) look() driver.Look {
	n := min(len(a.Vars), api.VarsWorkerMax)
	vars := make([]api.Var, n)
	for i, l := range a.Vars[:n] {
		v := l.Var
		if l.Memory > 0 && l.Memory < 1<<62 {
			v.Memory = int64(l.Memory)
		}
		vars[i] = v
	}
	return driver.Look{Vars: vars, Total: a.Total}.Bounded()
}

// names are the answer's names, bounded as a worker's are.
func (a lookAnswer) names() []string {
	if a.Names == nil {
		return nil
	}
	out := make([]string, 0, min(len(a.Names), maxNames))
	for _, n := range a.Names {
		if len(out) == maxNames {
			break
		}
		out = append(out, api.Clip(n, api.NameLimit, "name"))
	}
	return out
}

// lookKindOf says how a kernel of this implementation and language is
// looked at.
func lookKindOf(impl, language string) int {
	switch {
	case strings.EqualFold(impl, "ipython") && strings.EqualFold(language, "python"):
		return lookIPython
	case strings.EqualFold(impl, "IRkernel") && strings.EqualFold(language, "R"):
		return lookIR
	}
	return lookNone
}

// pyModule is the expression that is the look's module: installed first
// if it is not (yet) there. Only __import__ is looked up in the user's
// namespace, so names the user rebound (type, exec) do not matter.
func (k *kernel) pyModule() string {
	if k.lookInstalled {
		return "__import__('sys').modules['" + lookModule + "']"
	}
	return "(__import__('sys').modules.get('" + lookModule + "') or (lambda m: __import__('builtins').exec(" +
		"__import__('builtins').compile(" + strconv.Quote(lookSource()) + ", '<polyrepl look>', 'exec'), m.__dict__) or " +
		"__import__('sys').modules.setdefault('" + lookModule + "', m))(__import__('types').ModuleType('" + lookModule + "')))"
}

// queryJSON is the worker protocol's query for q.
func queryJSON(q driver.VarsQuery) string {
	b, _ := json.Marshal(map[string]any{"path": q.Path, "all": q.All, "limit": api.VarsLimit,
		"preview": api.VarPreview, "timeout": lookTimeout})
	return string(b)
}

// rLook is the R code of a look: the query q, or with cell the look a
// cell's result carries. The query travels as bytes, never as R syntax.
func rLook(q driver.VarsQuery, cell bool) string {
	call := "answer(cell_answer())"
	if !cell {
		b := []byte(queryJSON(q))
		hex := make([]string, len(b))
		for i, c := range b {
			hex[i] = fmt.Sprintf("0x%02x", c)
		}
		call = "answer(look(vars_args(as.raw(c(" + strings.Join(hex, ",") + ")))))"
	}
	return "base::local({ base::eval(base::parse(text = " + rString(r.VarsSource()+"\n"+lookR) + ", keep.source = FALSE)); " + call + " }, envir = base::new.env(parent = base::baseenv()))\n"
}

// rString is s as an R string literal on one line.
func rString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(&b, `\x%02x`, c)
			} else {
				b.WriteRune(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// lookRequest builds a look's silent execute_request; k.mu is held.
func (k *kernel) lookRequest(q driver.VarsQuery, cell bool) (*Msg, error) {
	content := map[string]any{"code": "", "silent": true, "store_history": false,
		"allow_stdin": false, "stop_on_error": false, "user_expressions": map[string]string{}}
	switch k.lookKind {
	case lookIPython:
		call := ".look(" + strconv.Quote(queryJSON(q)) + ")"
		if cell {
			call = ".cell()"
		}
		content["user_expressions"] = map[string]string{lookKey: k.pyModule() + call}
	case lookIR:
		content["code"] = rLook(q, cell)
	default:
		return nil, errors.New("this kernel cannot look")
	}
	return k.id.requestTagged("execute_request", content, lookTag)
}

// cannotLook says, per kernel, that it cannot look.
func (k *kernel) cannotLook() error {
	k.mu.Lock()
	name := k.name
	k.mu.Unlock()
	what := strings.TrimSpace(k.impl + " " + k.language)
	if what == "" {
		what = "its implementation unknown"
	}
	return fmt.Errorf("the %s kernel (%s) cannot look at its names without a cell: polyrepl looks in ipykernel's and IRkernel's only", name, what)
}

// Vars implements driver.Inspector.
func (k *kernel) Vars(q driver.VarsQuery, wait time.Duration) (driver.Look, error) {
	if k.lookKind == lookNone {
		return driver.Look{}, k.cannotLook()
	}
	if len(q.Path) > api.VarPathLimit {
		return driver.Look{}, fmt.Errorf("a path of %d bytes is over the %d a look takes", len(q.Path), api.VarPathLimit)
	}
	deadline := time.Now().Add(wait)
	for attempt := 0; ; attempt++ {
		a, err := k.askLook(q, time.Until(deadline))
		if err != nil {
			return driver.Look{}, err
		}
		switch {
		case a.missing && attempt == 0:
			continue // installed again
		case a.Error != "" && !a.Failed && !a.missing:
			return driver.Look{}, &driver.PathError{Msg: api.Clip(a.Error, api.VarNoteLimit*2, "error")}
		case a.Error != "":
			return driver.Look{}, fmt.Errorf("the kernel's look failed: %s", api.Clip(a.Error, api.VarNoteLimit*2, "error"))
		}
		return a.look(), nil
	}
}

// askLook sends one look and waits for its answer.
func (k *kernel) askLook(q driver.VarsQuery, wait time.Duration) (lookAnswer, error) {
	k.mu.Lock()
	switch {
	case k.closed:
		k.mu.Unlock()
		return lookAnswer{}, errors.New("the kernel has ended")
	case k.cur != nil:
		k.mu.Unlock()
		return lookAnswer{}, driver.ErrCellRuns
	case k.look != nil && time.Since(k.look.sent) < lookStale:
		since := time.Since(k.look.sent).Round(time.Second)
		k.mu.Unlock()
		return lookAnswer{}, fmt.Errorf("the kernel has not answered the look sent %s ago yet: ask again later", since)
	}
	// (A look unanswered for lookStale is given up: its answer, lost
	// with a gateway's connection or never coming, is dropped by its id.)
	m, err := k.lookRequest(q, false)
	if err == nil {
		err = k.t.send(shellCh, m)
	}
	if err != nil {
		k.mu.Unlock()
		return lookAnswer{}, fmt.Errorf("cannot ask the kernel to look: %w", err)
	}
	l := &lookState{id: m.Header.MsgID, sent: time.Now(), ch: make(chan lookAnswer, 1)}
	k.look = l
	k.mu.Unlock()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case a := <-l.ch:
		return a, nil
	case <-timer.C:
		// k.look stays until the kernel answers: a cell sent meanwhile
		// waits behind the look in the kernel's queue, and the next
		// look is told why it cannot be asked.
		return lookAnswer{}, fmt.Errorf("the kernel did not look within %s", wait)
	case <-k.done:
		return lookAnswer{}, errors.New("the kernel ended during the look")
	}
}

// isLook says that a message answers a look's request.
func (k *kernel) isLook(m *Msg) bool {
	id := m.ParentID()
	return strings.HasPrefix(id, k.id.session+lookTag)
}

// tookLook acts on a message for a look: the look asked for by Vars, or
// the look after cell c. Any other look's (one given up on) is dropped.
func (k *kernel) tookLook(ch string, m *Msg, c *cellState) {
	k.mu.Lock()
	l := k.look
	k.mu.Unlock()
	after := false
	switch {
	case l != nil && l.id == m.ParentID():
	case c != nil && c.after != nil && c.after.id == m.ParentID():
		l, after = c.after, true
	default:
		return
	}
	switch {
	case ch == shellCh && m.Type() == "execute_reply":
		l.replied = true
		if a, ok := k.replyAnswer(m); ok && !l.got {
			l.ans, l.got = a, true
		}
	case ch == iopubCh && m.Type() == "display_data":
		var d struct {
			Data map[string]json.RawMessage `json:"data"`
		}
		if m.Decode(&d) == nil {
			if raw, ok := d.Data[lookMIME]; ok {
				l.ans, l.got = decodeAnswer(str(raw)), true
			}
		}
	case ch == iopubCh && m.Type() == "status":
		var s struct {
			State string `json:"execution_state"`
		}
		if m.Decode(&s) == nil && s.State == "idle" {
			l.idle = true
		}
	}
	if !l.replied || (!l.got && !l.idle) {
		return
	}
	if !l.got {
		l.ans = lookAnswer{Error: "the kernel answered the look with nothing", Failed: true}
	}
	if after {
		c.lookDone = true
		k.finish(false)
		return
	}
	k.mu.Lock()
	if k.look == l {
		k.look = nil
	}
	k.mu.Unlock()
	l.ch <- l.ans
}

// replyAnswer reads a look's answer from an execute_reply's
// user_expressions (ipykernel's), and whether it had one.
func (k *kernel) replyAnswer(m *Msg) (lookAnswer, bool) {
	var r struct {
		Status          string                    `json:"status"`
		UserExpressions map[string]userExpression `json:"user_expressions"`
	}
	if err := m.Decode(&r); err != nil {
		return lookAnswer{Error: err.Error(), Failed: true}, true
	}
	ue, ok := r.UserExpressions[lookKey]
	if !ok {
		return lookAnswer{}, false
	}
	return k.expressionAnswer(ue), true
}

// userExpression is one user_expression's result.
type userExpression struct {
	Status string            `json:"status"`
	Data   map[string]string `json:"data"`
	Ename  string            `json:"ename"`
	Evalue string            `json:"evalue"`
}

// expressionAnswer reads the look's user_expression, and notes whether
// ipykernel has the look's module.
func (k *kernel) expressionAnswer(ue userExpression) lookAnswer {
	if ue.Status != "ok" {
		a := lookAnswer{Error: label(ue.Ename+": "+ue.Evalue, api.VarNoteLimit), Failed: true}
		if ue.Ename == "KeyError" && strings.Contains(ue.Evalue, lookModule) {
			a.missing = true
		}
		k.mu.Lock()
		k.lookInstalled = k.lookInstalled && !a.missing
		k.mu.Unlock()
		return a
	}
	k.mu.Lock()
	k.lookInstalled = true
	k.mu.Unlock()
	return decodeAnswer(ue.Data["text/plain"])
}

// decodeAnswer reads a look's JSON.
func decodeAnswer(text string) lookAnswer {
	var a lookAnswer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		return lookAnswer{Error: fmt.Sprintf("the kernel's look cannot be read (%v): %s", err, label(text, 200)), Failed: true}
	}
	if a.Vars == nil && a.Error == "" {
		a.Vars = []lookLine{}
	}
	return a
}

// afterLook sends the look that follows cell c, if its kernel needs one
// (IRkernel after every cell; ipykernel after a cell that failed, whose
// user_expressions it did not evaluate): true if one was sent.
func (k *kernel) afterLook(c *cellState) bool {
	if c.after != nil || c.lookDone {
		return false
	}
	switch {
	case k.lookKind == lookIR:
	case k.lookKind == lookIPython && c.status != "ok" && c.look == nil:
	default:
		return false
	}
	k.mu.Lock()
	m, err := k.lookRequest(driver.VarsQuery{}, true)
	if err == nil && !k.closed {
		err = k.t.send(shellCh, m)
	}
	k.mu.Unlock()
	if err != nil {
		return false
	}
	c.after = &lookState{id: m.Header.MsgID, sent: time.Now()}
	return true
}

// cellLook is what cell c's result carries of its look: the look and the
// names it gives.
func (c *cellState) cellLook() (*driver.Look, []string) {
	a := c.look
	if c.after != nil && c.after.got {
		a = &c.after.ans
	}
	if a == nil || a.Error != "" {
		return nil, nil
	}
	l := a.look()
	return &l, a.names()
}
