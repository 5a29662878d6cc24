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
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
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
continues, and a block begun with ':' ends at an empty line. Up and down
recall earlier lines. Ctrl-C interrupts the running cell (or clears the
line); Ctrl-D on an empty line, or Ctrl-], detaches: the session keeps
running.

--raw, for a runtime hosted on a terminal (sh, lfortran), attaches to the
runtime's own terminal instead, as tmux would: every key goes to it
(Ctrl-C too), and what it prints comes back. What you type there is
recorded as output the session printed while no cell ran. Ctrl-] detaches.`,
		new: func() runner { return &attachCmd{} },
	})
}

// Keys the console watches for before the line editor sees them.
const (
	keyCtrlC  = 0x03
	keyCtrlU  = 0x15 // the line editor's "erase the line"
	keyDetach = 0x1d // Ctrl-]
)

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
	if w, h, err := term.GetSize(int(in.Fd())); err == nil {
		t.SetSize(w, h)
	}
	a := &console{e: e, t: t, name: name, me: e.as("attach"), queue: make(chan string, 16)}
	a.me.Conn = newConn()
	a.me.Quiet = true // the console shows the whole record anyway

	s := info[0]
	fmt.Fprintf(t, "Attached to session '%s' (%s, %s, cwd %s) as %s.\n", name, render.Runtime(s.Runtime, s.Version), render.Place(s), s.Cwd, api.Clip(a.me.Who, api.LabelLimit, "label"))
	fmt.Fprintf(t, "Enter runs a line; Ctrl-C interrupts the running cell; Ctrl-D or Ctrl-] detaches (the session keeps running).\n")
	p := &entryPrinter{w: t, tty: true}
	recent := hist.Entries[max(0, len(hist.Entries)-5):]
	if n := len(hist.Entries) - len(recent); n > 0 {
		fmt.Fprintf(t, "[%d earlier entries: `polyrepl history %s`]\n", n, name)
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
			if ev.Entry != nil {
				a.seen(*ev.Entry)
			}
			p.event(ev)
			return nil
		})
		if err != nil && ctx.Err() == nil {
			// Said at once, not at the next line typed.
			fmt.Fprintf(t, "[the record stream ended: %v; Ctrl-D detaches]\n", err)
		}
		followErr <- err
	}()

	go a.sender(ctx)
	var buf []string
	cleared := make(chan struct{}, 1)
	go func() {
		for {
			select {
			case <-keys.ctrlC:
			case <-ctx.Done():
				return
			}
			if a.running() {
				a.interrupt(ctx)
			} else {
				select {
				case cleared <- struct{}{}:
				default:
				}
				t.SetPrompt(name + "> ")
				fmt.Fprintln(t, "^C")
			}
		}
	}()
	for {
		line, err := t.ReadLine()
		select {
		case <-cleared: // Ctrl-C dropped what was typed so far
			buf = buf[:0]
		default:
		}
		if errors.Is(err, io.EOF) {
			break // Ctrl-D on an empty line, or the detach key
		}
		if err != nil && !errors.Is(err, term.ErrPasteIndicator) {
			fmt.Fprintf(t, "[the terminal failed: %v]\n", err)
			break
		}
		select {
		case <-followErr:
			return ExitFailed
		default:
		}
		buf = append(buf, line)
		if continues(buf) {
			t.SetPrompt(strings.Repeat(".", len(name)) + "> ")
			continue
		}
		code := strings.Join(buf, "\n")
		buf = buf[:0]
		t.SetPrompt(name + "> ")
		if strings.TrimSpace(code) == "" {
			continue
		}
		a.send(code)
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

// console is one attach session.
type console struct {
	e    *env
	t    *term.Terminal
	name string
	me   api.Client

	mu   sync.Mutex
	live map[int]bool // cells seen running, by seq
	// sending counts typed cells sent and not yet answered: Ctrl-C stops
	// the person's own cell even before the record has shown it running.
	sending int

	queue chan string // typed cells, sent in order
}

// seen keeps track of which cells run, for Ctrl-C.
func (a *console) seen(en api.Entry) {
	if en.Kind != api.EntryCell {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.live == nil {
		a.live = map[int]bool{}
	}
	if en.Status == api.StatusRunning {
		a.live[en.Seq] = true
	} else {
		delete(a.live, en.Seq)
	}
}

func (a *console) running() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.live) > 0 || a.sending > 0
}

// send queues a typed cell. Cells are sent one after another, in the
// order typed, as a terminal's type-ahead would run them.
func (a *console) send(code string) {
	select {
	case a.queue <- code:
	default:
		fmt.Fprintf(a.t, "[not run: %d typed cells are already waiting]\n", cap(a.queue))
	}
}

// sender runs the typed cells; what they print and return comes through
// the record.
func (a *console) sender(ctx context.Context) {
	asking := false // the session's cell waits for input: the next line typed answers it
	for {
		var code string
		select {
		case code = <-a.queue:
		case <-ctx.Done():
			return
		}
		a.mu.Lock()
		a.sending++
		a.mu.Unlock()
		var r api.CellResult
		var err error
		if asking {
			r, err = a.e.client.Input(ctx, a.name, api.InputRequest{Text: code, Timeout: api.Seconds(api.MaxTimeout.Seconds()), Client: a.me})
		} else {
			r, err = a.e.client.Exec(ctx, a.name, api.ExecRequest{Code: code, Timeout: api.Seconds(api.MaxTimeout.Seconds()), Client: a.me,
				Spawn: api.Spawn{Cwd: cwd(), Env: os.Environ()}})
		}
		a.mu.Lock()
		a.sending--
		a.mu.Unlock()
		asking = false
		var ae *client.APIError
		switch {
		case err == nil && r.Status == api.StatusInput && r.Prompt != nil:
			asking = true
			fmt.Fprintf(a.t, "[cell %d asks %q: the next line you type answers it]\n", r.Cell, r.Prompt.Text)
		case errors.As(err, &ae) && ae.Code == api.CodeInput:
			// Someone's cell asks: what was typed was not run, and the
			// next line answers the question.
			asking = true
			fmt.Fprintf(a.t, "[not run: %s; the next line you type answers it]\n", render.Refusal(ae.ErrorReply))
		case err == nil, ctx.Err() != nil:
		case errors.As(err, &ae):
			msg := render.Refusal(ae.ErrorReply)
			if hint := render.Hint(ae.ErrorReply, render.People); hint != "" {
				msg += " (" + hint + ")"
			}
			fmt.Fprintf(a.t, "[not run: %s]\n", msg)
		default:
			fmt.Fprintf(a.t, "[not run: %v]\n", err)
		}
	}
}

func (a *console) interrupt(ctx context.Context) {
	go func() {
		if _, err := a.e.client.Interrupt(ctx, a.name, api.ControlRequest{Client: a.me}); err != nil && ctx.Err() == nil {
			fmt.Fprintf(a.t, "[interrupt failed: %v]\n", err)
		}
	}()
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

// keyWatch takes Ctrl-C and the detach key on their way to the line
// editor: Ctrl-C is told on ctrlC and erases the line being typed; the
// detach key ends input as Ctrl-D does on an empty line.
type keyWatch struct {
	r     io.Reader
	ctrlC chan struct{}
}

func (k *keyWatch) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	for i := 0; i < n; i++ {
		switch p[i] {
		case keyCtrlC:
			select {
			case k.ctrlC <- struct{}{}:
			default:
			}
			p[i] = keyCtrlU
		case keyDetach:
			p[i] = keyCtrlC // the line editor ends input on it
		}
	}
	return n, err
}

// continues reports whether the lines typed so far are an unfinished
// cell: a line ending in '\' or ':', open brackets, or a block begun with
// ':' not yet closed by an empty line.
func continues(lines []string) bool {
	last := strings.TrimRight(lines[len(lines)-1], " \t")
	if strings.HasSuffix(last, "\\") || strings.HasSuffix(last, ":") {
		return true
	}
	depth := 0
	for _, l := range lines {
		for _, r := range l {
			switch r {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth--
			}
		}
	}
	if depth > 0 {
		return true
	}
	if len(lines) > 1 && last != "" {
		// Inside a block begun with ':' (Python): an empty line ends it.
		for _, l := range lines[:len(lines)-1] {
			if strings.HasSuffix(strings.TrimRight(l, " \t"), ":") {
				return true
			}
		}
	}
	return false
}
