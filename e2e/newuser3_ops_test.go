package e2e

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// homeTree lists every file under dir with its content, and every
// directory, as a map from its path under dir.
func homeTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, _ := os.ReadFile(p)
		out[rel] = string(b)
		return nil
	})
	return out
}

// TestSetupRemove: for every client setup knows, `setup CLIENT --remove`
// undoes `setup CLIENT --write` — in a home with no config (the file and
// the directories --write made go) and in a user's file with other
// servers and comments (it comes back byte for byte, beside the backups,
// which the output lists); a second --remove says there is nothing to
// remove, exit 0; a file that does not parse is refused, exit 2, and left
// as it was.
func TestSetupRemove(t *testing.T) {
	e := newEnv(t)
	var clients []string
	out, _, _ := e.run("help", "setup")
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(line, "  ") && strings.HasSuffix(f[len(f)-2], ":") {
			clients = append(clients, f[0])
		}
	}
	if len(clients) < 4 {
		t.Fatalf("help setup lists clients %q:\n%s", clients, out)
	}
	type reply struct {
		File    string   `json:"file"`
		Changed bool     `json:"changed"`
		Removed bool     `json:"removed"`
		Deleted bool     `json:"deleted"`
		Backup  string   `json:"backup"`
		Backups []string `json:"backups"`
		Dirs    []string `json:"dirs_removed"`
		DryRun  bool     `json:"dry_run"`
	}
	runReply := func(want int, args ...string) reply {
		t.Helper()
		stdout, stderr := e.must(want, append(args, "--json")...)
		var r reply
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("polyrepl %s --json: %v\n%s%s", strings.Join(args, " "), err, stdout, stderr)
		}
		return r
	}
	for _, c := range clients {
		t.Run(c, func(t *testing.T) {
			// An empty home: --write creates the client's file; --remove
			// leaves the home as it was.
			before := homeTree(t, e.home)
			w := runReply(0, "setup", c, "--write")
			if !w.Changed {
				t.Fatalf("setup %s --write changed nothing", c)
			}
			dry := runReply(0, "setup", c, "--remove", "--dry-run")
			if !dry.Removed || !dry.Deleted || !dry.DryRun {
				t.Errorf("--remove --dry-run: %+v", dry)
			}
			if _, err := os.Stat(w.File); err != nil {
				t.Fatalf("--dry-run removed %s: %v", w.File, err)
			}
			stdout, _ := e.must(0, "setup", c, "--remove")
			if !strings.Contains(stdout, "Deleted "+w.File) {
				t.Errorf("--remove of a file --write created says:\n%s", stdout)
			}
			if after := homeTree(t, e.home); !sameTree(before, after) {
				t.Errorf("home before --write: %v\nafter --write and --remove: %v", keys(before), keys(after))
			}
			stdout, _ = e.must(0, "setup", c, "--remove")
			if !strings.Contains(stdout, "nothing to remove") {
				t.Errorf("a second --remove says:\n%s", stdout)
			}

			// The user's own file, with another server (and comments, in
			// TOML): back byte for byte, two backups listed.
			mine := `{
  "theme": "dark",
  "mcpServers": {
    "playwright": {"command": "npx", "args": ["@playwright/mcp@latest"]}
  }
}
`
			if strings.HasSuffix(w.File, ".toml") {
				mine = "# my settings\nmodel = \"o3\"  # the model\n\n[mcp_servers.docs]\ncommand = \"npx\" # docs\nargs = [\"-y\", \"docs-mcp\"]\n\n# profiles\n[profiles.fast]\nmodel = \"o4-mini\"\n"
			}
			os.MkdirAll(filepath.Dir(w.File), 0o700)
			if err := os.WriteFile(w.File, []byte(mine), 0o644); err != nil {
				t.Fatal(err)
			}
			w = runReply(0, "setup", c, "--write")
			if b, _ := os.ReadFile(w.File); !strings.Contains(string(b), `"mcp"`) || w.Backup == "" {
				t.Fatalf("--write on the user's file: %+v\n%s", w, b)
			}
			r := runReply(0, "setup", c, "--remove")
			if !r.Removed || r.Deleted || r.Backup == "" || len(r.Backups) != 2 {
				t.Errorf("--remove on the user's file: %+v", r)
			}
			if b, _ := os.ReadFile(w.File); string(b) != mine {
				t.Errorf("after --write and --remove the file holds\n%s\nwant\n%s", b, mine)
			}
			for _, b := range r.Backups {
				if _, err := os.Stat(b); err != nil {
					t.Errorf("listed backup: %v", err)
				}
			}
			stdout, _ = e.must(0, "setup", c, "--remove")
			if !strings.Contains(stdout, "nothing to remove") || !strings.Contains(stdout, "rm "+r.Backups[0]) {
				t.Errorf("a second --remove says:\n%s", stdout)
			}
			again := runReply(0, "setup", c, "--remove")
			if again.Removed || again.Changed {
				t.Errorf("a second --remove --json: %+v", again)
			}

			// A file that does not parse: refused, left as it was.
			garbage := strings.Replace(mine, "\"", "", 3)
			os.WriteFile(w.File, []byte(garbage), 0o644)
			_, stderr := e.must(2, "setup", c, "--remove")
			if !strings.Contains(stderr, "cannot remove polyrepl from "+w.File) || !strings.Contains(stderr, "nothing was changed") {
				t.Errorf("--remove of a file that does not parse says:\n%s", stderr)
			}
			if b, _ := os.ReadFile(w.File); string(b) != garbage {
				t.Errorf("a refused --remove changed the file to\n%s", b)
			}
			for _, b := range append(r.Backups, w.File) {
				os.Remove(b)
			}
		})
	}
}

func sameTree(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
