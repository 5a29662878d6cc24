package setup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// roundTrip registers polyrepl in in, removes it again, and checks that
// the removal gives want, says what it took out, and that a second
// removal finds nothing.
func roundTrip(t *testing.T, c Client, in, want string) {
	t.Helper()
	added, _, err := c.Edit([]byte(in), srv)
	if err != nil {
		t.Fatalf("%s edit of %q: %v", c.Name, in, err)
	}
	out, removed, empty, err := c.Unregister(added)
	if err != nil {
		t.Fatalf("%s removal from %q: %v", c.Name, added, err)
	}
	if string(out) != want {
		t.Errorf("%s: register then remove in\n%s\ngave\n%s\nwant\n%s", c.Name, in, out, want)
	}
	if !strings.Contains(removed, srv.Command) {
		t.Errorf("%s: removed %q, which does not name the command", c.Name, removed)
	}
	if empty != (strings.TrimSpace(want) == "" || strings.TrimSpace(want) == "{}") {
		t.Errorf("%s: empty = %v for what is left: %q", c.Name, empty, out)
	}
	again, removed2, _, err := c.Unregister(out)
	if err != nil || removed2 != "" || string(again) != string(out) {
		t.Errorf("%s: a second removal from %q removed %q, gave %q (%v)", c.Name, out, removed2, again, err)
	}
}

func TestUnregisterUndoesEdit(t *testing.T) {
	// The user's own files, with other servers and (TOML) comments: a
	// --write then a --remove gives them back byte for byte.
	roundTrip(t, client(t, "codex"), codexConfig, codexConfig)
	roundTrip(t, client(t, "codex"), "", "")
	roundTrip(t, client(t, "codex"), "model = \"o3\" # mine\n", "model = \"o3\" # mine\n")
	roundTrip(t, client(t, "codex"), "# only a comment\n", "# only a comment\n")
	other := `{
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
	for _, name := range []string{"claude-code", "cursor", "claude-desktop"} {
		c := client(t, name)
		roundTrip(t, c, other, other)
		roundTrip(t, c, "{\n  \"theme\": \"dark\"\n}\n", "{\n  \"theme\": \"dark\"\n}\n")
		roundTrip(t, c, `{"theme":"dark","mcpServers":{"x":{"command":"y"}}}`, `{"theme":"dark","mcpServers":{"x":{"command":"y"}}}`)
		roundTrip(t, c, "", "{}\n")
	}
}

func TestUnregisterJSONKeepsTheRest(t *testing.T) {
	in := `{
  "mcpServers": {
    "other": {"command": "x"},
    "polyrepl": {
      "command": "/old/polyrepl",
      "args": ["mcp"],
      "env": {"POLYREPL_LABEL": "agent"}
    },
    "last": {"command": "y"}
  },
  "after": true
}
`
	want := `{
  "mcpServers": {
    "other": {"command": "x"},
    "last": {"command": "y"}
  },
  "after": true
}
`
	out, removed, empty, err := client(t, "cursor").Unregister([]byte(in))
	if err != nil || string(out) != want || empty {
		t.Fatalf("got\n%s\nwant\n%s\n(empty %v, %v)", out, want, empty, err)
	}
	if !strings.HasPrefix(removed, `"polyrepl": {`) || !strings.Contains(removed, "POLYREPL_LABEL") {
		t.Errorf("removed %q", removed)
	}
	// polyrepl the last server, and the only one.
	for in, want := range map[string]string{
		`{"mcpServers": {"a": 1, "polyrepl": {"command": "x"}}}`: `{"mcpServers": {"a": 1}}`,
		`{"mcpServers": {"polyrepl": {}}, "b": 2}`:               `{"b": 2}`,
		`{"a": 1, "mcpServers": {"polyrepl": {}}}`:               `{"a": 1}`,
		`{"mcpServers": {"polyrepl": null}}`:                     `{}`,
	} {
		out, _, _, err := client(t, "cursor").Unregister([]byte(in))
		if err != nil || string(out) != want {
			t.Errorf("removal from %s: %s (%v), want %s", in, out, err, want)
		}
	}
	// Nothing to remove: the file comes back as it was, whatever it is.
	for _, in := range []string{"", "{}", `{"mcpServers": {"x": {}}}`, `{"mcpServers": null}`, `{"mcpServers": []}`, `[1]`, `"s"`} {
		out, removed, _, err := client(t, "cursor").Unregister([]byte(in))
		if err != nil || removed != "" || string(out) != in {
			t.Errorf("removal from %q: %q removed %q (%v)", in, out, removed, err)
		}
	}
}

func TestUnregisterTOMLKeepsTheRest(t *testing.T) {
	in := `model = "o3"

[mcp_servers."polyrepl"]   # ours
command = "/old/polyrepl" # moved since
args = [
  "mcp", # a comment in the list
]

[mcp_servers.polyrepl.env]
POLYREPL_LABEL = "codex"

# about other
[mcp_servers.other]
command = "x"

[mcp_servers.polyrepl.more]
a = 1
`
	want := `model = "o3"

# about other
[mcp_servers.other]
command = "x"
`
	out, removed, empty, err := client(t, "codex").Unregister([]byte(in))
	if err != nil || string(out) != want || empty {
		t.Fatalf("got\n%s\nwant\n%s\n(empty %v, %v)", out, want, empty, err)
	}
	for _, part := range []string{`[mcp_servers."polyrepl"]`, "POLYREPL_LABEL", "a = 1"} {
		if !strings.Contains(removed, part) {
			t.Errorf("removed %q lacks %q", removed, part)
		}
	}
	// Inline and dotted definitions go too, and only they.
	for in, want := range map[string]string{
		"[mcp_servers]\nx = 1\npolyrepl = { command = \"x\" } # c\ny = 2\n":             "[mcp_servers]\nx = 1\ny = 2\n",
		"a = 1\nmcp_servers.polyrepl.command = \"x\"\nmcp_servers.polyrepl.args = []\n": "a = 1\n",
		"a = 1\r\n\r\n[mcp_servers.polyrepl]\r\ncommand = \"x\"\r\n":                    "a = 1\r\n",
	} {
		out, _, _, err := client(t, "codex").Unregister([]byte(in))
		if err != nil || string(out) != want {
			t.Errorf("removal from %q: %q (%v), want %q", in, out, err, want)
		}
	}
	for _, in := range []string{"", "# c\n", "[mcp_servers.polyreplx]\ncommand = \"x\"\n", "[mcp_servers]\n"} {
		out, removed, _, err := client(t, "codex").Unregister([]byte(in))
		if err != nil || removed != "" || string(out) != in {
			t.Errorf("removal from %q: %q removed %q (%v)", in, out, removed, err)
		}
	}
}

func TestUnregisterRefused(t *testing.T) {
	for name, ins := range map[string][]string{
		"cursor": {`{"mcpServers": {`, "// c\n{}", `{"mcpServers": {"polyrepl": {}, "polyrepl": {}}}`, "\xff"},
		"codex":  {"[mcp_servers.polyrepl\ncommand = 1", "a = 1\na = 2\n", "\xff = 1"},
	} {
		for _, in := range ins {
			_, _, _, err := client(t, name).Unregister([]byte(in))
			var pe *ParseError
			if !errors.As(err, &pe) || !pe.Removing || !strings.HasPrefix(err.Error(), "cannot remove polyrepl from") {
				t.Errorf("%s removal from %q: %v, want a ParseError of removing", name, in, err)
			}
		}
	}
}

func TestRemove(t *testing.T) {
	home := t.TempDir()
	now := time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)
	o := Options{Now: now, Home: home}
	c := client(t, "codex")

	// No file: nothing to remove, nothing made.
	file := filepath.Join(home, ".codex", "config.toml")
	r, err := Remove(c, file, o)
	if err != nil || r.Changed || r.Deleted {
		t.Fatalf("no file: %+v %v", r, err)
	}
	if _, err := os.Stat(filepath.Dir(file)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("removal from no file made %s", filepath.Dir(file))
	}

	// A file Write created for polyrepl alone goes, with its directory.
	if _, err := Write(c, file, srv, o); err != nil {
		t.Fatal(err)
	}
	dry := o
	dry.DryRun = true
	if r, err := Remove(c, file, dry); err != nil || !r.Changed || !r.Deleted || !r.DryRun {
		t.Fatalf("dry run: %+v %v", r, err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("a dry run removed the file: %v", err)
	}
	r, err = Remove(c, file, o)
	if err != nil || !r.Changed || !r.Deleted || r.Backup != "" || len(r.Dirs) != 1 || r.Dirs[0] != filepath.Dir(file) {
		t.Fatalf("created file: %+v %v", r, err)
	}
	if left, _ := os.ReadDir(home); len(left) != 0 {
		t.Errorf("home after write and remove: %v, want it empty", left)
	}

	// The user's file gets its registration out, a backup, its mode; the
	// backups of every edit are listed; a second removal does nothing.
	os.MkdirAll(filepath.Dir(file), 0o700)
	os.WriteFile(file, []byte(codexConfig), 0o640)
	os.Chmod(file, 0o640)
	if _, err := Write(c, file, srv, o); err != nil {
		t.Fatal(err)
	}
	o.Now = now.Add(time.Second)
	r, err = Remove(c, file, o)
	if err != nil || !r.Changed || r.Deleted || r.Backup != file+".bak.20261203T140001Z" {
		t.Fatalf("user's file: %+v %v", r, err)
	}
	if b, _ := os.ReadFile(file); string(b) != codexConfig {
		t.Errorf("after write and remove the file holds\n%s\nwant\n%s", b, codexConfig)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after the removal %v", fi.Mode())
	}
	if want := []string{file + ".bak.20261203T140000Z", file + ".bak.20261203T140001Z"}; strings.Join(r.Backups, " ") != strings.Join(want, " ") {
		t.Errorf("backups %q, want %q", r.Backups, want)
	}
	r, err = Remove(c, file, o)
	if err != nil || r.Changed || r.Backup != "" || len(r.Backups) != 2 {
		t.Fatalf("second removal: %+v %v", r, err)
	}

	// A file that does not parse is refused and left byte for byte.
	bad := filepath.Join(home, "bad.toml")
	const garbage = "[mcp_servers.polyrepl]\ncommand = \n"
	os.WriteFile(bad, []byte(garbage), 0o600)
	_, err = Remove(c, bad, o)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Path != bad || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("bad file: %v", err)
	}
	if b, _ := os.ReadFile(bad); string(b) != garbage {
		t.Errorf("bad file changed to %q", b)
	}
	if m, _ := filepath.Glob(bad + "*"); len(m) != 1 {
		t.Errorf("files left beside the refused one: %v", m)
	}

	// A symlinked file is edited where it leads, and never deleted.
	real := filepath.Join(home, "dotfiles", "mcp.json")
	os.MkdirAll(filepath.Dir(real), 0o700)
	link := filepath.Join(home, "link.json")
	os.Symlink("dotfiles/mcp.json", link)
	if _, err := Write(client(t, "cursor"), link, srv, o); err != nil {
		t.Fatal(err)
	}
	r, err = Remove(client(t, "cursor"), link, o)
	if err != nil || r.File != real || r.Deleted {
		t.Fatalf("symlink: %+v %v", r, err)
	}
	if b, _ := os.ReadFile(link); strings.TrimSpace(string(b)) != "{}" {
		t.Errorf("symlink target holds %q", b)
	}
}

func TestBackupsOrder(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a[1].json")
	for _, n := range []string{".bak.20261203T140000Z.10", ".bak.20261203T140000Z.2", ".bak.20261203T140000Z", ".bak.20251203T140000Z", ".bak.x", ".bak.20261203T140000Z~"} {
		os.WriteFile(f+n, nil, 0o600)
	}
	got := Backups(f)
	want := []string{f + ".bak.20251203T140000Z", f + ".bak.20261203T140000Z", f + ".bak.20261203T140000Z.2", f + ".bak.20261203T140000Z.10"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("backups\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
