package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
	"github.com/polyrepl/polyrepl/internal/render"
)

func init() {
	register(&command{
		name:    "log",
		args:    "NAME",
		summary: "print a session's shared record whole; --follow streams it as it grows",
		help: `Prints the entries of session NAME's shared record after --since SEQ (default:
all kept), each whole; a figure a cell made is a line saying where its
file is. With --follow, keeps printing as entries are added and as
running cells print, line by line, through the session's deaths and new
lives, until interrupted (Ctrl-C); it starts from --since, or from now if
not given. A session not created yet is waited for, then followed from
its start. --json prints NDJSON events: "entry" once per entry (a
running one without its output), "output" with what it printed next
(text, its offset in the entry's output, the unfinished line as pending),
and "end" when a cell finishes; docs/together.md describes them.`,
		new: func() runner { return &logCmd{since: -1} },
	})
}

type logCmd struct {
	follow bool
	since  int // -1: not given
	json   bool
}

func (l *logCmd) flags(fs *flagSet) {
	fs.Bool(&l.follow, "follow f", "keep printing as the record grows")
	fs.Int(&l.since, "since", "SEQ", "start after this seq")
	fs.Bool(&l.json, "json", "print NDJSON")
}

func (l *logCmd) run(e *env, pos []string) int {
	c := e.cmd
	if len(pos) != 1 {
		return e.usageError(c, "log takes one session name")
	}
	name := pos[0]
	start := l.since
	if l.follow {
		r, err := e.client.History(e.ctx, name, 1<<62)
		switch {
		case noSession(err):
			// A session about to be made: its record, all of it, once
			// it is.
			fmt.Fprintf(e.stderr, "polyrepl: waiting for session '%s' to be created; Ctrl-C to stop\n", name)
			if err := e.awaitRecord(name); err != nil {
				if e.ctx.Err() != nil {
					return ExitOK
				}
				return e.fail(err)
			}
			start = max(start, 0)
		case err != nil:
			return e.fail(err)
		case start < 0:
			start = r.Next - 1
		}
	}
	start = max(start, 0)
	p := &entryPrinter{w: e.stdout, json: l.json, tty: isTerminal(e.stdout)}
	if !l.follow {
		r, err := e.client.History(e.ctx, name, start)
		if err != nil {
			return e.fail(err)
		}
		for _, en := range r.Entries {
			p.print(en)
		}
		return ExitOK
	}
	err := e.client.Follow(e.ctx, name, start, func(ev api.RecordEvent) error {
		p.event(ev)
		return nil
	})
	if e.ctx.Err() != nil {
		return ExitOK // Ctrl-C ends following
	}
	return e.fail(err)
}

// noSession says whether err is the daemon's word that no session (and
// no record) has the name asked for.
func noSession(err error) bool {
	var ae *client.APIError
	return errors.As(err, &ae) && ae.Code == api.CodeNoSession
}

// awaitRecord waits until session name has a record, or ctx ends.
func (e *env) awaitRecord(name string) error {
	for {
		select {
		case <-e.ctx.Done():
			return e.ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if _, err := e.client.History(e.ctx, name, 1<<62); !noSession(err) {
			return err
		}
	}
}

// entryPrinter prints a followed record for a person: an entry's header
// and code once, then its output as it grows, then how it ended.
type entryPrinter struct {
	w    io.Writer
	json bool
	tty  bool     // w is a terminal: an unfinished line is shown, and redrawn as it changes
	line liveLine // the output of the entry printed last, as it grows
	last int      // the seq whose output was printed last
}

// event prints one event of a followed record.
func (p *entryPrinter) event(ev api.RecordEvent) {
	if p.json {
		if ev.Entry != nil {
			en := render.WordedEntry(*ev.Entry)
			ev.Entry = &en
		}
		b, _ := json.Marshal(ev)
		fmt.Fprintf(p.w, "%s\n", b)
		return
	}
	var b strings.Builder
	switch {
	case ev.Event == api.EventReconnected:
		p.endLine(&b)
		b.WriteString("[the daemon went away; the session lived on in its holder, and a new daemon took it up: following it again, what was still running from its start]\n")
		p.last = 0
	case ev.Output != nil:
		p.output(&b, *ev.Output)
	case ev.Event == api.EventEntry && ev.Entry != nil:
		p.endLine(&b)
		p.head(&b, *ev.Entry)
		if en := *ev.Entry; en.Output == "" && (en.Kind == api.EntryIdle || en.Kind == api.EntryCell && en.Status == api.StatusRunning) {
			p.last = en.Seq // its output follows
		} else {
			p.whole(&b, en)
		}
	case ev.Entry != nil && ev.Entry.Kind == api.EntryCell && ev.Entry.Status != api.StatusRunning:
		p.endLine(&b)
		if p.last != ev.Entry.Seq {
			b.WriteString("── " + ev.Entry.ID + " ended\n")
		}
		if ev.Entry.Output != "" {
			// The record let its output go before this follower read it.
			b.WriteString(ev.Entry.Output)
			if !strings.HasSuffix(ev.Entry.Output, "\n") {
				b.WriteString("\n")
			}
		}
		p.ending(&b, *ev.Entry)
		p.last = 0
	}
	io.WriteString(p.w, b.String())
}

// print prints an entry whole, as `log` without --follow does.
func (p *entryPrinter) print(en api.Entry) {
	p.event(api.RecordEvent{Event: api.EventEntry, Entry: &en})
}

// head writes an entry's header line and its code or note text.
func (p *entryPrinter) head(b *strings.Builder, en api.Entry) {
	b.WriteString("── " + render.EntryHeader(en) + "\n")
	if en.Code != "" {
		b.WriteString(strings.TrimSuffix(en.Code, "\n") + "\n")
	}
	if en.CodeCut != nil {
		b.WriteString(en.CodeCut.Describe("code") + "\n")
	}
	if t := render.EntryText(en); en.Kind != api.EntryCell && t != "" {
		b.WriteString(t + "\n")
	}
}

// whole writes the output and end of an entry that came whole.
func (p *entryPrinter) whole(b *strings.Builder, en api.Entry) {
	if en.Output != "" {
		b.WriteString(en.Output)
		if !strings.HasSuffix(en.Output, "\n") {
			b.WriteString("\n")
		}
	}
	if en.OutputCut != nil {
		b.WriteString(en.OutputCut.Describe("output") + "\n")
	}
	if en.Kind == api.EntryCell {
		p.ending(b, en)
	}
}

// output writes what a live entry printed next.
func (p *entryPrinter) output(b *strings.Builder, c api.OutputChunk) {
	if p.last != c.Seq {
		p.endLine(b)
		b.WriteString("── " + c.ID + " goes on:\n")
		p.last = c.Seq
	}
	if c.Skipped > 0 {
		p.line.end(b)
		b.WriteString(skipped(c) + "\n")
	}
	p.line.tty = p.tty
	p.line.draw(b, c.Text, c.Pending)
}

// skipped says what of a live entry's output a follower did not get.
func skipped(c api.OutputChunk) string {
	where := ""
	if c.File != "" {
		where = "; the whole output is in " + c.File
	}
	return fmt.Sprintf("[… %s not shown: this follower fell behind what the record holds%s …]", render.Plural(c.Skipped, "character"), where)
}

// endLine ends an unfinished line printed last, so what follows starts
// on a line of its own.
func (p *entryPrinter) endLine(b *strings.Builder) { p.line.end(b) }

// ending writes how a cell ended: its value or error, a note, and its
// status.
func (p *entryPrinter) ending(b *strings.Builder, en api.Entry) {
	if en.Display != "" {
		b.WriteString(en.Display + "\n")
	}
	if en.Error != nil && (en.Error.Traceback != "" || en.Error.MessageCut != nil || !strings.Contains(en.Output, en.Error.Message)) {
		b.WriteString(render.ErrorShown(en.Error))
	}
	for i, x := range en.Rich {
		// A figure the cell made: where its file is.
		b.WriteString(render.RichLine(i+1, x) + "\n")
	}
	if t := render.EntryText(en); t != "" {
		b.WriteString("[" + t + "]\n")
	}
	fmt.Fprintf(b, "[%s %s]\n", en.ID, en.Status)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
