package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/polyrepl/polyrepl/internal/client"
)

func init() {
	register(&command{
		name:    "help",
		args:    "[CMD]",
		summary: "show help for polyrepl or one command",
		new:     func() runner { return plain(runHelp) },
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

// order is how the commands are listed: the everyday ones first. A
// command missing from it is listed after them all the same.
var order = []string{"exec", "wait", "interrupt", "restart", "kill", "fork", "checkpoint", "rollback", "sessions", "vars", "history", "log", "export", "attach", "view", "runtimes", "mcp", "setup", "start", "stop", "status", "daemon", "help"}

// listed returns every command in the order help lists them.
func listed() []*command {
	cs := slices.Clone(commands)
	rank := func(c *command) int {
		if i := slices.Index(order, c.name); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(cs, func(a, b *command) int { return rank(a) - rank(b) })
	return cs
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `polyrepl: named, persistent REPL sessions for agents and people.

Usage: polyrepl COMMAND [ARGS]

Commands:
`)
	for _, c := range listed() {
		fmt.Fprintf(w, "  %s\n      %s\n", c.usage(), c.summary)
	}
	fmt.Fprint(w, `  --version
      print the version

Every command takes --label NAME: who you are in the shared record
(default $POLYREPL_LABEL, else $USER; the daemon keeps 100 characters
of it and says the cut).

Exit status, for every command: 0 done (exec, wait and input: the cell
finished), 1 the cell raised or was interrupted, or the session is dead or
died, 2 the request was refused (usage, bad input, no session of that
name, code or an answer over 2 MiB) or no daemon could be reached, 3 the
cell waits for input, 124 the cell still runs. Besides: interrupt exits 0
once the cell stopped; status exits 1 when no daemon runs; setup exits 1
when the client's file could not be written.

Examples:
  polyrepl exec chirp 'import json; data = json.load(open("big.json"))'
  polyrepl exec chirp 'len(data)'
  echo 'print(sorted(data)[:5])' | polyrepl exec chirp -

`+"`polyrepl help CMD`"+` explains a command.
`)
}

// printHelp writes c's help: its synopsis and flags from their
// declarations, then its text.
func printHelp(w io.Writer, c *command) {
	_, fs := c.declared()
	fmt.Fprintf(w, "Usage: polyrepl %s\n\n%s.\n", c.synopsis(fs), strings.ToUpper(c.summary[:1])+c.summary[1:])
	// --label is taken before any command's own flags (takeLabel), so
	// no command declares it; its help lists it all the same.
	fs.defs = append(fs.defs, labelFlag)
	printFlags(w, fs)
	if c.help != "" {
		fmt.Fprintf(w, "\n%s\n", c.help)
	}
	if c.more != nil {
		c.more(w)
	}
}

// labelFlag is --label as a command's help lists it.
var labelFlag = flagDef{names: []string{"label"}, arg: "NAME", usage: "who you are in the shared record (any command; default $POLYREPL_LABEL, else $USER)"}

func isNoDaemon(err error) bool {
	return client.IsNotRunning(err)
}
