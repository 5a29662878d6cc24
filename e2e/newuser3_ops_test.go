package e2e

import (
	"encoding/json"
	"fmt"
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
	t.Parallel()
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

// memoryCap is the memory_cap of `status --json`.
type memoryCap struct {
	Bytes    int64    `json:"bytes"`
	Enforced bool     `json:"enforced"`
	By       string   `json:"by"`
	Group    string   `json:"group"`
	Why      string   `json:"why"`
	InUse    int64    `json:"in_use"`
	Counted  string   `json:"counted"`
	Outside  []string `json:"outside"`
}

// capOf is the daemon's cap on all sessions together, from status --json.
func (e *env) capOf() *memoryCap {
	e.t.Helper()
	stdout, stderr := e.must(0, "status", "--json")
	var st struct {
		Cap *memoryCap `json:"memory_cap"`
	}
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		e.t.Fatalf("status --json: %v\n%s%s", err, stdout, stderr)
	}
	return st.Cap
}

// TestMemoryTotal caps two Python sessions together at 300 MB
// ($POLYREPL_MEMORY_TOTAL, taken by the daemon a client starts by
// itself): status reports the cap, enforced, and what the sessions use;
// one session holds 100 MB, the other allocates until the kernel kills
// it, and its death says it was the cap on all sessions, not a limit of
// its own; the first session lives on. Where no cgroup holds the cap, it
// skips, saying why, after checking that status and the daemon's start
// line say the cap is not enforced.
func TestMemoryTotal(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.setenv("POLYREPL_MEMORY_TOTAL", "300M")
	e.must(0, "exec", "held", "held = [b'x' * (10 << 20) for _ in range(10)]; len(held)")
	c := e.capOf()
	if c == nil || c.Bytes != 300<<20 {
		t.Fatalf("status reports the cap %+v, want 300 MiB", c)
	}
	start := tail(filepath.Join(e.socketDir(), "daemon.log"), 200)
	if !strings.Contains(start, "memory cap 300 MB on all sessions together") {
		t.Errorf("the daemon's start line does not say the cap:\n%s", start)
	}
	text, _ := e.must(0, "status")
	if !strings.Contains(text, "cap:    300 MB on all sessions together") {
		t.Errorf("status says:\n%s", text)
	}
	if !c.Enforced {
		if c.Why == "" || !strings.Contains(text, "NOT enforced: "+c.Why) || !strings.Contains(start, "NOT enforced") {
			t.Errorf("a cap not enforced, without saying why: %+v\n%s", c, text)
		}
		t.Skipf("no cgroup holds the cap here, so no session is killed by it: %s", c.Why)
	}
	if c.Counted != "cgroup" || c.InUse < 90<<20 || len(c.Outside) != 0 {
		t.Errorf("the cap as status reports it with 100 MB held: %+v", c)
	}
	r := e.runJSON("exec", "grows", "grows = []\nwhile True:\n    grows.append(b'x' * (10 << 20))")
	if r.Status != "dead" {
		t.Fatalf("a session allocating without end under a 300 MB cap: %v, want it dead", r)
	}
	dead := e.session("grows")
	if dead.Death == nil || dead.Death.By != "memory-cap" || !strings.Contains(dead.Death.Cause, "the memory cap on all sessions together, 300 MB") || !strings.Contains(dead.Death.Cause, "not a limit of its own") {
		t.Errorf("the death of the session the cap killed: %+v", dead.Death)
	}
	wantContains(t, "the reply of the cell the cap killed", r.String(), "killed by the kernel for going over the memory cap on all sessions together")
	if r := e.runJSON("exec", "held", "len(held)"); r.Status != "done" || r.Value != "10" {
		t.Errorf("the other session after the cap killed one: %v", r)
	}
	after := e.capOf()
	if !after.Enforced || after.InUse < 90<<20 || after.InUse > 300<<20 {
		t.Errorf("the cap after the kill: %+v", after)
	}
	out, _ := e.must(0, "start", "--memory-total", "300M")
	if !strings.Contains(out, "already running") || !strings.Contains(out, "Memory cap: 300 MB") {
		t.Errorf("start --memory-total with the same cap says:\n%s", out)
	}
	if _, stderr, code := e.run("start", "--memory-total", "1G"); code != 2 || !strings.Contains(stderr, "already runs with a memory cap of 300 MB") {
		t.Errorf("start --memory-total with another cap: exit %d, %s", code, stderr)
	}
	// A daemon that takes the session up with the same cap holds it
	// under the cap; one with none lifts the cap, and says none.
	e.must(0, "stop", "--keep-sessions")
	e.must(0, "exec", "held", "len(held)")
	if c := e.capOf(); c == nil || !c.Enforced || len(c.Outside) != 0 || c.Group != after.Group {
		t.Errorf("the cap after a daemon took the session up: %+v", c)
	}
	e.must(0, "stop", "--keep-sessions")
	e.unsetenv("POLYREPL_MEMORY_TOTAL")
	e.must(0, "exec", "held", "len(held)")
	if c := e.capOf(); c != nil {
		t.Errorf("a daemon started without a cap reports one: %+v", c)
	}
	file := "memory.max"
	if after.By == "cgroup v1" {
		file = "memory.limit_in_bytes"
	}
	if b, err := os.ReadFile(filepath.Join(after.Group, file)); err != nil || strings.TrimSpace(string(b)) != "max" && len(strings.TrimSpace(string(b))) < 12 {
		t.Errorf("the cap's %s after a daemon without a cap took its session up: %q (%v)", file, b, err)
	}
	report(t, "4 Faults", "a cap on all sessions together ($POLYREPL_MEMORY_TOTAL=300M, two Python sessions)",
		"held by a %s group; with 100 MB held in one, the other allocating without end was killed: %q; the first lived on; status showed the cap and %s in use",
		c.By, dead.Death.Cause, fmt.Sprintf("%d MB", after.InUse>>20))
}

// TestMemoryTotalNotEnforced: a cap where no cgroup holds limits (the
// rlimit asked for) is said to be not enforced, and why, by status and
// the daemon's start line; sessions run all the same.
func TestMemoryTotalNotEnforced(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.setenv("POLYREPL_MEMORY_BY", "rlimit")
	e.must(0, "start", "--memory-total", "2G")
	e.must(0, "exec", "s", "x = b'x' * (20 << 20); len(x)")
	c := e.capOf()
	if c == nil || c.Enforced || !strings.Contains(c.Why, "rlimit") || c.Counted != "rss" || c.InUse < 20<<20 {
		t.Errorf("the cap with the rlimit: %+v", c)
	}
	text, _ := e.must(0, "status")
	if !strings.Contains(text, "cap:    2.0 GB on all sessions together, NOT enforced: no cgroup to hold it") {
		t.Errorf("status says:\n%s", text)
	}
	if log := tail(filepath.Join(e.socketDir(), "daemon.log"), 200); !strings.Contains(log, "memory cap 2.0 GB on all sessions together, NOT enforced") {
		t.Errorf("the daemon's start line does not say the cap is not enforced:\n%s", log)
	}
	if _, stderr, code := e.run("start", "--memory-total", "lots"); code != 2 || !strings.Contains(stderr, "invalid memory size") {
		t.Errorf("start --memory-total lots: exit %d, %s", code, stderr)
	}
}
