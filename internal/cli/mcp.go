package cli

import (
	"fmt"
	"io"
	"log"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/api"
	pmcp "github.com/polyrepl/polyrepl/internal/mcp"
)

func init() {
	register(&command{
		name:    "mcp",
		summary: "serve the MCP tools over stdio, for agents",
		help: `Runs polyrepl's MCP server on standard input and output, for an MCP
client such as Claude Code, Cursor or Codex to launch. Its tools, below,
reach the same daemon and the same sessions as the command line. New
sessions start in the directory the server was launched in, with its
environment. Logs go to standard error.

--max-wait SECS caps how long any call waits before it answers: a cell
still running then goes on, as after its timeout, and the wait tool
collects it. Set it below your client's own limit on a tool call (60 s
in many clients); polyrepl setup CLIENT does.

--max-output N is how many characters of a cell's output a reply keeps
inline, head and tail (default 8,000; a value keeps half as many); the
whole of what is cut is saved to a file the reply names. The command line
keeps 30,000 for people.

--sandbox POLICY (read-only, workspace-write or full; default
$POLYREPL_SANDBOX, else full) is both the policy of every session the
server creates and the most any call through it may reach: a model's
exec may ask for a narrower one ("sandbox", "network") but never a wider,
and the server sees and reaches only sessions within it. workspace-write
means the server's directory (and --writable DIRs); --network, --readable
and --writable shape it as for exec. polyrepl setup CLIENT --sandbox
POLICY writes these flags into the client's registration.`,
		more: printTools,
		new:  func() runner { return &mcpCmd{} },
	})
}

type mcpCmd struct {
	maxWait   secondsFlag
	maxOutput int
	sandbox   sandboxFlags
}

func (m *mcpCmd) flags(fs *flagSet) {
	fs.Var(&m.maxWait, "max-wait", "SECS", "answer every call within SECS seconds; a cell still running goes on (default: each call's own timeout)")
	fs.Int(&m.maxOutput, "max-output", "N", "characters of output a reply keeps inline, head and tail (default 8000; values half)")
	m.sandbox.declare(fs, "every session the server creates, and the most a call may reach", "that sandbox")
}

func (m *mcpCmd) run(e *env, pos []string) int {
	c := e.cmd
	if len(pos) != 0 {
		return e.usageError(c, "mcp takes no arguments")
	}
	if m.maxWait.v != nil && *m.maxWait.v == 0 {
		return e.usageError(c, "--max-wait 0 would answer every call before its cell could run: give seconds above 0, below your client's limit on a tool call")
	}
	if m.maxOutput != 0 && (m.maxOutput < 1000 || m.maxOutput > api.OutputLimit) {
		return e.usageError(c, "--max-output %d: give between 1000 and %d characters", m.maxOutput, api.OutputLimit)
	}
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "/"
	}
	sb, err := m.sandbox.build(os.Getenv, cwd)
	if err != nil {
		return e.usageError(c, "%v", err)
	}
	out, err := protocolStdout()
	if err != nil {
		e.errorf("%v", err)
		return ExitFailed
	}
	log.SetOutput(os.Stderr)
	if os.Getenv("GOMAXPROCS") == "" {
		// The server passes one client's calls on to the daemon: one
		// processor is all it uses, and idle ones only cost wake-ups at
		// every hand-off (~80 µs of its CPU a call on 2 cores, issue 21).
		runtime.GOMAXPROCS(1)
	}
	srv := pmcp.New(e.client, cwd, os.Environ())
	if sb != nil {
		srv.Confine(*sb)
	}
	if m.maxWait.v != nil {
		srv.MaxWait = *m.maxWait.v
	}
	if m.maxOutput != 0 {
		srv.MaxOutput = m.maxOutput
	}
	if err := srv.Run(e.ctx, pmcp.Stdio(os.Stdin, out)); err != nil && e.ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "polyrepl mcp: %v\n", err)
		return ExitFailed
	}
	return ExitOK
}

// protocolStdout keeps standard output for JSON-RPC alone: it moves the
// real stdout to a private descriptor for the protocol and points fd 1 at
// stderr, so that nothing printed by accident can corrupt the stream.
func protocolStdout() (*os.File, error) {
	fd, err := unix.Dup(1)
	if err != nil {
		return nil, fmt.Errorf("cannot set up standard output for MCP: %w", err)
	}
	unix.CloseOnExec(fd)
	if err := unix.Dup2(2, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("cannot set up standard output for MCP: %w", err)
	}
	os.Stdout = os.Stderr
	return os.NewFile(uintptr(fd), "mcp-stdout"), nil
}

// printTools lists the MCP server's tools, named by the server itself.
func printTools(w io.Writer) {
	fmt.Fprint(w, "\nTools:\n")
	for _, t := range pmcp.Tools() {
		fmt.Fprintf(w, "  %s\n%s", t.Name, wrap(t.Description, "      ", 78))
	}
}

// wrap breaks text into lines of at most width columns, each indented.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if line != indent && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
	return b.String()
}
