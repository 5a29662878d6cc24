// Package cli is polyrepl's command line: one file per subcommand, all of
// them talking to the daemon through the client package. It owns the exit
// statuses and how results are printed for people and scripts.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
	"github.com/polyrepl/polyrepl/internal/holder"
	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/render"
	"github.com/polyrepl/polyrepl/internal/sandbox"
	"github.com/polyrepl/polyrepl/internal/version"
)

// Exit statuses, the same for every subcommand.
const (
	ExitOK      = 0   // the cell finished (or the command did its job)
	ExitFailed  = 1   // the cell raised, or the session died
	ExitUsage   = 2   // usage, bad input, refusal, or no daemon to talk to
	ExitInput   = 3   // the cell waits for input: polyrepl input answers it
	ExitTimeout = 124 // the timeout passed while the cell still runs
)

// command is one subcommand. Its synopsis and the flags in its help are
// generated from the flags its runner declares.
type command struct {
	name    string
	args    string // the positional arguments in the synopsis: "NAME CODE|-"
	summary string // one line, for `polyrepl help`
	help    string // longer text for `polyrepl help CMD`
	new     func() runner
	// more, if set, writes what help tells beyond the text above.
	more func(w io.Writer)
}

// env is what a subcommand runs with: its streams and its client.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	ctx            context.Context
	client         *client.Client
	label          string   // from --label, else client.Label
	cmd            *command // the command running
	// json is set when the command was given --json: its refusals and
	// errors are then one JSON object on stdout too.
	json bool
}

var commands []*command

func register(c *command) { commands = append(commands, c) }

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// Main runs the command line and returns the exit status.
func Main(args []string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer cancelOnSignal(ctx, cancel)()
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, ctx: ctx, client: client.New()}
	// Said once per command (and once per MCP server, on its standard
	// error, which its client logs): the daemon was reached elsewhere.
	e.client.Elsewhere = func(n api.Note) { fmt.Fprintf(e.stderr, "polyrepl: %s\n", render.Note(n, render.People)) }
	return e.main(args)
}

// signalsAfter is how long a command runs before Ctrl-C and SIGTERM
// become a cancelled call (which then says what happened to the cell).
// Taking the signals costs a thread and about a millisecond at start,
// more than the rest of a trivial exec's own work: a command that ends
// sooner never pays it, and a signal in that first moment ends the
// process as it ends any program (a running cell goes on all the same).
const signalsAfter = 50 * time.Millisecond

// cancelOnSignal cancels ctx on SIGINT or SIGTERM once the command has
// run for signalsAfter; the returned function lets go of the signals.
func cancelOnSignal(ctx context.Context, cancel context.CancelFunc) (release func()) {
	var mu sync.Mutex
	var sigs chan os.Signal
	done := false
	t := time.AfterFunc(signalsAfter, func() {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		sigs = make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		go func() {
			select {
			case <-sigs:
				cancel()
			case <-ctx.Done():
			}
		}()
	})
	return func() {
		t.Stop()
		mu.Lock()
		defer mu.Unlock()
		done = true
		if sigs != nil {
			signal.Stop(sigs)
		}
	}
}

func (e *env) main(args []string) int {
	if len(args) == 0 {
		printUsage(e.stderr)
		return ExitUsage
	}
	switch args[0] {
	case "--version", "-version", "version", "-v", "-V":
		fmt.Fprintf(e.stdout, "polyrepl %s\n", version.Version)
		return ExitOK
	case "-h", "--help", "-help":
		printUsage(e.stdout)
		return ExitOK
	case holder.Command:
		// Hidden: the daemon starts one per session.
		return holder.Main()
	case sandbox.Command:
		// Hidden: a holder starts a sandboxed runtime through it.
		return sandbox.Main(args[1:])
	}
	args = e.takeLabel(args)
	c := lookup(args[0])
	if c == nil {
		e.errorf("unknown command %q", args[0])
		e.hintf("`polyrepl help` lists the commands")
		return ExitUsage
	}
	return e.runCommand(c, args[1:])
}

func (e *env) errorf(format string, a ...any) {
	fmt.Fprintf(e.stderr, "polyrepl: error: "+format+"\n", a...)
}

func (e *env) hintf(format string, a ...any) {
	fmt.Fprintf(e.stderr, "polyrepl: hint: "+format+"\n", a...)
}

// fail reports an error from the client and returns the exit status it
// calls for.
func (e *env) fail(err error) int {
	var ae *client.APIError
	var ce *client.ConnError
	var fe *client.InFlightError
	if e.json {
		return e.failJSON(err)
	}
	switch {
	case errors.As(err, &ae):
		e.errorf("%s", render.Refusal(ae.ErrorReply))
		if hint := render.Hint(ae.ErrorReply, render.People); hint != "" {
			e.hintf("%s", hint)
		}
		e.versionWarning()
		if ae.Code == api.CodeDead || ae.Code == api.CodeNoLook {
			return ExitFailed
		}
		return ExitUsage
	case errors.Is(err, paths.ErrUnsafe):
		e.errorf("%v", err)
		return ExitUsage
	case errors.As(err, &fe):
		msg, hint := render.InFlight(fe.Op, fe.Session, fe.Err, render.People)
		e.errorf("%s", msg)
		e.hintf("%s", hint)
		return ExitUsage
	case errors.As(err, &ce):
		e.errorf("cannot reach the polyrepl daemon: %v", ce.Err)
		e.hintf("see the daemon log %s, or run `polyrepl daemon` to see it fail in the foreground", e.client.LogPath())
		return ExitUsage
	case errors.Is(err, context.Canceled):
		e.errorf("interrupted; the cell (if any) goes on: `polyrepl wait` collects it")
		return ExitUsage
	default:
		e.errorf("%v", err)
		return ExitUsage
	}
}

// failJSON reports err as one api.ErrorReply on stdout, its words as
// the text output would have them, with the same exit status.
func (e *env) failJSON(err error) int {
	var ae *client.APIError
	var ce *client.ConnError
	var fe *client.InFlightError
	body := api.ErrorReply{Error: err.Error(), Code: api.CodeInternal}
	status := ExitUsage
	switch {
	case errors.As(err, &ae):
		body = ae.ErrorReply
		body.Error, body.Hint = render.Refusal(ae.ErrorReply), render.Hint(ae.ErrorReply, render.People)
		if ae.Code == api.CodeDead || ae.Code == api.CodeNoLook {
			status = ExitFailed
		}
	case errors.Is(err, paths.ErrUnsafe):
		body = api.ErrorReply{Error: err.Error(), Code: api.CodeUnreachable}
	case errors.As(err, &fe):
		msg, hint := render.InFlight(fe.Op, fe.Session, fe.Err, render.People)
		body = api.ErrorReply{Error: msg, Hint: hint, Code: api.CodeInFlight,
			Next: []api.Action{{Do: api.DoSessions, Session: fe.Session}, {Do: api.DoWait, Session: fe.Session}}}
	case errors.As(err, &ce):
		body = api.ErrorReply{Error: "cannot reach the polyrepl daemon: " + ce.Err.Error(), Code: api.CodeUnreachable,
			Hint: fmt.Sprintf("see the daemon log %s, or run `polyrepl daemon` to see it fail in the foreground", e.client.LogPath())}
	}
	printJSON(e.stdout, body)
	return status
}

// versionWarning brings the daemon to this client's version when it runs
// an older one that can keep its sessions (and says so in one line), or
// warns that the versions differ.
func (e *env) versionWarning() {
	n := e.client.Upgrade(e.ctx)
	switch {
	case n == nil:
	case n.Kind == api.NoteUpgraded:
		fmt.Fprintf(e.stderr, "polyrepl: %s\n", render.Note(*n, render.People))
	default:
		fmt.Fprintf(e.stderr, "polyrepl: warning: %s\n", render.Note(*n, render.People))
	}
}

// flags builds a subcommand's flag set, quiet so errors are ours to print.
func flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses flags wherever they appear among the positional
// arguments (`exec NAME CODE -t 5` as well as `exec -t 5 NAME CODE`).
// "--" ends the flags; "-" alone is positional (standard input).
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...), nil
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			pos = append(pos, a)
			continue
		}
		name := strings.TrimLeft(a, "-")
		if k := strings.IndexByte(name, '='); k >= 0 {
			name = name[:k]
		}
		f := fs.Lookup(name)
		if f == nil {
			if short, ok := attachedValue(fs, a); ok {
				a, name, f = a[:2]+"="+a[2:], short, fs.Lookup(short)
			}
		}
		if f == nil {
			if name == "h" || name == "help" {
				return nil, flag.ErrHelp
			}
			return nil, &unknownFlag{a}
		}
		chunk := []string{a}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); !(ok && bf.IsBoolFlag()) && !strings.Contains(a, "=") {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag %s needs a value", a)
			}
			chunk = append(chunk, args[i+1])
			i++
		}
		if err := fs.Parse(chunk); err != nil {
			// Go's flag package words it "invalid value V for flag -F: why";
			// the why is ours and says it all.
			msg := err.Error()
			if _, why, ok := strings.Cut(msg, fmt.Sprintf(" for flag -%s: ", f.Name)); ok && strings.HasPrefix(msg, "invalid value ") {
				msg = why
			}
			return nil, fmt.Errorf("bad value for %s: %s", strings.SplitN(a, "=", 2)[0], msg)
		}
	}
	return pos, nil
}

// unknownFlag is a flag no command declares.
type unknownFlag struct{ flag string }

func (u *unknownFlag) Error() string { return "unknown flag " + u.flag }

// usageError prints a usage problem with the command's synopsis.
func (e *env) usageError(c *command, format string, a ...any) int {
	if e.json {
		printJSON(e.stdout, api.ErrorReply{Error: fmt.Sprintf(format, a...), Code: api.CodeUsage, Hint: "usage: polyrepl " + c.usage()})
		return ExitUsage
	}
	e.errorf(format, a...)
	e.hintf("usage: polyrepl %s", c.usage())
	return ExitUsage
}

// secondsFlag is a timeout in seconds, checked when parsed; v is nil
// until the flag is given, so that -t 0 (answer at once) differs from
// no -t (the default).
type secondsFlag struct{ v *float64 }

func (s *secondsFlag) String() string {
	if s.v == nil {
		return ""
	}
	return strconv.FormatFloat(*s.v, 'g', -1, 64)
}

func (s *secondsFlag) Set(v string) error {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 600 || f != f {
		return fmt.Errorf("the timeout must be a number of seconds from 0 (answer at once, the cell going on) to 600, not %q", v)
	}
	s.v = &f
	return nil
}

// takeLabel removes --label NAME (anywhere before a "--") from args, to
// name who sends this command's requests.
func (e *env) takeLabel(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i:]...)
		case (a == "--label" || a == "-label") && i+1 < len(args):
			e.label = args[i+1]
			i++
		case strings.HasPrefix(a, "--label="):
			e.label = strings.TrimPrefix(a, "--label=")
		default:
			out = append(out, a)
		}
	}
	return out
}

// me is this command line as a client of the daemon: its label, and
// whether it wants to hear other clients' activity ($POLYREPL_ACTIVITY).
func (e *env) me() api.Client {
	return e.as("cli")
}

// as is this command line as a client coming through how.
func (e *env) as(how string) api.Client {
	who := e.label
	if who == "" {
		who = client.Label(os.Getenv)
	}
	return api.Client{Who: who, How: how, Quiet: activityOff()}
}

// activityOff reports whether $POLYREPL_ACTIVITY turns off being told
// what other clients did.
func activityOff() bool {
	switch strings.ToLower(os.Getenv("POLYREPL_ACTIVITY")) {
	case "off", "0", "no", "false":
		return true
	}
	return false
}
