// Package setup owns what polyrepl knows about the MCP clients it can be
// registered with — where each keeps its servers, in what format, and how
// long it waits for a tool call — and the edit that registers polyrepl in
// such a file without touching anything else in it.
//
// The edits are textual splices checked by a parser: the file is parsed
// first (a file that does not parse is refused and left alone), the
// entry's bytes are replaced or inserted where they belong, and the result
// is parsed again and must differ from the original only in polyrepl's
// entry. So a user's comments, key order and formatting survive, and a
// splice that went wrong is caught before anything is written.
package setup

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Name is the server name polyrepl registers under.
const Name = "polyrepl"

// MaxWait is the --max-wait given to `polyrepl mcp` in every registration:
// below 60 s, the tool-call limit of the TypeScript MCP SDK that Claude
// Desktop and other clients use by default, and of Codex's
// tool_timeout_sec default, so that a long cell's call comes back as
// "still running" before the client gives up on it.
const MaxWait = 50

// codexToolTimeout is the tool_timeout_sec written for Codex: its
// default, said out loud so that it stays consistent with MaxWait.
const codexToolTimeout = 60

// Format is how a client's file is written.
type Format string

// The formats of the clients' files.
const (
	JSON Format = "json"
	TOML Format = "toml"
)

// Client is one MCP client polyrepl can be registered with.
type Client struct {
	Name   string // as typed: claude-code, codex, cursor, claude-desktop
	Title  string // as people call it
	Format Format
	// Typed is set when the client's entries carry "type": "stdio" (as
	// `claude mcp add` writes them).
	Typed bool
	// ToolTimeout, if set, is written as the entry's tool_timeout_sec.
	ToolTimeout int
	// file is where the client keeps its MCP servers.
	file func(env Env) (string, error)
}

// Env is what a client's file location depends on.
type Env struct {
	Home   string
	GOOS   string
	Getenv func(string) string
}

// getenv is e.Getenv, or "" without one.
func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

var clients = []Client{
	{
		Name: "claude-code", Title: "Claude Code", Format: JSON, Typed: true,
		// `claude mcp add --scope user` keeps servers in the top-level
		// mcpServers of ~/.claude.json; a project's .mcp.json has the
		// same shape (--file).
		file: func(e Env) (string, error) { return inHome(e, ".claude.json") },
	},
	{
		Name: "codex", Title: "Codex", Format: TOML, ToolTimeout: codexToolTimeout,
		file: func(e Env) (string, error) {
			if d := e.getenv("CODEX_HOME"); d != "" {
				return filepath.Join(d, "config.toml"), nil
			}
			return inHome(e, ".codex", "config.toml")
		},
	},
	{
		Name: "cursor", Title: "Cursor", Format: JSON,
		file: func(e Env) (string, error) { return inHome(e, ".cursor", "mcp.json") },
	},
	{
		Name: "claude-desktop", Title: "Claude Desktop", Format: JSON,
		file: func(e Env) (string, error) {
			const f = "claude_desktop_config.json"
			switch e.GOOS {
			case "darwin":
				return inHome(e, "Library", "Application Support", "Claude", f)
			case "windows":
				if d := e.getenv("APPDATA"); d != "" {
					return filepath.Join(d, "Claude", f), nil
				}
				return inHome(e, "AppData", "Roaming", "Claude", f)
			}
			if d := e.getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
				return filepath.Join(d, "Claude", f), nil
			}
			return inHome(e, ".config", "Claude", f)
		},
	},
}

func inHome(e Env, parts ...string) (string, error) {
	if e.Home == "" {
		return "", errors.New("cannot find your home directory: set HOME, or name the file with --file")
	}
	return filepath.Join(append([]string{e.Home}, parts...)...), nil
}

// Clients lists every client polyrepl knows, in the order help lists them.
func Clients() []Client { return clients }

// Names lists the clients' names.
func Names() []string {
	out := make([]string, len(clients))
	for i, c := range clients {
		out[i] = c.Name
	}
	return out
}

// Lookup finds a client by name.
func Lookup(name string) (Client, bool) {
	for _, c := range clients {
		if c.Name == name {
			return c, true
		}
	}
	return Client{}, false
}

// File is where c keeps its MCP servers.
func (c Client) File(e Env) (string, error) { return c.file(e) }

// Server is what a registration starts: polyrepl's absolute path and its
// arguments.
type Server struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// Sandbox is the sandbox a registration gives polyrepl's MCP server
// (`polyrepl mcp --sandbox POLICY --network on|off`): the policy of
// every session the client's agent creates, and the most it may reach.
// The zero Sandbox gives none; an empty Network leaves the policy's own.
type Sandbox struct{ Policy, Network string }

// Server is the registration of the binary exe for c, confined to sb.
func (c Client) Server(exe string, sb Sandbox) Server {
	args := []string{"mcp", "--max-wait", strconv.Itoa(MaxWait)}
	if sb.Policy != "" {
		args = append(args, "--sandbox", sb.Policy)
	}
	if sb.Network != "" {
		args = append(args, "--network", sb.Network)
	}
	return Server{Command: exe, Args: args}
}

// Snippet is the entry to add to c's file by hand, as it would appear
// there.
func (c Client) Snippet(s Server) string {
	if c.Format == TOML {
		var b strings.Builder
		b.WriteString("[mcp_servers." + Name + "]\n")
		for _, kv := range c.tomlValues(s) {
			b.WriteString(kv.key + " = " + kv.text + "\n")
		}
		return b.String()
	}
	out, _ := edit(c, nil, s)
	return string(out)
}

// CommandLine is the client's own command that registers s, or "" for a
// client that has none.
func (c Client) CommandLine(s Server) string {
	if c.Name != "claude-code" {
		return ""
	}
	words := []string{"claude", "mcp", "add", "--scope", "user", Name, "--", s.Command}
	words = append(words, s.Args...)
	for i, w := range words {
		words[i] = ShellQuote(w)
	}
	return strings.Join(words, " ")
}

// ShellQuote quotes w for a POSIX shell when it needs it.
func ShellQuote(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@+,") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// ParseError is a refusal of a file polyrepl cannot parse, or whose
// shape it does not edit. Nothing was changed.
type ParseError struct {
	Path string // the file, when known
	Why  string
	// Removing is set when the refusal is of removing polyrepl's
	// registration (--remove) rather than of making it.
	Removing bool
}

func (p *ParseError) Error() string {
	where := "the file"
	if p.Path != "" {
		where = p.Path
	}
	if p.Removing {
		return fmt.Sprintf("cannot remove polyrepl from %s: %s; nothing was changed", where, p.Why)
	}
	return fmt.Sprintf("cannot register polyrepl in %s: %s; nothing was changed", where, p.Why)
}

// Edit returns content with polyrepl registered as s for c, and whether
// that changed anything. content nil or empty is a file that does not
// exist yet.
func (c Client) Edit(content []byte, s Server) ([]byte, bool, error) {
	out, err := edit(c, content, s)
	if err != nil {
		return nil, false, err
	}
	return out, string(out) != string(content), nil
}

func edit(c Client, content []byte, s Server) ([]byte, error) {
	if c.Format == TOML {
		return editTOML(content, c.tomlValues(s))
	}
	return editJSON(content, c.jsonEntry(s))
}
