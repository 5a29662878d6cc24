package cli

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/render"
)

// liveLine draws a live entry's output as it grows: whole lines as they
// come and, on a terminal, the unfinished last line (a progress bar),
// drawn again in place each time it changes until its final form comes.
// log --follow, attach and exec on a terminal draw with it.
type liveLine struct {
	tty     bool   // the unfinished line is shown
	pending string // the unfinished line drawn last
	open    bool   // what was drawn last does not end its line
}

// draw writes text, the output's next whole part, over the unfinished
// line drawn before it, then the unfinished line as it stands now.
func (l *liveLine) draw(b *strings.Builder, text, pending string) {
	if !l.tty {
		pending = ""
	}
	if text == "" && pending == l.pending {
		return
	}
	if l.pending != "" {
		b.WriteString("\r\x1b[K") // the line is drawn again, as it ended or stands now
	}
	b.WriteString(text + pending)
	l.pending = pending
	if s := text + pending; s != "" {
		l.open = !strings.HasSuffix(s, "\n")
	}
}

// end ends the line drawn last, if unfinished, so that what follows
// starts on a line of its own.
func (l *liveLine) end(b *strings.Builder) {
	if l.open {
		b.WriteString("\n")
	}
	l.pending, l.open = "", false
}

// liveExec runs an exec whose output goes to a terminal: the cell's
// output shows as it prints, read from the session's record as log
// --follow reads it, while the call waits for the result. Ctrl-C shows
// what came so far and that the cell goes on. It starts the cell with a
// timeout of 0, so that what comes first (the session created, other
// clients' activity) shows first, then waits for the rest.
func (x *execCmd) liveExec(e *env, name string, req api.ExecRequest) int {
	total := api.DefaultTimeout
	if req.Timeout != nil {
		total = time.Duration(*req.Timeout * float64(time.Second))
	}
	zero := 0.0
	req.Timeout = &zero
	r0, err := e.client.Exec(e.ctx, name, req)
	if err != nil {
		return e.fail(x.sandbox.explain(err))
	}
	if r0.Status != api.StatusRunning {
		return e.result(r0, false)
	}
	l := &liveCell{e: e, gen: r0.Generation, cell: r0.Cell, line: liveLine{tty: true}}
	l.start(name, r0)
	left := max(0, total.Seconds()-r0.Elapsed)
	w := api.WaitRequest{Timeout: &left, Client: e.me(), Generation: r0.Generation}
	r, err := e.client.Wait(e.ctx, name, w)
	if err != nil && errors.Is(err, context.Canceled) && e.ctx.Err() != nil {
		// Ctrl-C: what the cell printed so far, and that it goes on.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		l.mu.Lock()
		l.line.open = true // the terminal echoed ^C: what follows starts a line
		l.mu.Unlock()
		w.Timeout = &zero
		r, err = e.client.Wait(ctx, name, w)
	}
	if err != nil {
		l.cancel()
		<-l.done
		l.mu.Lock()
		l.line.end(&l.out)
		l.flushLocked()
		l.mu.Unlock()
		return e.fail(err)
	}
	return e.result(l.finish(r), false)
}

// liveCell shows one running cell's output on a terminal as it prints.
// Positions are characters of the cell's output made plain, as the
// record's stream counts them; a reply read from a position that ended
// mid-line (a progress bar) does not count the same, and from is then
// not known.
type liveCell struct {
	e      *env
	gen    string
	cell   int
	cancel context.CancelFunc
	done   chan struct{} // the follower ended
	mu     sync.Mutex
	line   liveLine
	out    strings.Builder // for standard output, not yet written
	from   int             // where the next reply's output starts; -1 if not known
	whole  int             // the output shown, in whole lines
	seq    int             // the cell's entry in the record, once seen
	ended  bool            // the entry's end came
	// streamed says the record showed some of the cell's output.
	streamed bool
	// shownTail is the last of what was shown, to tell an error the
	// runtime printed itself.
	shownTail string
}

// shownKeep bounds shownTail: a runtime printing its own error prints it
// last.
const shownKeep = 16 << 10

// start shows the first reply (the session created, activity, what the
// cell printed at once) and starts following the record.
func (l *liveCell) start(name string, r0 api.CellResult) {
	first := r0
	first.Notes = nil
	for _, n := range r0.Notes {
		if n.Kind != api.NoteRunning {
			first.Notes = append(first.Notes, n)
		}
	}
	n, partial := span(r0)
	l.whole, l.from = n, -1
	if r0.OutputCut == nil {
		first.Output = ""
		if partial == "" {
			l.from = n
		}
	}
	render.Split(l.e.stdout, l.e.stderr, first, render.PeopleStyle)
	if r0.OutputCut == nil {
		l.line.draw(&l.out, strings.TrimSuffix(r0.Output, partial), partial)
		l.keep(r0.Output)
	}
	l.flushLocked()
	ctx, cancel := context.WithCancel(l.e.ctx)
	l.cancel, l.done = cancel, make(chan struct{})
	go func() {
		defer close(l.done)
		h, err := l.e.client.History(ctx, name, 1<<62)
		if err != nil {
			return
		}
		// The cell's entry is one of the last: while it runs, only
		// notes and output between cells come after it.
		l.e.client.Follow(ctx, name, max(0, h.Next-1-8), func(ev api.RecordEvent) error {
			l.event(ev)
			return ctx.Err()
		})
	}()
}

// span is what a reply's output covers: the characters of its whole
// lines, and its unfinished last line.
func span(r api.CellResult) (whole int, partial string) {
	total := utf8.RuneCountInString(r.Output)
	if r.OutputCut != nil {
		total = r.OutputCut.Total
	}
	partial = r.Output[strings.LastIndexByte(r.Output, '\n')+1:]
	return total - utf8.RuneCountInString(partial), partial
}

// event takes one event of the followed record: the cell's entry, what
// it printed next, its end.
func (l *liveCell) event(ev api.RecordEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case ev.Event == api.EventEntry && ev.Entry != nil:
		if en := ev.Entry; en.Kind == api.EntryCell && en.Generation == l.gen && en.Cell == l.cell {
			l.seq = en.Seq
			l.ended = en.Status != api.StatusRunning
		}
	case ev.Output != nil && l.seq > 0 && ev.Output.Seq == l.seq:
		l.chunk(*ev.Output)
	case ev.Event == api.EventEnd && l.seq > 0 && ev.Entry != nil && ev.Entry.Seq == l.seq:
		l.ended = true
	}
	l.flushLocked()
}

// chunk shows what the record says the cell printed next, from where
// the screen stands.
func (l *liveCell) chunk(c api.OutputChunk) {
	if c.Skipped > 0 && c.Offset > l.whole {
		l.line.end(&l.out)
		l.flushLocked()
		io.WriteString(l.e.stderr, skipped(c)+"\n")
		l.whole = c.Offset
	}
	if c.Offset > l.whole {
		return // not from where the screen stands: the reply fills it
	}
	text := skipChars(c.Text, l.whole-c.Offset)
	l.streamed = true
	l.whole += utf8.RuneCountInString(text)
	l.line.draw(&l.out, text, c.Pending)
	l.keep(text)
}

// keep remembers the last of what was shown.
func (l *liveCell) keep(text string) {
	l.shownTail += text
	if len(l.shownTail) > shownKeep {
		l.shownTail = l.shownTail[len(l.shownTail)-shownKeep/2:]
	}
}

// finish shows what reply r, the call's last, holds that the record did
// not show, and returns r for its value, error and notes, its output
// shown.
func (l *liveCell) finish(r api.CellResult) api.CellResult {
	final := r.Status != api.StatusRunning && r.Status != api.StatusInput
	n, partial := span(r)
	to := -1
	if l.from >= 0 {
		to = l.from + n
	}
	// The record shows what the reply holds a moment after it: wait a
	// little for it, and for the end of a cell that ended.
	wait := time.Second
	if final {
		wait = 3 * time.Second
	}
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); {
		l.mu.Lock()
		caught := final && l.ended || !final && (to < 0 && l.streamed || to >= 0 && l.whole >= to)
		l.mu.Unlock()
		if caught {
			break
		}
		select {
		case <-l.done:
			deadline = time.Time{}
		case <-time.After(20 * time.Millisecond):
		}
	}
	if !final && to < 0 {
		time.Sleep(200 * time.Millisecond) // what the record has up to the reply, as near as can be told
	}
	l.cancel()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	shown := r
	shown.Output = l.shownTail
	switch {
	case l.streamed && (final && l.ended || !final && (to < 0 || l.whole >= to)):
		// The record showed it all.
		r.Output, r.OutputCut = "", nil
	case r.OutputCut != nil || to < 0:
		// Shown as it came, after what the record showed (which it may
		// repeat in part).
		l.line.end(&l.out)
		shown.Output += r.Output
	default:
		text := skipChars(r.Output, l.whole-l.from)
		l.line.draw(&l.out, strings.TrimSuffix(text, partial), partial)
		l.keep(text)
		shown.Output += text
		r.Output, r.OutputCut = "", nil
	}
	if r.Error != nil && render.ErrorText(shown) == "" {
		r.Error = nil // the runtime printed it itself, and it was shown
	}
	l.line.end(&l.out)
	l.flushLocked()
	return r
}

// flushLocked writes what is ready for standard output.
func (l *liveCell) flushLocked() {
	if l.out.Len() > 0 {
		io.WriteString(l.e.stdout, l.out.String())
		l.out.Reset()
	}
}

// skipChars drops the first n characters of s.
func skipChars(s string, n int) string {
	for i := range s {
		if n <= 0 {
			return s[i:]
		}
		n--
	}
	return ""
}

// live says whether an exec shows its cell's output as it prints: text
// to a terminal, with a timeout to wait out.
func (x *execCmd) live(e *env) bool {
	return !x.json && (x.timeout.v == nil || *x.timeout.v > 0) && isTerminal(e.stdout)
}
