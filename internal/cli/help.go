package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/polyrepl/polyrepl/internal/client"
)

func init() {
	register(&command{
		name:    "help",
		usage:   "help [CMD]",
		summary: "show help for polyrepl or one command",
		run:     runHelp,
	})
}

func runHelp(e *env, args []string) int {
	if len(args) == 0 {
		printUsage(e.stdout)
		return ExitOK
	}
	c := lookup(args[0])
	if c == nil {
		e.errorf("unknown command %q", args[0])
		e.hintf("`polyrepl help` lists the commands")
		return ExitUsage
	}
	printHelp(e.stdout, c)
	return ExitOK
}

// order is how the commands are listed: the everyday ones first.
var order = []string{"exec", "wait", "interrupt", "restart", "kill", "sessions", "runtimes", "mcp", "start", "stop", "status", "daemon", "help"}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `polyrepl: named, persistent REPL sessions for agents and people.

Usage: polyrepl COMMAND [ARGS]

Commands:
`)
	for _, name := range order {
		if c := lookup(name); c != nil {
			fmt.Fprintf(w, "  %s\n      %s\n", c.usage, c.summary)
		}
	}
	fmt.Fprint(w, `  --version
      print the version

Examples:
  polyrepl exec chirp 'import json; data = json.load(open("big.json"))'
  polyrepl exec chirp 'len(data)'
  echo 'print(sorted(data)[:5])' | polyrepl exec chirp -

`+"`polyrepl help CMD`"+` explains a command.
`)
}

func printHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "Usage: polyrepl %s\n\n%s.\n", c.usage, strings.ToUpper(c.summary[:1])+c.summary[1:])
	if c.help != "" {
		fmt.Fprintf(w, "\n%s\n", c.help)
	}
}

func isNoDaemon(err error) bool {
	return client.IsNotRunning(err)
}
