// Command polyrepl gives AI coding agents and people named, persistent REPL
// sessions: a daemon that owns them, a CLI, and an MCP server for agents.
package main

import (
	"os"

	"github.com/polyrepl/polyrepl/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
