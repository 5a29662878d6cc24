package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/term"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
	plaintext "github.com/polyrepl/polyrepl/internal/plain"
	"github.com/polyrepl/polyrepl/internal/render"
)

// console is one attach session: what the person typed and where it
// goes, the cells seen running, the question a cell asks.
type console struct {
	e    *env
	t    *term.Terminal
	name string
	me   api.Client

	pmu sync.Mutex // the record's printer, fed by the follower and told of questions
	p   *entryPrinter

	mu   sync.Mutex
	live map[int]api.Entry // cells seen running, by seq
	// sending: a typed line is with the daemon and not yet answered, so
	// Ctrl-C stops the person's own cell even before the record has shown
	// it running.
	sending bool
	// pending are the lines typed and not run yet, in order: they run one
	// after another when the session is free, as a terminal's type-ahead
	// would. Ctrl-C drops them; drops counts the drops, so that a line
	// refused while one happened is not put back.
	pending []string
	drops   int
	told    bool // the line being sent, or the first pending, was said to be queued
	waiting bool // the session ran another client's cell: the sender waits for it to end
	// retried: Ctrl-C counted the line being sent among those it drops,
	// as it was said to be queued (a line tried while the session is
	// busy leaves the queue while it is sent); if it reached a free
	// session all the same, it runs and the console says so.
	retried bool
	// question is what a running cell asks (cell asker): the next line
	// typed answers it, and the console's prompt is the question's own.
	// answering counts answers sent and not yet answered: meanwhile a
	// glance taken before the answer arrived does not bring the question
	// back.
	question  *api.Prompt
	asker     int
	answering int
	// hidden is what was typed at a question for a secret, not shown;
	// only the goroutine reading lines touches it.
	hidden []rune
	cont   bool          // the lines typed so far are an unfinished cell
	wake   chan struct{} // the sender looks again: a line typed, a cell ended, the queue dropped
}

// maxPending bounds the lines typed ahead.
const maxPending = 64

// print shows one event of the followed record.
func (a *console) print(ev api.RecordEvent) {
	if ev.Entry != nil {
		a.seen(*ev.Entry)
	}
	// One write: the line editor draws its prompt again after each, and
	// an entry's lines (a figure's among them) stay together.
	var b strings.Builder
	a.pmu.Lock()
	a.p.w = &b
	a.p.event(ev)
	a.p.w = a.t
	a.pmu.Unlock()
	if b.Len() > 0 {
		io.WriteString(a.t, b.String())
	}
}

// seen keeps track of which cells run, for Ctrl-C and the queue.
func (a *console) seen(en api.Entry) {
	if en.Kind != api.EntryCell {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.live == nil {
		a.live = map[int]api.Entry{}
	}
	if en.Status == api.StatusRunning {
		a.live[en.Seq] = en
		return
	}
	delete(a.live, en.Seq)
	if a.question != nil && en.Cell == a.asker {
		a.question = nil
		a.setPromptLocked()
	}
	a.poke()
}

// poke wakes the sender.
func (a *console) poke() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

func (a *console) running() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.live) > 0 || a.sending
}

// setPromptLocked shows the prompt for what the next line is: the
// question's own prompt, a continuation, or the session's name. Under mu.
func (a *console) setPromptLocked() {
	switch {
	case a.question != nil:
		a.t.SetPrompt(questionPrompt(a.question.Text))
	case a.cont:
		a.t.SetPrompt(strings.Repeat(".", len(a.name)) + "> ")
	default:
		a.t.SetPrompt(a.name + "> ")
	}
}

// questionPrompt is the last line of a question's text, as a prompt:
// printable, at most 60 characters (its end, where the cursor waits).
func questionPrompt(text string) string {
	text = plaintext.Text(text)
	if i := strings.LastIndexAny(text, "\r\n"); i >= 0 {
		text = text[i+1:]
	}
	text = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) || r == ' ' {
			return r
		}
		return -1
	}, text)
	if r := []rune(text); len(r) > 60 {
		text = "…" + string(r[len(r)-59:])
	}
	if strings.TrimSpace(text) == "" {
		return "(input)> "
	}
	return text
}

// setCont says whether the lines typed so far continue, for the prompt.
func (a *console) setCont(cont bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cont = cont
	a.setPromptLocked()
}

// asked takes a question a cell asks, from a reply or a glance: the
// console's prompt becomes the question's own, and what the cell printed
// of it is not shown twice.
func (a *console) asked(cell int, who string, q *api.Prompt) {
	a.mu.Lock()
	if a.question != nil && a.asker == cell && a.question.Text == q.Text {
		a.mu.Unlock()
		return
	}
	a.question, a.asker = q, cell
	a.setPromptLocked()
	a.mu.Unlock()
	a.pmu.Lock()
	defer a.pmu.Unlock()
	erase := ""
	if a.p.line.pending != "" {
		erase = "\r\x1b[K" // the question's line, as the cell printed it: the prompt shows it
	}
	// Lines the question's cell prints on are whole: its unfinished line
	// is the prompt's.
	a.p.tty = false
	secret := ""
	if q.Password {
		secret = " It asks for a secret: what you type is not shown, and the record keeps it out."
	}
	fmt.Fprintf(a.t, "%s[Cell %d%s asks for input. The line you type answers it; Ctrl-C interrupts the cell.%s]\n", erase, cell, who, secret)
}

// unasked drops a question answered or gone.
func (a *console) unasked() {
	a.mu.Lock()
	a.question = nil
	a.setPromptLocked()
	a.mu.Unlock()
	a.pmu.Lock()
	a.p.tty = true
	a.pmu.Unlock()
}

// submit takes a line or block typed: the answer to a standing question,
// or a cell, run at once if the session is free and queued if not.
func (a *console) submit(code string, typed int) {
	a.mu.Lock()
	if q := a.question; q != nil {
		a.question = nil
		a.answering++
		a.setPromptLocked()
		a.mu.Unlock()
		a.pmu.Lock()
		a.p.tty = true
		a.pmu.Unlock()
		// The answer as typed goes: the record shows it, echoed by the
		// cell after its question.
		fmt.Fprintf(a.e.stdout, "%s", eraseLines(typed))
		go a.answer(code)
		return
	}
	if len(a.pending) >= maxPending {
		a.mu.Unlock()
		fmt.Fprintf(a.t, "[Not run: %d typed lines already wait for the session. Ctrl-C drops them.]\n", maxPending)
		return
	}
	a.pending = append(a.pending, code)
	busy := len(a.live) > 0 || a.sending || a.waiting
	msg := ""
	if busy {
		msg = a.queuedLocked()
		a.told = true
	}
	a.mu.Unlock()
	if msg != "" {
		fmt.Fprintln(a.t, msg)
	}
	a.poke()
}

// eraseLines moves the cursor up over the n terminal lines a typed answer
// took and clears them.
func eraseLines(n int) string {
	return strings.Repeat("\x1b[A\r\x1b[2K", n)
}

// sendingQueuedLocked says whether the line being sent is one said to be
// queued: a line tried while the session is busy leaves the queue while
// it is sent, and still counts as waiting. Under mu.
func (a *console) sendingQueuedLocked() bool {
	return a.sending && (a.waiting || a.told)
}

// waitingLocked counts the lines waiting, the one out being tried among
// them. Under mu.
func (a *console) waitingLocked() int {
	n := len(a.pending)
	if a.sendingQueuedLocked() {
		n++
	}
	return n
}

// queuedLocked says the lines typed wait, and for what. Under mu.
func (a *console) queuedLocked() string {
	what := "the running cell ends"
	var first *api.Entry
	for _, en := range a.live {
		if first == nil || en.Seq < first.Seq {
			en := en
			first = &en
		}
	}
	switch {
	case first != nil && first.Conn == a.me.Conn:
		what = fmt.Sprintf("your cell %d ends", first.Cell)
	case first != nil:
		what = fmt.Sprintf("cell %d (%s) ends", first.Cell, clientOf(*first))
	}
	if n := a.waitingLocked(); n > 1 {
		return fmt.Sprintf("[Queued: %d typed lines wait and run in order when %s. Ctrl-C drops them.]", n, what)
	}
	return fmt.Sprintf("[Queued: your line runs when %s. Ctrl-C drops it.]", what)
}

func clientOf(en api.Entry) string {
	who := api.Clip(en.Who, api.LabelLimit, "label")
	if en.How != "" {
		who += " via " + en.How
	}
	return who
}

// drop drops the queued lines, if any: Ctrl-C's first meaning.
func (a *console) drop() bool {
	a.mu.Lock()
	n := len(a.pending)
	a.pending = nil
	inFlight := false
	if a.sendingQueuedLocked() && !a.retried && !a.ownLiveLocked() {
		// The head of the queue is out being tried: it is dropped with
		// the rest unless the session takes it meanwhile.
		n++
		a.retried, inFlight = true, true
	}
	if n > 0 {
		a.drops++
		a.told, a.waiting = false, false
	}
	a.mu.Unlock()
	if n == 0 {
		return false
	}
	a.poke()
	lines := "your queued line; it was"
	if n > 1 {
		lines = fmt.Sprintf("%d queued lines; they were", n)
	}
	if inFlight {
		// Whether the session took the line being sent is known only
		// when its cell ends, which a loop never does: said as it is.
		fmt.Fprintf(a.t, "[Dropped %s not run, unless the first reached the session as you pressed Ctrl-C: then it runs, and Ctrl-C again interrupts it.]\n", lines)
		return true
	}
	fmt.Fprintf(a.t, "[Dropped %s not run. Ctrl-C again interrupts the running cell.]\n", lines)
	return true
}

// ownLiveLocked says whether the record shows a cell of this console's
// running: the line out being sent, which the session took (the console
// sends one at a time), so Ctrl-C interrupts it rather than dropping
// it. Under mu.
func (a *console) ownLiveLocked() bool {
	for _, en := range a.live {
		if en.Conn == a.me.Conn {
			return true
		}
	}
	return false
}

// sender runs the typed cells, one at a time, in order: a line waits
// while the session runs another client's cell, and runs when it is
// free. What the cells print and return comes through the record.
func (a *console) sender(ctx context.Context) {
	for {
		a.mu.Lock()
		var code string
		have := len(a.pending) > 0
		if have {
			// Taken off the queue while it is sent: Ctrl-C then interrupts
			// it rather than dropping it.
			code, a.pending = a.pending[0], a.pending[1:]
			a.sending, a.retried = true, false
		}
		drops := a.drops
		a.mu.Unlock()
		if !have {
			select {
			case <-a.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		r, err := a.e.client.Exec(ctx, a.name, api.ExecRequest{Code: code, Timeout: api.Seconds(api.MaxTimeout.Seconds()), Client: a.me,
			Spawn: api.Spawn{Cwd: cwd(), Env: os.Environ()}})
		var ae *client.APIError
		// A cell that asks for input holds the session as a running one
		// does: what was typed runs after it (code is never an answer by
		// accident), and the question shows as the prompt.
		asks := errors.As(err, &ae) && ae.Code == api.CodeInput
		busy := asks || errors.As(err, &ae) && (ae.Code == api.CodeBusy || ae.Code == api.CodeAdopting)
		a.mu.Lock()
		a.sending = false
		msg := ""
		switch {
		case busy && a.drops == drops:
			// Not run: it waits at the head of the queue.
			a.pending = append([]string{code}, a.pending...)
			a.waiting = true
			if !a.told {
				msg = a.queuedLocked()
				a.told = true
			}
		case busy:
			// Dropped while it was being sent.
		default:
			if a.retried && a.drops != drops {
				// Ctrl-C counted it as dropped, but the session had
				// taken it: say so rather than leave a wrong word.
				msg = "[One of those lines had reached the session before Ctrl-C: it runs. Ctrl-C again interrupts it.]"
			}
			a.waiting, a.told = false, false
		}
		a.retried = false
		a.mu.Unlock()
		if msg != "" {
			fmt.Fprintln(a.t, msg)
		}
		if asks {
			a.glance(ctx)
		}
		if busy && !a.waitForTurn(ctx) {
			return
		}
		if busy {
			continue
		}
		switch {
		case err == nil && r.Status == api.StatusInput && r.Prompt != nil:
			a.asked(r.Cell, "", r.Prompt)
		case err == nil, ctx.Err() != nil:
		case errors.As(err, &ae):
			fmt.Fprintf(a.t, "[Not run: %s.%s]\n", sentenceEnd(render.Refusal(ae.ErrorReply)), consoleHint(ae.ErrorReply, a.name))
		default:
			fmt.Fprintf(a.t, "[Not run: %s.]\n", sentenceEnd(err.Error()))
		}
	}
}

// waitForTurn waits, after the session refused a line as busy, until it
// may take it: while the record shows another client's cell running, a
// line typed or anything else that wakes the sender does not send the
// head of the queue again (each try is a moment in which Ctrl-C cannot
// tell whether the session took it), only the record's word that the
// cell ended does, or a try every few seconds for an end the record has
// not shown; otherwise a try each second. False when ctx ends.
func (a *console) waitForTurn(ctx context.Context) bool {
	for {
		a.mu.Lock()
		othersRun := len(a.live) > 0 && !a.ownLiveLocked()
		a.mu.Unlock()
		every := time.Second
		if othersRun {
			every = 5 * time.Second
		}
		select {
		case <-a.wake:
			a.mu.Lock()
			othersRun = len(a.live) > 0 && !a.ownLiveLocked()
			a.mu.Unlock()
			if othersRun {
				continue
			}
		case <-time.After(every):
		case <-ctx.Done():
			return false
		}
		return true
	}
}

// answer sends a line typed at a question's prompt.
func (a *console) answer(text string) {
	r, err := a.e.client.Input(a.e.ctx, a.name, api.InputRequest{Text: text, Timeout: api.Seconds(api.MaxTimeout.Seconds()), Client: a.me})
	a.mu.Lock()
	a.answering--
	a.mu.Unlock()
	var ae *client.APIError
	switch {
	case err == nil && r.Status == api.StatusInput && r.Prompt != nil:
		a.asked(r.Cell, "", r.Prompt)
	case err == nil, a.e.ctx.Err() != nil:
	case errors.As(err, &ae) && ae.Code == api.CodeNoInput:
		fmt.Fprintf(a.t, "[Not sent: no cell waits for input now (it was answered or ended). Type the line again to run it as a cell.]\n")
	case errors.As(err, &ae):
		fmt.Fprintf(a.t, "[Not sent: %s.%s]\n", sentenceEnd(render.Refusal(ae.ErrorReply)), consoleHint(ae.ErrorReply, a.name))
	default:
		fmt.Fprintf(a.t, "[Not sent: %s.]\n", sentenceEnd(err.Error()))
	}
}

// watch glances at the session while a cell runs that is not the
// console's own: a question it asks shows as the prompt, one answered
// elsewhere goes.
func (a *console) watch(ctx context.Context) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		a.mu.Lock()
		look := len(a.live) > 0 && !a.sending && a.answering == 0 || a.question != nil
		a.mu.Unlock()
		if look {
			a.glance(ctx)
		}
	}
}

// glance asks the session whether its running cell asks a question.
func (a *console) glance(ctx context.Context) {
	info, err := a.e.client.Glance(ctx, a.name)
	if err != nil {
		return
	}
	a.mu.Lock()
	answering, had := a.answering > 0, a.question != nil
	a.mu.Unlock()
	if answering {
		return
	}
	switch r := info.Running; {
	case r != nil && r.Input != nil:
		who := ""
		if r.Client.Conn != a.me.Conn {
			who = " (" + r.Client.Label() + ")"
		}
		a.asked(r.Cell, who, r.Input)
	case had:
		a.unasked()
	}
}

func (a *console) interrupt(ctx context.Context) {
	go func() {
		if _, err := a.e.client.Interrupt(ctx, a.name, api.ControlRequest{Client: a.me}); err != nil && ctx.Err() == nil {
			fmt.Fprintf(a.t, "[The interrupt failed: %s.]\n", sentenceEnd(err.Error()))
		}
	}()
}

// sentenceEnd makes a message end where its sentence ends: no trailing
// period or space (the console adds its own).
func sentenceEnd(s string) string {
	return strings.TrimRight(strings.TrimSpace(s), ".")
}

// consoleHint words a refusal's next steps for the console: keys to
// press and lines to type here; a command for another terminal only where
// the console has no way. Whole sentences, each after a space.
func consoleHint(e api.ErrorReply, name string) string {
	var b strings.Builder
	for _, act := range e.Next {
		switch act.Do {
		case api.DoWait:
			// The console shows every cell's output as it comes.
		case api.DoInterrupt:
			b.WriteString(" Ctrl-C interrupts the running cell.")
		case api.DoInput:
			b.WriteString(" The line you type next answers the question.")
		case api.DoExec:
			b.WriteString(" The line you type next starts the session afresh.")
		case api.DoAttach, api.DoHistory:
			// The console is attached and shows the record.
		default:
			fmt.Fprintf(&b, " In another terminal, %s %s.", render.People.Step(act), consolePurpose(act.Do))
		}
	}
	if h := strings.TrimSpace(e.Hint); h != "" {
		b.WriteString(" " + strings.ToUpper(h[:1]) + sentenceEnd(h[1:]) + ".")
	}
	return b.String()
}

func consolePurpose(do string) string {
	switch do {
	case api.DoKill:
		return "ends the session"
	case api.DoRestart:
		return "starts it afresh"
	case api.DoSessions:
		return "shows its state"
	case api.DoStop:
		return "ends the daemon and every session"
	}
	return "helps"
}

// asking says whether a question stands, and its prompt: the next line
// typed answers it.
func (a *console) asking() (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.question == nil {
		return "", false
	}
	return questionPrompt(a.question.Text), true
}

// secretAsked says whether the standing question asks for a secret.
func (a *console) secretAsked() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.question != nil && a.question.Password
}

// secretKey takes a key typed at a question for a secret: a character
// is kept unseen, keyHiddenBack takes the last back, keyHiddenClear all.
// On the goroutine reading lines.
func (a *console) secretKey(k rune) {
	switch {
	case k == keyHiddenClear:
		a.hidden = nil
	case k == keyHiddenBack:
		if len(a.hidden) > 0 {
			a.hidden = a.hidden[:len(a.hidden)-1]
		}
	default:
		a.hidden = append(a.hidden, k)
	}
}
