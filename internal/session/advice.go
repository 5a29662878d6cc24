package session

import (
	"fmt"

	"github.com/polyrepl/polyrepl/internal/api"
)

// advice phrases what to do next for the client that asked: a command line
// to copy for the CLI, a tool call for an agent over MCP.
type advice struct{ how string }

func adviceFor(c api.Client) advice { return advice{how: c.How} }

// do names an action on a session: "`polyrepl wait etl`" or "the wait tool
// (session "etl")".
func (a advice) do(action, name string) string {
	if a.how == "mcp" {
		return fmt.Sprintf("the %s tool (session %q)", action, name)
	}
	return fmt.Sprintf("`polyrepl %s %s`", action, name)
}

// waitAny says how to collect from the sessions a note lists.
func (a advice) waitAny() string {
	if a.how == "mcp" {
		return "The wait tool collects them."
	}
	return "`polyrepl wait NAME` collects."
}
