package mcp

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tools are the tools the server offers, the everyday ones first; the
// CLI's `help mcp` names them from here too.
var tools = []mcp.Tool{
	{
		Name:        "exec",
		Description: "Run code as one cell in a named persistent session, returning its output and a final expression's value. A name's first exec creates the session; all but code and timeout apply only then.",
		Annotations: &mcp.ToolAnnotations{Title: "Run a cell", DestructiveHint: boolp(true), OpenWorldHint: boolp(true)},
	},
	{
		Name:        "wait",
		Description: "Collect a session's running cell (its output since the last reply, and its result once it ends), or what nobody collected of its last one.",
		Annotations: &mcp.ToolAnnotations{Title: "Collect a cell", DestructiveHint: boolp(false), OpenWorldHint: boolp(false)},
	},
	{
		Name:        "input",
		Description: "Answer a cell that waits for input (status input: input(), a debugger's prompt): one line as text, or eof; then collect it as wait does.",
		Annotations: &mcp.ToolAnnotations{Title: "Answer a cell's question", DestructiveHint: boolp(true), OpenWorldHint: boolp(true)},
	},
	{
		Name:        "interrupt",
		Description: "Stop a session's running cell (KeyboardInterrupt, even in sleep or a subprocess) and return its result; the namespace stays.",
		Annotations: &mcp.ToolAnnotations{Title: "Interrupt a cell", DestructiveHint: boolp(false), OpenWorldHint: boolp(false)},
	},
	{
		Name:        "restart",
		Description: "Replace a session's process with a fresh one (same interpreter, directory, environment, sandbox). Its names are lost.",
		Annotations: &mcp.ToolAnnotations{Title: "Restart a session", DestructiveHint: boolp(true), OpenWorldHint: boolp(false)},
	},
	{
		Name:        "kill",
		Description: "End a session and its whole process tree. Its names are lost.",
		Annotations: &mcp.ToolAnnotations{Title: "Kill a session", DestructiveHint: boolp(true), IdempotentHint: true, OpenWorldHint: boolp(false)},
	},
	{
		Name:        "fork",
		Description: "Copy a session into a new one between cells: same names, nothing reloaded; try a risky step there. Python, IPython, R, Ruby.",
		Annotations: &mcp.ToolAnnotations{Title: "Fork a session", DestructiveHint: boolp(false), OpenWorldHint: boolp(false)},
	},
	{
		Name:        "checkpoint",
		Description: "Keep a frozen copy of a session between cells (label, or cN after cell N; 8 kept); rollback: true puts one (label, or the latest) back in the session's place.",
		Annotations: &mcp.ToolAnnotations{Title: "Checkpoint or roll back", DestructiveHint: boolp(true), OpenWorldHint: boolp(false)},
	},
	{
		Name:        "history",
		Description: "Read a session's shared record: every client's cells, output printed while idle, and notes; one line per entry, or one entry whole (code, output, value, error, figures) given its id.",
		Annotations: &mcp.ToolAnnotations{Title: "Read a session's record", ReadOnlyHint: true, OpenWorldHint: boolp(false)},
	},
	{
		Name:        "sessions",
		Description: "List sessions: runtime and version, state, uptime, idle time or running cell, cells, memory, cwd, sandbox and the names defined in each. Call it first to reuse a session.",
		Annotations: &mcp.ToolAnnotations{Title: "List sessions", ReadOnlyHint: true, OpenWorldHint: boolp(false)},
	},
	{
		Name:        "vars",
		Description: "A session's names with type, size, memory and a preview, without running code; with a path (df, cfg[\"db\"]), that object's members.",
		Annotations: &mcp.ToolAnnotations{Title: "Look at names", ReadOnlyHint: true, OpenWorldHint: boolp(false)},
	},
	{
		Name:        "runtimes",
		Description: "List the runtimes installed here (python, r, node, ghci, Jupyter kernels…) and versions; given a name, one whole with its limits.",
		Annotations: &mcp.ToolAnnotations{Title: "List runtimes", ReadOnlyHint: true, OpenWorldHint: boolp(false)},
	},
}

// Tool is what a person reads of one tool: its name and what it does.
type Tool struct{ Name, Description string }

// Tools lists the tools the server offers, the everyday ones first.
func Tools() []Tool {
	out := make([]Tool, len(tools))
	for i, t := range tools {
		out[i] = Tool{t.Name, t.Description}
	}
	return out
}

// tool returns a copy of the named tool's declaration, for one server to
// add its schemas to.
func tool(name string) *mcp.Tool {
	for _, t := range tools {
		if t.Name == name {
			return &t
		}
	}
	panic(fmt.Sprintf("mcp: no tool %q is declared", name))
}

func boolp(b bool) *bool { return &b }
