package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/render"
)

func init() {
	register(&command{
		name:    "attach",
		args:    "NAME",
		summary: "an interactive console on a session: watch its record, type cells",
		help: `Opens a console on session NAME at your terminal. It shows the session's
shared record as it grows — every cell from every client (agents through
MCP, other terminals) with its code and its output as it streams — and
sends what you type as cells labelled as yours (--label, $POLYREPL_LABEL,
else $USER), recorded like any other client's.

Enter runs the line; a line ending in ':' or '\' or with an open bracket
continues, the next line indented as the block goes (four spaces more
after ':' or an open bracket), and a block begun with ':' ends at an empty
line. Tab completes the name before the cursor — by the runtime's own
completion on the session's live state where it has one (Python:
attributes after a dot too), else from the session's names and the
runtime's keywords — listing the choices when they differ; at the start
of a line it indents. Up and
down recall earlier lines. A line typed while a cell runs waits and runs
when the session is free, in the order typed. When a cell asks for input,
the prompt is its question and the next line answers it. A cell that made
a figure is followed by a line saying where its file is. Ctrl-C drops the
lines waiting, else interrupts the running cell, else clears the line;
Ctrl-D on an empty line, or Ctrl-], detaches: the session keeps running.

--raw, for a runtime hosted on a terminal (sh, lfortran), attaches to the
runtime's own terminal instead, as tmux would: every key goes to it
(Ctrl-C too), and what it prints comes back. What you type there is
recorded as output the session printed while no cell ran. Ctrl-] detaches.`,
		new: func() runner { return &attachCmd{} },
	})
}

type attachCmd struct{ raw bool }

func (x *attachCmd) flags(fs *flagSet) {
	fs.Bool(&x.raw, "raw", "attach to the runtime's own terminal")
}

func (x *attachCmd) run(e *env, pos []string) int {
	c := e.cmd
	if len(pos) != 1 {
		return e.usageError(c, "attach takes one session name")
	}
	name := pos[0]
	in, isFile := e.stdin.(*os.File)
	if !isFile || !term.IsTerminal(int(in.Fd())) {
		e.errorf("attach needs a terminal")
		e.hintf("`polyrepl log %s --follow` shows the record as it grows; `polyrepl exec %s CODE` sends a cell", name, name)
		return ExitUsage
	}
	if x.raw {
		return e.attachRaw(name, in)
	}
	info, err := e.client.Sessions(e.ctx, name)
	if err != nil {
		return e.fail(err)
	}
	hist, err := e.client.History(e.ctx, name, 0)
	if err != nil {
		return e.fail(err)
	}
	state, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		e.errorf("cannot put the terminal in raw mode: %v", err)
		return ExitUsage
	}
	defer term.Restore(int(in.Fd()), state)

	keys := &keyWatch{r: in, ctrlC: make(chan struct{}, 1)}
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{keys, e.stdout}, name+"> ")
	width := 80
	if w, h, err := term.GetSize(int(in.Fd())); err == nil {
		t.SetSize(w, h)
		width = max(w, 1)
	}
	s := info[0]
	p := &entryPrinter{w: t, tty: true}
	a := &console{e: e, t: t, name: name, me: e.as("attach"), p: p, wake: make(chan struct{}, 1)}
	a.me.Conn = newConn()
	a.me.Quiet = true // the console shows the whole record anyway
	comp := &completer{a: a, runtime: s.Runtime}
	indent := ""
	keys.secret = a.secretAsked
	t.AutoCompleteCallback = func(line string, pos int, key rune) (string, int, bool) {
		if (key == keyHiddenBack || key == keyHiddenClear || key != indentKey && unicode.IsPrint(key)) && a.secretAsked() {
			// A question for a secret: what is typed is kept, not shown.
			a.secretKey(key)
			return line, pos, true
		}
		switch key {
		case indentKey:
			return line[:pos] + indent + line[pos:], pos + len(indent), true
		case keyTab:
			return comp.complete(line, pos)
		}
		if line == "" {
			// Typed ahead, before the indentation came: the line stands
			// as typed (pasted code brings its own).
			keys.armed = false
		}
		return "", 0, false
	}

	fmt.Fprintf(t, "Attached to session '%s' (%s, %s, cwd %s) as %s.\n", name, render.Runtime(s.Runtime, s.Version), render.Place(s), s.Cwd, api.Clip(a.me.Who, api.LabelLimit, "label"))
	fmt.Fprintf(t, "Enter runs a line; Tab completes a name; Ctrl-C interrupts the running cell; Ctrl-D or Ctrl-] detaches (the session keeps running).\n")
	recent := hist.Entries[max(0, len(hist.Entries)-5):]
	if n := len(hist.Entries) - len(recent); n > 0 {
		fmt.Fprintf(t, "[%s are not shown here; `polyrepl history %s` in another terminal lists them.]\n", render.Plural(n, "earlier entry"), name)
	}

	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	followErr := make(chan error, 1)
	go func() {
		// The recent entries come first, whole or, if still growing, as
		// they grow.
		from := hist.Next - 1
		if len(recent) > 0 {
			from = recent[0].Seq - 1
		}
		err := e.client.Follow(ctx, name, from, func(ev api.RecordEvent) error {
			a.print(ev)
			return nil
		})
		if err != nil && ctx.Err() == nil {
			// Said at once, not at the next line typed.
			fmt.Fprintf(t, "[The record stream ended: %s. Ctrl-D detaches.]\n", sentenceEnd(err.Error()))
		}
		followErr <- err
	}()

	go a.sender(ctx)
	go a.watch(ctx)
	var buf []string
	cleared := make(chan struct{}, 1)
	go func() {
		for {
			select {
			case <-keys.ctrlC:
			case <-ctx.Done():
				return
			}
			switch {
			case a.drop(): // Ctrl-C drops the typed lines waiting first
			case a.running():
				a.interrupt(ctx)
			default:
				select {
				case cleared <- struct{}{}:
				default:
				}
				a.setCont(false)
				fmt.Fprintln(t, "^C")
			}
		}
	}()
	for {
		line, err := t.ReadLine()
		keys.armed = false
		select {
		case <-cleared: // Ctrl-C dropped what was typed so far
			buf = buf[:0]
		default:
		}
		if errors.Is(err, io.EOF) {
			break // Ctrl-D on an empty line, or the detach key
		}
		if err != nil && !errors.Is(err, term.ErrPasteIndicator) {
			fmt.Fprintf(t, "[The terminal failed: %s.]\n", sentenceEnd(err.Error()))
			break
		}
		select {
		case <-followErr:
			return ExitFailed
		default:
		}
		if prompt, asked := a.asking(); asked {
			// The line answers the question the prompt showed.
			rows := (utf8.RuneCountInString(prompt)+utf8.RuneCountInString(line))/width + 1
			line += string(a.hidden)
			a.hidden = nil
			a.submit(line, rows)
			continue
		}
		a.hidden = nil // typed for a question that went meanwhile
		buf = append(buf, line)
		if continues(buf) {
			indent = indentAfter(buf)
			keys.armed = indent != ""
			a.setCont(true)
			continue
		}
		for len(buf) > 1 && strings.TrimSpace(buf[len(buf)-1]) == "" {
			buf = buf[:len(buf)-1] // the empty line that ended a block, perhaps indented
		}
		code := strings.Join(buf, "\n")
		buf = buf[:0]
		a.setCont(false)
		if strings.TrimSpace(code) == "" {
			continue
		}
		a.submit(code, 0)
	}
	cancel()
	select {
	case <-followErr: // nothing writes to the console after this
	case <-time.After(2 * time.Second):
	}
	// The line editor draws its prompt again after anything written
	// through it; the words go past it, on a line of their own, so the
	// shell's prompt starts on a fresh line.
	fmt.Fprintf(e.stdout, "\r\x1b[KDetached from session '%s'; it keeps running.\r\n", name)
	return ExitOK
}

// attachRaw joins the person's terminal to the runtime's, byte for byte,
// until they press the detach key or the runtime ends.
func (e *env) attachRaw(name string, in *os.File) int {
	me := e.as("attach")
	me.Conn = newConn()
	conn, err := e.client.Raw(e.ctx, name, me)
	if err != nil {
		return e.fail(err)
	}
	defer conn.Close()
	state, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		e.errorf("cannot put the terminal in raw mode: %v", err)
		return ExitUsage
	}
	defer term.Restore(int(in.Fd()), state)
	fmt.Fprintf(e.stdout, "Attached to the terminal of session '%s' as %s; Ctrl-] detaches (the session keeps running).\r\n", name, api.Clip(me.Who, api.LabelLimit, "label"))
	ended := make(chan struct{})
	go func() {
		// The terminal is in raw mode: a line feed alone would not
		// bring the cursor back to column 0.
		io.Copy(&crlf{w: e.stdout}, conn)
		close(ended)
	}()
	typed := make(chan struct{})
	go func() {
		defer close(typed)
		buf := make([]byte, 1024)
		for {
			n, err := in.Read(buf)
			if i := bytes.IndexByte(buf[:n], keyDetach); i >= 0 {
				conn.Write(buf[:i])
				return
			}
			if n > 0 {
				if _, werr := conn.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-typed:
		fmt.Fprintf(e.stdout, "\r\nDetached from the terminal of session '%s'; it keeps running.\r\n", name)
		return ExitOK
	case <-ended:
		fmt.Fprintf(e.stdout, "\r\nThe terminal of session '%s' closed: the session ended (`polyrepl history %s` says why).\r\n", name, name)
		return ExitFailed
	case <-e.ctx.Done():
		return ExitOK
	}
}

// crlf writes a runtime's output to a terminal in raw mode: each line
// feed not already after a carriage return gets one, so every line
// starts at column 0 (a runtime on pipes ends its lines with "\n"
// alone; one on a PTY already sends "\r\n").
type crlf struct {
	w   io.Writer
	cr  bool // the last byte written was '\r'
	out []byte
}

func (c *crlf) Write(p []byte) (int, error) {
	c.out = c.out[:0]
	for _, b := range p {
		if b == '\n' && !c.cr {
			c.out = append(c.out, '\r')
		}
		c.out = append(c.out, b)
		c.cr = b == '\r'
	}
	if _, err := c.w.Write(c.out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func cwd() string {
	d, _ := os.Getwd()
	return d
}

// newConn names one console, so two consoles with the same label each
// have their place in the record.
func newConn() string {
	var b [6]byte
	rand.Read(b[:])
	return "attach-" + hex.EncodeToString(b[:])
}
