package cli

import (
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	pmcp "github.com/polyrepl/polyrepl/internal/mcp"
)

func init() {
	register(&command{
		name:    "mcp",
		usage:   "mcp",
		summary: "serve the MCP tools over stdio, for agents",
		help: `Runs polyrepl's MCP server on standard input and output, for an MCP
client such as Claude Code, Cursor or Codex to launch. Its tools — exec,
wait, interrupt, restart, kill, sessions — reach the same daemon and the
same sessions as the command line. New sessions start in the directory the
server was launched in, with its environment. Logs go to standard error.`,
		run: runMCP,
	})
}

func runMCP(e *env, args []string) int {
	c := lookup("mcp")
	pos, code, ok := e.parseOrHelp(c, flags("mcp"), args)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		return e.usageError(c, "mcp takes no arguments")
	}
	out, err := protocolStdout()
	if err != nil {
		e.errorf("%v", err)
		return ExitFailed
	}
	log.SetOutput(os.Stderr)
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "/"
	}
	srv := pmcp.New(e.client, cwd, os.Environ())
	if err := srv.Run(e.ctx, &mcp.IOTransport{Reader: os.Stdin, Writer: out}); err != nil && e.ctx.Err() == nil {
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
