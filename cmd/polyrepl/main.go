// Command polyrepl gives AI coding agents and people named, persistent REPL
// sessions: a daemon that owns them, a CLI, and an MCP server for agents.
package main

import (
	"os"

	"github.com/polyrepl/polyrepl/internal/cli"

	// Every runtime this binary can start: its holders run their drivers,
	// and its daemon checks a new session's runtime against them. The
	// daemon's packages link none themselves (a session's runtime facts
	// come from its holder).
	_ "github.com/polyrepl/polyrepl/internal/driver/all"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
