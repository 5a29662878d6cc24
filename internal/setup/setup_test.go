package setup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

var srv = Server{Command: "/opt/bin/polyrepl", Args: []string{"mcp", "--max-wait", "50"}}

func client(t *testing.T, name string) Client {
	t.Helper()
	c, ok := Lookup(name)
	if !ok {
		t.Fatalf("no client %q", name)
	}
	return c
}

// mustEdit edits in and checks that a second edit of the result changes
// nothing: every edit is idempotent.
func mustEdit(t *testing.T, c Client, in string) string {
	t.Helper()
	out, changed, err := c.Edit([]byte(in), srv)
	if err != nil {
		t.Fatalf("%s edit of %q: %v", c.Name, in, err)
	}
	again, changed2, err := c.Edit(out, srv)
	if err != nil || changed2 || string(again) != string(out) {
		t.Fatalf("%s: a second edit changed %q to %q (%v)", c.Name, out, again, err)
	}
	if changed != (string(out) != in) {
		t.Errorf("changed = %v for %q -> %q", changed, in, out)
	}
	return string(out)
}

func TestJSONFresh(t *testing.T) {
	for _, in := range []string{"", "  \n", "{}", "{}\n"} {
		got := mustEdit(t, client(t, "cursor"), in)
		want := `{
  "mcpServers": {
    "polyrepl": {
      "command": "/opt/bin/polyrepl",
      "args": [
        "mcp",
        "--max-wait",
        "50"
      ]
    }
  }
}`
		if strings.TrimSpace(got) != want {
			t.Errorf("fresh from %q:\n%s\nwant\n%s", in, got, want)
		}
	}
	got := mustEdit(t, client(t, "claude-code"), "")
	if !strings.Contains(got, `"type": "stdio",`) {
		t.Errorf("claude-code entry without type stdio:\n%s", got)
	}
}

func TestJSONOtherServersUntouched(t *testing.T) {
	in := `{
	"numStartups": 41,
	"tipsHistory": {"a": 1, "b": "<&>"},
	"mcpServers": {
		"playwright": {
			"command": "npx",
			"args": ["@playwright/mcp@latest"]
		}
	},
	"zeta": [1, 2, {"x": null}]
}
`
	got := mustEdit(t, client(t, "claude-desktop"), in)
	want := `{
	"numStartups": 41,
	"tipsHistory": {"a": 1, "b": "<&>"},
	"mcpServers": {
		"playwright": {
			"command": "npx",
			"args": ["@playwright/mcp@latest"]
		},
		"polyrepl": {
			"command": "/opt/bin/polyrepl",
			"args": [
				"mcp",
				"--max-wait",
				"50"
			]
		}
	},
	"zeta": [1, 2, {"x": null}]
}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestJSONNoServersYet(t *testing.T) {
	got := mustEdit(t, client(t, "cursor"), "{\n  \"theme\": \"dark\"\n}\n")
	want := "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"polyrepl\": {\n      \"command\": \"/opt/bin/polyrepl\",\n      \"args\": [\n        \"mcp\",\n        \"--max-wait\",\n        \"50\"\n      ]\n    }\n  }\n}\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A one-line file stays on one line.
	got = mustEdit(t, client(t, "cursor"), `{"theme":"dark","mcpServers":{}}`)
	if got != `{"theme":"dark","mcpServers":{"polyrepl": {"command": "/opt/bin/polyrepl", "args": ["mcp", "--max-wait", "50"]}}}` {
		t.Errorf("one-line file: %s", got)
	}
	var v struct{ MCPServers map[string]Server }
	if err := json.Unmarshal([]byte(got), &v); err != nil || v.MCPServers["polyrepl"].Command != srv.Command {
		t.Errorf("one-line file: %s (%v)", got, err)
	}
}

func TestJSONExistingEntryUpdated(t *testing.T) {
	in := `{
  "mcpServers": {
    "other": {"command": "x"},
    "polyrepl": {
      "command": "/old/polyrepl",
      "args": ["mcp"],
      "env": {"POLYREPL_LABEL": "agent"}
    },
    "last": {"command": "y"}
  }
}
`
	got := mustEdit(t, client(t, "cursor"), in)
	want := `{
  "mcpServers": {
    "other": {"command": "x"},
    "polyrepl": {
      "command": "/opt/bin/polyrepl",
      "args": ["mcp", "--max-wait", "50"],
      "env": {"POLYREPL_LABEL": "agent"}
    },
    "last": {"command": "y"}
  }
}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// An entry that is right already is left byte for byte.
	if out, changed, err := client(t, "cursor").Edit([]byte(want), srv); err != nil || changed || string(out) != want {
		t.Errorf("edit of a right entry: changed %v, err %v:\n%s", changed, err, out)
	}
}

func TestJSONRefused(t *testing.T) {
	for _, in := range []string{
		`{"mcpServers": {`,
		`{"mcpServers": {},}`,
		`// a comment
{}`,
		`[1, 2]`,
		`{"mcpServers": []}`,
		`{"mcpServers": {"polyrepl": {}, "polyrepl": {}}}`,
		"\xff",
	} {
		_, _, err := client(t, "cursor").Edit([]byte(in), srv)
		var pe *ParseError
		if !asParseError(err, &pe) {
			t.Errorf("edit of %q: %v, want a ParseError", in, err)
		}
	}
	_, _, err := client(t, "cursor").Edit([]byte("{\n  \"a\": 1,\n  oops\n}"), srv)
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("the error does not say where: %v", err)
	}
}

func asParseError(err error, pe **ParseError) bool {
	p, ok := err.(*ParseError)
	*pe = p
	return ok
}

func TestTOMLFresh(t *testing.T) {
	got := mustEdit(t, client(t, "codex"), "")
	want := "[mcp_servers.polyrepl]\ncommand = \"/opt/bin/polyrepl\"\nargs = [\"mcp\", \"--max-wait\", \"50\"]\ntool_timeout_sec = 60\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if s := client(t, "codex").Snippet(srv); s != want {
		t.Errorf("snippet\n%s\nwant\n%s", s, want)
	}
}

const codexConfig = `# my codex settings
model = "o3"   # the model

[mcp_servers.docs]
command = "npx"
args = [
  "-y", # yes
  "docs-mcp",
]
startup_timeout_sec = 20

# a comment that belongs to the next table
[profiles.fast]
model = "o4-mini"
`

func TestTOMLOtherServersAndComments(t *testing.T) {
	got := mustEdit(t, client(t, "codex"), codexConfig)
	want := `# my codex settings
model = "o3"   # the model

[mcp_servers.docs]
command = "npx"
args = [
  "-y", # yes
  "docs-mcp",
]
startup_timeout_sec = 20

[mcp_servers.polyrepl]
command = "/opt/bin/polyrepl"
args = ["mcp", "--max-wait", "50"]
tool_timeout_sec = 60

# a comment that belongs to the next table
[profiles.fast]
model = "o4-mini"
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestTOMLExistingTableUpdated(t *testing.T) {
	in := `model = "o3"

[mcp_servers."polyrepl"]   # ours
command = "/old/polyrepl" # moved since
args = [
  "mcp",
]
enabled = true

[mcp_servers.polyrepl.env]
POLYREPL_LABEL = "codex"

[mcp_servers.other]
command = "x"
`
	got := mustEdit(t, client(t, "codex"), in)
	want := `model = "o3"

[mcp_servers."polyrepl"]   # ours
command = "/opt/bin/polyrepl" # moved since
args = ["mcp", "--max-wait", "50"]
enabled = true
tool_timeout_sec = 60

[mcp_servers.polyrepl.env]
POLYREPL_LABEL = "codex"

[mcp_servers.other]
command = "x"
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// CRLF files get CRLF lines, and no final newline is no trouble.
	got = mustEdit(t, client(t, "codex"), "a = 1\r\n[mcp_servers.polyrepl]\r\ncommand = \"x\"")
	if !strings.Contains(got, "command = \"/opt/bin/polyrepl\"\r\nargs") && !strings.Contains(got, "\r\ntool_timeout_sec = 60\r\n") {
		t.Errorf("CRLF file: %q", got)
	}
}

func TestTOMLRefused(t *testing.T) {
	for _, in := range []string{
		"[mcp_servers.polyrepl\ncommand = 1",
		"a = \n",
		"a = 1\na = 2\n",
		"[mcp_servers]\npolyrepl = { command = \"x\" }\n",
		"mcp_servers.polyrepl.command = \"x\"\n",
		"\xff = 1",
	} {
		_, _, err := client(t, "codex").Edit([]byte(in), srv)
		var pe *ParseError
		if !asParseError(err, &pe) {
			t.Errorf("edit of %q: %v, want a ParseError", in, err)
		}
	}
}

func TestTOMLStrings(t *testing.T) {
	odd := Server{Command: `/home/a "b"\c/polyrepl`, Args: []string{"mcp"}}
	out, _, err := client(t, "codex").Edit(nil, odd)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		MCP map[string]struct{ Command string } `toml:"mcp_servers"`
	}
	if _, err := toml.Decode(string(out), &v); err != nil || v.MCP["polyrepl"].Command != odd.Command {
		t.Errorf("%s decodes to %+v (%v)", out, v, err)
	}
}

func TestFiles(t *testing.T) {
	env := Env{Home: "/h", GOOS: "linux", Getenv: func(string) string { return "" }}
	for name, want := range map[string]string{
		"claude-code":    "/h/.claude.json",
		"codex":          "/h/.codex/config.toml",
		"cursor":         "/h/.cursor/mcp.json",
		"claude-desktop": "/h/.config/Claude/claude_desktop_config.json",
	} {
		if got, err := client(t, name).File(env); err != nil || got != want {
			t.Errorf("%s file %q (%v), want %q", name, got, err, want)
		}
	}
	env.GOOS = "darwin"
	if got, _ := client(t, "claude-desktop").File(env); got != "/h/Library/Application Support/Claude/claude_desktop_config.json" {
		t.Errorf("claude-desktop on macOS: %q", got)
	}
	env.Getenv = func(k string) string {
		return map[string]string{"CODEX_HOME": "/ch", "XDG_CONFIG_HOME": "/xdg"}[k]
	}
	if got, _ := client(t, "codex").File(env); got != "/ch/config.toml" {
		t.Errorf("codex with CODEX_HOME: %q", got)
	}
	env.GOOS = "linux"
	if got, _ := client(t, "claude-desktop").File(env); got != "/xdg/Claude/claude_desktop_config.json" {
		t.Errorf("claude-desktop with XDG_CONFIG_HOME: %q", got)
	}
	if got := client(t, "claude-code").CommandLine(Server{Command: "/a b/polyrepl", Args: []string{"mcp"}}); got != "claude mcp add --scope user polyrepl -- '/a b/polyrepl' mcp" {
		t.Errorf("command line %q", got)
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)
	c := client(t, "codex")

	// A file that does not exist is created, private, with no backup.
	fresh := filepath.Join(dir, "new", "config.toml")
	r, err := Write(c, fresh, srv, Options{Now: now})
	if err != nil || !r.Created || !r.Changed || r.Backup != "" {
		t.Fatalf("fresh: %+v %v", r, err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o600 {
		t.Errorf("fresh file mode %v", fi.Mode())
	}

	// An existing file keeps its mode, gets a backup of what it was,
	// and a second run changes nothing (and makes no second backup).
	file := filepath.Join(dir, "config.toml")
	os.WriteFile(file, []byte(codexConfig), 0o640)
	os.Chmod(file, 0o640)
	r, err = Write(c, file, srv, Options{Now: now})
	if err != nil || r.Created || !r.Changed || r.Backup != file+".bak.20261203T140000Z" {
		t.Fatalf("existing: %+v %v", r, err)
	}
	if b, _ := os.ReadFile(r.Backup); string(b) != codexConfig {
		t.Errorf("backup holds %q", b)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after the edit %v, want 0640", fi.Mode())
	}
	edited, _ := os.ReadFile(file)
	r, err = Write(c, file, srv, Options{Now: now})
	if err != nil || r.Changed || r.Backup != "" {
		t.Fatalf("second run: %+v %v", r, err)
	}
	if again, _ := os.ReadFile(file); string(again) != string(edited) {
		t.Errorf("second run changed the file")
	}
	// A changed registration in the same second gets its own backup.
	other := Server{Command: "/elsewhere/polyrepl", Args: srv.Args}
	r, err = Write(c, file, other, Options{Now: now})
	if err != nil || r.Backup != file+".bak.20261203T140000Z.1" {
		t.Fatalf("third run: %+v %v", r, err)
	}

	// A file that does not parse is refused and left byte for byte.
	bad := filepath.Join(dir, "bad.json")
	const garbage = "{\"mcpServers\": {\"x\": 1,}}"
	os.WriteFile(bad, []byte(garbage), 0o600)
	_, err = Write(client(t, "cursor"), bad, srv, Options{Now: now})
	pe, ok := err.(*ParseError)
	if !ok || pe.Path != bad || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("bad file: %v", err)
	}
	if b, _ := os.ReadFile(bad); string(b) != garbage {
		t.Errorf("bad file changed to %q", b)
	}
	if m, _ := filepath.Glob(bad + "*"); len(m) != 1 {
		t.Errorf("files left beside the refused one: %v", m)
	}

	// A symlinked file is edited where it leads; the link stays.
	real := filepath.Join(dir, "dotfiles", "mcp.json")
	os.MkdirAll(filepath.Dir(real), 0o700)
	os.WriteFile(real, []byte("{}\n"), 0o600)
	link := filepath.Join(dir, "link.json")
	os.Symlink("dotfiles/mcp.json", link)
	r, err = Write(client(t, "cursor"), link, srv, Options{Now: now})
	if err != nil || r.File != real {
		t.Fatalf("symlink: %+v %v", r, err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced by a file")
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), srv.Command) {
		t.Errorf("symlink target not edited: %s", b)
	}
	// No temporary files are left anywhere.
	filepath.Walk(dir, func(p string, fi os.FileInfo, _ error) error {
		if strings.Contains(filepath.Base(p), ".polyrepl-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// setup --sandbox writes the sandbox into every client's registration,
// as arguments of `polyrepl mcp`; a registration without one has none,
// and registering again with another sandbox replaces the entry's.
func TestSandboxInEveryRegistration(t *testing.T) {
	for _, c := range Clients() {
		for _, tc := range []struct {
			sb   Sandbox
			want []string
		}{
			{Sandbox{}, []string{"mcp", "--max-wait", "50"}},
			{Sandbox{Policy: "workspace-write"}, []string{"mcp", "--max-wait", "50", "--sandbox", "workspace-write"}},
			{Sandbox{Policy: "read-only", Network: "on"}, []string{"mcp", "--max-wait", "50", "--sandbox", "read-only", "--network", "on"}},
		} {
			s := c.Server("/opt/bin/polyrepl", tc.sb)
			out, _, err := c.Edit(nil, s)
			if err != nil {
				t.Fatalf("%s %+v: %v", c.Name, tc.sb, err)
			}
			if got := registeredArgs(t, c, out); !slices.Equal(got, tc.want) {
				t.Errorf("%s %+v: args %q, want %q", c.Name, tc.sb, got, tc.want)
			}
			if !strings.Contains(c.Snippet(s), tc.want[len(tc.want)-1]) {
				t.Errorf("%s %+v: the entry shown lacks %q:\n%s", c.Name, tc.sb, tc.want[len(tc.want)-1], c.Snippet(s))
			}
			// Registered unconfined first, then confined: the entry's
			// arguments are replaced, not added to.
			plain, _, _ := c.Edit(nil, c.Server("/opt/bin/polyrepl", Sandbox{}))
			again, changed, err := c.Edit(plain, s)
			if err != nil || changed != (tc.sb != Sandbox{}) || !slices.Equal(registeredArgs(t, c, again), tc.want) {
				t.Errorf("%s %+v over an unconfined entry: changed %v, args %q (%v)", c.Name, tc.sb, changed, registeredArgs(t, c, again), err)
			}
		}
	}
}

// registeredArgs reads polyrepl's args back from a client's file.
func registeredArgs(t *testing.T, c Client, file []byte) []string {
	t.Helper()
	if c.Format == TOML {
		var v struct {
			MCPServers map[string]Server `toml:"mcp_servers"`
		}
		if _, err := toml.Decode(string(file), &v); err != nil {
			t.Fatalf("%s: %v\n%s", c.Name, err, file)
		}
		return v.MCPServers[Name].Args
	}
	var v struct{ MCPServers map[string]Server }
	if err := json.Unmarshal(file, &v); err != nil {
		t.Fatalf("%s: %v\n%s", c.Name, err, file)
	}
	return v.MCPServers[Name].Args
}
