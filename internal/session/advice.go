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

// execFresh says how to start a fresh session under name.
func (a advice) execFresh(name string) string {
	if a.how == "mcp" {
		return fmt.Sprintf("the exec tool with session %q starts a fresh session under that name", name)
	}
	return fmt.Sprintf("`polyrepl exec %s CODE` starts a fresh session under that name", name)
}

// giveCode says how to send code.
func (a advice) giveCode() string {
	if a.how == "mcp" {
		return "send the code to run in the code argument"
	}
	return "give the code as an argument, or `-` to read it from standard input"
}

// collectLater says how a cell still running after a call is collected.
func (a advice) collectLater() string {
	if a.how == "mcp" {
		return "the cell keeps running after the timeout; the wait tool collects it later"
	}
	return "the cell keeps running after the timeout; `polyrepl wait NAME` collects it later"
}

// waitAny says how to collect from the sessions a note lists.
func (a advice) waitAny() string {
	if a.how == "mcp" {
		return "The wait tool collects them."
	}
	return "`polyrepl wait NAME` collects."
}
