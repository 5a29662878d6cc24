package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/render"
)

func init() {
	register(&command{
		name:    "log",
		args:    "NAME",
		summary: "print a session's shared record whole; --follow streams it as it grows",
		help: `Prints the entries of session NAME's shared record after --since SEQ (default:
all kept), each whole. With --follow, keeps printing as entries are added
and as running cells print, until interrupted (Ctrl-C); it starts from
--since, or from now if not given. --json prints one JSON entry per line,
again each time the entry changes (NDJSON).`,
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
	if start < 0 {
		start = 0
		if l.follow {
			r, err := e.client.History(e.ctx, name, 1<<62)
			if err != nil {
				return e.fail(err)
			}
			start = r.Next - 1
		}
	}
	p := &entryPrinter{w: e.stdout, json: l.json, shown: map[int]*shownEntry{}}
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
	err := e.client.Follow(e.ctx, name, start, func(en api.Entry) error {
		p.print(en)
		return nil
	})
	if e.ctx.Err() != nil {
		return ExitOK // Ctrl-C ends following
	}
	return e.fail(err)
}

// entryPrinter prints a followed record for a person: an entry's header
// and code once, then its output as it grows, then how it ended.
type entryPrinter struct {
	w     io.Writer
	json  bool
	shown map[int]*shownEntry
}

type shownEntry struct {
	output string // the output printed so far
	cut    bool   // the output outgrew the entry: only its tail is shown, at the end
	ended  bool
}

func (p *entryPrinter) print(en api.Entry) {
	if p.json {
		b, _ := json.Marshal(render.WordedEntry(en))
		fmt.Fprintf(p.w, "%s\n", b)
		return
	}
	s := p.shown[en.Seq]
	var b strings.Builder
	if s == nil {
		s = &shownEntry{}
		p.shown[en.Seq] = s
		b.WriteString("── " + render.EntryHeader(en) + "\n")
		if en.Code != "" {
			b.WriteString(strings.TrimSuffix(en.Code, "\n") + "\n")
		}
		if t := render.EntryText(en); en.Kind != api.EntryCell && t != "" {
			b.WriteString(t + "\n")
		}
	}
	switch {
	case s.cut:
	case strings.HasPrefix(en.Output, s.output):
		b.WriteString(en.Output[len(s.output):])
	case strings.HasPrefix(en.Output, s.output[:strings.LastIndexByte(s.output, '\n')+1]):
		// The unfinished last line was rewritten (a progress bar): redraw it.
		b.WriteString("\r" + en.Output[strings.LastIndexByte(s.output, '\n')+1:])
	default: // the entry keeps only head and tail from here on
		s.cut = true
		b.WriteString("\n[… more output; the record keeps its head and tail, the tail follows at the end …]\n")
	}
	s.output = en.Output
	if s.cut && en.Kind == api.EntryCell && en.Status != api.StatusRunning && !s.ended {
		if i := strings.LastIndex(en.Output, " cut …]\n"); i >= 0 {
			b.WriteString(en.Output[i+len(" cut …]\n"):])
		}
	}
	if en.Kind == api.EntryCell && en.Status != api.StatusRunning && !s.ended {
		s.ended = true
		if en.Output != "" && !strings.HasSuffix(en.Output, "\n") {
			b.WriteString("\n")
		}
		if en.OutputCut != nil {
			b.WriteString(en.OutputCut.Describe("output") + "\n")
		}
		if en.Display != "" {
			b.WriteString(en.Display + "\n")
		}
		if en.Error != nil {
			if en.Error.Traceback != "" {
				b.WriteString(strings.TrimSuffix(en.Error.Traceback, "\n") + "\n")
			} else if !strings.Contains(en.Output, en.Error.Message) {
				b.WriteString(render.ErrorLine(en.Error) + "\n")
			}
		}
		if t := render.EntryText(en); t != "" {
			b.WriteString("[" + t + "]\n")
		}
		fmt.Fprintf(&b, "[%s %s]\n", en.ID, en.Status)
	}
	io.WriteString(p.w, b.String())
}
