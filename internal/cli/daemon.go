package cli

import (
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
	"github.com/polyrepl/polyrepl/internal/daemon"
	"github.com/polyrepl/polyrepl/internal/limit"
	"github.com/polyrepl/polyrepl/internal/render"
)

func init() {
	register(&command{
		name:    "daemon",
		summary: "run the daemon in the foreground (for debugging and service managers)",
		help: `Runs the daemon in the foreground, logging to standard error, until
` + "`polyrepl stop`" + `. SIGTERM, SIGINT or SIGHUP end the daemon alone: its sessions
go on in their holders, and the next daemon takes them up. Clients
normally start it by themselves, detached, logging to daemon.log beside
the socket.

One daemon keeps a state directory: while one runs, another refuses to
start on it (exit status 2), naming the one that runs and its socket.
A client whose own socket path has no daemon (its XDG_RUNTIME_DIR points
elsewhere) reaches the one the state directory names.

` + memoryTotalHelp,
		new: func() runner { return &daemonCmd{} },
	})
	register(&command{
		name:    "start",
		summary: "start the daemon if it is not running",
		help: `Starts the daemon, detached, unless one is running, and says which.

` + memoryTotalHelp + `

A daemon already running keeps the cap it started with: start refuses
another (exit status 2); ` + "`polyrepl stop`" + ` first.`,
		new: func() runner { return &startCmd{} },
	})
	register(&command{
		name:    "stop",
		summary: "end the daemon and every session, saying which",
		help: `Ends every session — its holder, its runtime and the runtime's whole
process tree, checked — and then the daemon, and lists what ended.

With --keep-sessions only the daemon ends: each session goes on in its
holder, the small process that keeps its runtime, and the next command
starts a daemon that takes every one up (same pid, namespace and record;
a cell running goes on and is collected by wait). A client of a newer
polyrepl does this by itself when it finds an older daemon, and says so.`,
		new: func() runner { return &stopCmd{} },
	})
	register(&command{
		name:    "status",
		summary: "the daemon's pid, version, socket and number of sessions",
		help: `Prints the daemon's pid, version, uptime, socket, log and state directory,
how memory limits are held, and the cap on all sessions together if the
daemon has one: its size, whether it is enforced (by what, or why not),
what the sessions use together now, and any session it does not hold.
It starts no daemon.

Exit status: 0 a daemon is running, 1 none is (with --json, an object
whose code is "unreachable").`,
		new: withJSON("print the status as JSON", runStatus),
	})
}

// memoryTotalHelp is what daemon and start say of --memory-total.
const memoryTotalHelp = `--memory-total SIZE caps the memory of all sessions together (as
$POLYREPL_MEMORY_TOTAL does, which a daemon a client starts by itself
takes from the client's environment): every session's cgroup goes under
one group whose limit is SIZE, and past it the kernel kills a session's
process, reported as killed for the cap. Where no cgroup can hold it
(no cgroup delegated to the daemon, macOS), the cap is not enforced, and
the daemon's start line and ` + "`polyrepl status`" + ` say so and why.`

// memoryTotal is the --memory-total flag of daemon and start.
type memoryTotal struct{ size string }

func (m *memoryTotal) flag(fs *flagSet) {
	fs.String(&m.size, "memory-total", "SIZE", "", "cap the memory of all sessions together, e.g. 3G (default $"+daemon.MemoryTotalVar+"; where cgroups allow)")
}

// set checks the size and gives it to the daemon about to start, through
// its environment; it returns the cap in bytes (0: none given).
func (m *memoryTotal) set() (int64, error) {
	if m.size == "" {
		return 0, nil
	}
	n, err := limit.Parse(m.size)
	if err != nil {
		return 0, fmt.Errorf("--memory-total: %w", err)
	}
	os.Setenv(daemon.MemoryTotalVar, m.size)
	return n, nil
}

// daemonCmd is `polyrepl daemon`.
type daemonCmd struct{ total memoryTotal }

func (d *daemonCmd) flags(fs *flagSet) { d.total.flag(fs) }

func (d *daemonCmd) run(e *env, pos []string) int {
	c := e.cmd
	if len(pos) != 0 {
		return e.usageError(c, "daemon takes no arguments")
	}
	if _, err := d.total.set(); err != nil {
		return e.usageError(c, "%v", err)
	}
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix(fmt.Sprintf("polyrepl[%d] ", os.Getpid()))
	err := daemon.Run()
	if errors.Is(err, daemon.ErrRunning) {
		// A refusal, not a failure: the client that started this one
		// (having lost a race to another) reaches the one that runs,
		// and tells this exit status from a failure's.
		e.errorf("%v", err)
		return ExitUsage
	}
	if err != nil {
		e.errorf("%v", err)
		return ExitFailed
	}
	return ExitOK
}

// startCmd is `polyrepl start`.
type startCmd struct{ total memoryTotal }

func (s *startCmd) flags(fs *flagSet) { s.total.flag(fs) }

func (s *startCmd) run(e *env, pos []string) int {
	c := e.cmd
	if len(pos) != 0 {
		return e.usageError(c, "start takes no arguments")
	}
	want, err := s.total.set()
	if err != nil {
		return e.usageError(c, "%v", err)
	}
	st, started, err := e.client.Start(e.ctx)
	if err != nil {
		return e.fail(err)
	}
	if started {
		fmt.Fprintf(e.stdout, "Started the daemon (pid %d, polyrepl %s) on %s.\n", st.PID, st.Version, st.Socket)
	} else {
		fmt.Fprintf(e.stdout, "The daemon is already running (pid %d, polyrepl %s, %s).\n", st.PID, st.Version, render.Plural(st.Sessions, "session"))
	}
	if st.MemoryCap != nil {
		fmt.Fprintf(e.stdout, "Memory cap: %s.\n", render.MemoryCap(st.MemoryCap))
	}
	e.versionWarning()
	if have := capBytes(st.MemoryCap); !started && want > 0 && have != want {
		was := "no memory cap"
		if have > 0 {
			was = "a memory cap of " + limit.Size(have)
		}
		e.errorf("the daemon already runs with %s; --memory-total %s takes effect when a daemon starts", was, s.total.size)
		e.hintf("`polyrepl stop` ends it and its sessions; then `polyrepl start --memory-total %s`", s.total.size)
		return ExitUsage
	}
	return ExitOK
}

func capBytes(c *api.MemoryCap) int64 {
	if c == nil {
		return 0
	}
	return c.Bytes
}

// stopCmd is `polyrepl stop`.
type stopCmd struct{ keep bool }

func (c *stopCmd) flags(fs *flagSet) {
	fs.Bool(&c.keep, "keep-sessions", "end only the daemon: the sessions go on in their holders, for the next daemon to take up")
}

func (c *stopCmd) run(e *env, pos []string) int {
	if len(pos) != 0 {
		return e.usageError(e.cmd, "stop takes no arguments")
	}
	r, err := e.client.Stop(e.ctx, c.keep)
	var ce *client.ConnError
	if errors.As(err, &ce) && isNoDaemon(err) {
		fmt.Fprintln(e.stdout, "No daemon was running.")
		return ExitOK
	}
	if err != nil {
		return e.fail(err)
	}
	// Wait until the old daemon has exited and let go of its lock, so the
	// next command starts a new one instead of finding the old one leaving.
	for i := 0; i < 500 && !e.client.Gone(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if c.keep {
		if len(r.Kept) == 0 {
			fmt.Fprintf(e.stdout, "Stopped the daemon (pid %d); no sessions were running.\n", r.PID)
			return ExitOK
		}
		var names []string
		for _, s := range r.Kept {
			names = append(names, s.Name)
		}
		fmt.Fprintf(e.stdout, "Stopped the daemon (pid %d); its %s go on in their holders: %s. The next command starts a daemon that takes them up.\n",
			r.PID, render.Plural(len(r.Kept), "session"), strings.Join(names, ", "))
		return ExitOK
	}
	if len(r.Ended) == 0 {
		fmt.Fprintf(e.stdout, "Stopped the daemon (pid %d); no sessions were running.\n", r.PID)
		return ExitOK
	}
	fmt.Fprintf(e.stdout, "Stopped the daemon (pid %d); ended %s:\n", r.PID, render.Plural(len(r.Ended), "session"))
	for _, s := range r.Ended {
		line := fmt.Sprintf("  %s (%s, %s, %s)", s.Name, render.Runtime(s.Runtime, s.Version), render.Place(s), render.Plural(s.Cells, "cell"))
		if len(s.Names) > 0 {
			line += " — names lost: " + render.Names(s.Names)
		}
		fmt.Fprintln(e.stdout, line)
	}
	return ExitOK
}

func runStatus(e *env, pos []string, asJSON bool) int {
	c := e.cmd
	if len(pos) != 0 {
		return e.usageError(c, "status takes no arguments")
	}
	st, err := e.client.Status(e.ctx)
	if err != nil && isNoDaemon(err) {
		// An answer, not a failure to reach one: exit 1, as the
		// exit-status table has it for status.
		if asJSON {
			printJSON(e.stdout, api.ErrorReply{Error: "no daemon is running (socket " + e.client.Socket + ", state directory " + e.client.StateDir + ")", Hint: "the next command starts one", Code: api.CodeUnreachable})
			return ExitFailed
		}
		fmt.Fprintf(e.stdout, "No daemon is running (socket %s, state directory %s); the next command starts one.\n", e.client.Socket, e.client.StateDir)
		return ExitFailed
	}
	if err != nil {
		return e.fail(err)
	}
	if asJSON {
		printJSON(e.stdout, st)
	} else {
		socket := st.Socket
		if st.Socket != e.client.Socket {
			// Reached through the state directory (the note on stderr
			// says so too).
			socket += fmt.Sprintf(" (found through the state directory; this environment would look at %s)", e.client.Socket)
		}
		fmt.Fprintf(e.stdout, "polyrepl daemon pid %d, version %s, up %s, %s\nsocket: %s\nlog:    %s\nstate:  %s\n",
			st.PID, st.Version, render.Ago(time.Since(st.Started)), render.Plural(st.Sessions, "session"), socket, st.Log, st.StateDir)
		if st.Memory != "" {
			fmt.Fprintf(e.stdout, "memory: %s\n", st.Memory)
		}
		if st.MemoryCap != nil {
			fmt.Fprintf(e.stdout, "cap:    %s\n", render.MemoryCap(st.MemoryCap))
		}
	}
	e.versionWarning()
	return ExitOK
}
