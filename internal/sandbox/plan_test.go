package sandbox

import (
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// fakeTree is a file system for planning: paths ending in / are
// directories, "a -> b" a symlink, the rest files.
type fakeTree map[string]string // path → "" (dir or file) or a symlink's target

func newFake(entries ...string) fakeTree {
	t := fakeTree{"/": ""}
	for _, e := range entries {
		target := ""
		if i := strings.Index(e, " -> "); i >= 0 {
			e, target = e[:i], e[i+4:]
		}
		t[e] = target
		for d := filepath.Dir(strings.TrimSuffix(e, "/")); d != "/"; d = filepath.Dir(d) {
			t[d+"/"] = ""
		}
	}
	return t
}

func (t fakeTree) kind(p string) (dir, link bool, ok bool) {
	if p == "/" {
		return true, false, true
	}
	if _, ok := t[p+"/"]; ok {
		return true, false, true
	}
	target, ok := t[p]
	return false, target != "", ok
}

func (t fakeTree) Resolve(p string) (string, error) {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := "/"
	for i := 0; i < len(parts); i++ {
		if parts[i] == "" {
			continue
		}
		next := filepath.Join(cur, parts[i])
		_, link, ok := t.kind(next)
		if !ok {
			return "", fs.ErrNotExist
		}
		if link {
			rest := filepath.Join(append([]string{t[next]}, parts[i+1:]...)...)
			return t.Resolve(rest)
		}
		cur = next
	}
	return cur, nil
}

type fakeInfo struct {
	name string
	mode fs.FileMode
}

func (f fakeInfo) Name() string       { return f.name }
func (f fakeInfo) Size() int64        { return 0 }
func (f fakeInfo) Mode() fs.FileMode  { return f.mode }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fakeInfo) Sys() any           { return nil }

func (t fakeTree) Stat(p string) (fs.FileInfo, error) {
	r, err := t.Resolve(p)
	if err != nil {
		return nil, err
	}
	dir, _, _ := t.kind(r)
	if dir {
		return fakeInfo{filepath.Base(p), fs.ModeDir}, nil
	}
	return fakeInfo{filepath.Base(p), 0}, nil
}

func (t fakeTree) ReadDir(d string) ([]fs.DirEntry, error) {
	var out []fs.DirEntry
	for p := range t {
		c := strings.TrimSuffix(p, "/")
		if c == "" || filepath.Dir(c) != d {
			continue
		}
		m := fs.FileMode(0)
		if strings.HasSuffix(p, "/") {
			m = fs.ModeDir
		} else if t[p] != "" {
			m = fs.ModeSymlink
		}
		out = append(out, fs.FileInfoToDirEntry(fakeInfo{filepath.Base(c), m}))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

// shown is a plan in a line a test can compare: path, r or w, / for a
// directory.
func shown(gs []Grant) []string {
	var out []string
	for _, g := range gs {
		if strings.HasPrefix(g.Path, "/dev") {
			continue
		}
		s := g.Path
		if g.Dir {
			s += "/"
		}
		if g.List {
			s += " list"
		} else if g.Write {
			s += " w"
		} else {
			s += " r"
		}
		out = append(out, s)
	}
	return out
}

func TestPlanReadsAllButTheHiddenPlaces(t *testing.T) {
	tree := newFake("/usr/bin/python3", "/etc/passwd", "/home/u/.ssh/id_test", "/home/u/.bashrc",
		"/home/u/proj/a.py", "/home/u/.config/gcloud/creds", "/home/u/.config/git/config",
		"/run/user/1/polyrepl/daemon.sock", "/run/user/1/bus", "/tmp/polyrepl-sandbox-1/g1/", "/tmp/other",
		"/home/u/link-to-ssh -> /home/u/.ssh", "/home/u/link-to-home -> /home/u", "/home/u/link-to-etc -> /etc",
		"/run/user/1/polyrepl/runtimes/sandbox-g1/", "/dev/null", "/dev/pts/")
	secrets := SecretPlaces("/home/u", "/run/user/1/polyrepl", "/tmp/polyrepl-sandbox-1")
	p, _ := Normal(&api.Sandbox{Policy: api.SandboxReadOnly})
	s := Spec{Policy: p, Cwd: "/home/u/proj", Hidden: Hidden(p, secrets),
		Tmp: "/tmp/polyrepl-sandbox-1/g1", RuntimeDir: "/run/user/1/polyrepl/runtimes/sandbox-g1"}
	got := shown(Plan(s, tree))
	want := []string{
		"/etc/ r", "/home/u/.bashrc r", "/home/u/.config/git/ r",
		"/home/u/link-to-etc/ r", "/home/u/proj/ r",
		"/run/user/1/bus r",
		"/tmp/other r",
		"/usr/ r",
		"/tmp/polyrepl-sandbox-1/g1/ w", "/run/user/1/polyrepl/runtimes/sandbox-g1/ w",
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("plan lacks %q:\n%s", w, strings.Join(got, "\n"))
		}
	}
	for _, g := range got {
		for _, bad := range []string{"/home/u/.ssh", "link-to-ssh", "link-to-home", "gcloud", "daemon.sock", "^/ r", "^/home/ r", "^/home/u/ r", "^/tmp/ r"} {
			if strings.Contains(g, bad) || "^"+g == bad {
				t.Errorf("plan grants %q, which would open a hidden place:\n%s", g, strings.Join(got, "\n"))
			}
		}
	}
}

func TestPlanWorkspaceAtHomeKeepsSecretsHidden(t *testing.T) {
	tree := newFake("/home/u/.ssh/id_test", "/home/u/notes.txt", "/home/u/proj/", "/home/u/.netrc", "/tmp/t/", "/r/")
	p, _ := Normal(&api.Sandbox{Policy: api.SandboxWorkspaceWrite, Writable: []string{"/home/u/.ssh/pub"}})
	secrets := SecretPlaces("/home/u")
	s := NewSpec(p, "/home/u", secrets, "/tmp/t", "/r")
	if !slices.Contains(s.Hidden, "/home/u/.ssh") {
		t.Fatalf("listing ~/.ssh/pub opened all of ~/.ssh: hidden %v", s.Hidden)
	}
	tree["/home/u/.ssh/pub/"] = ""
	got := shown(Plan(s, tree))
	for _, w := range []string{"/home/u/notes.txt w", "/home/u/proj/ w", "/home/u/.ssh/pub/ w", "/tmp/t/ w", "/home/u/ list"} {
		if !slices.Contains(got, w) {
			t.Errorf("plan lacks %q:\n%s", w, strings.Join(got, "\n"))
		}
	}
	for _, g := range got {
		if g == "/home/u/ w" || g == "/home/u/.ssh/ w" || g == "/home/u/.ssh/ r" || strings.HasPrefix(g, "/home/u/.netrc") || strings.HasPrefix(g, "/home/u/.ssh/id_test") {
			t.Errorf("plan grants %q:\n%s", g, strings.Join(got, "\n"))
		}
	}
}

func TestPlanCwdInsideAHiddenPlaceStaysHidden(t *testing.T) {
	tree := newFake("/home/u/.ssh/keys/", "/tmp/t/", "/r/")
	p, _ := Normal(&api.Sandbox{Policy: api.SandboxWorkspaceWrite})
	s := NewSpec(p, "/home/u/.ssh/keys", SecretPlaces("/home/u"), "/tmp/t", "/r")
	for _, g := range shown(Plan(s, tree)) {
		if strings.HasPrefix(g, "/home/u/.ssh") {
			t.Errorf("a workspace inside ~/.ssh opened it: %q", g)
		}
	}
}

func TestPlanHidesAResolvedSecret(t *testing.T) {
	tree := newFake("/home/u/.ssh -> /vault/ssh", "/vault/ssh/id_test", "/vault/other", "/tmp/t/", "/r/")
	p, _ := Normal(&api.Sandbox{Policy: api.SandboxReadOnly})
	s := Spec{Policy: p, Hidden: []string{"/home/u/.ssh", "/vault/ssh"}, Tmp: "/tmp/t", RuntimeDir: "/r"}
	got := shown(Plan(s, tree))
	if !slices.Contains(got, "/vault/other r") {
		t.Errorf("plan lacks /vault/other:\n%s", strings.Join(got, "\n"))
	}
	for _, g := range got {
		if strings.Contains(g, "ssh") || g == "/vault/ r" {
			t.Errorf("plan grants %q", g)
		}
	}
}

func TestLandlockPartsByABI(t *testing.T) {
	off, _ := Normal(&api.Sandbox{Policy: api.SandboxReadOnly})
	on, _ := Normal(&api.Sandbox{Policy: api.SandboxWorkspaceWrite, Network: api.NetworkOn})
	for _, c := range []struct {
		p       api.Sandbox
		abi     int
		missing string // joined
		enf     []string
		not     []string
	}{
		{off, 7, "", []string{"write", "secrets", "tcp-connect", "tcp-bind", "signal", "unix-abstract", "ptrace"}, []string{"udp", "unix-path", "polyrepl"}},
		{off, 10, "", []string{"udp", "unix-path", "polyrepl"}, nil},
		{off, 3, "Landlock ABI 4 (tcp-connect, tcp-bind); Landlock ABI 6 (unix-abstract, signal)", []string{"write"}, []string{"tcp-connect"}},
		{on, 5, "Landlock ABI 6 (unix-abstract, signal)", []string{"write"}, []string{"tcp-connect", "udp"}},
		{off, 0, "Landlock (write, secrets, ptrace)", nil, []string{"write"}},
	} {
		e, missing := LandlockParts(c.p, c.abi, false)
		if got := strings.Join(missing, "; "); got != c.missing {
			t.Errorf("%s ABI %d: missing %q, want %q", c.p.Policy, c.abi, got, c.missing)
		}
		held := map[string]bool{}
		for _, p := range e.Parts {
			held[p.Part] = p.Enforced
			if !p.Enforced && p.Why == "" {
				t.Errorf("%s ABI %d: part %s not enforced, and no why", c.p.Policy, c.abi, p.Part)
			}
		}
		for _, n := range c.enf {
			if !held[n] {
				t.Errorf("%s ABI %d: %s not enforced", c.p.Policy, c.abi, n)
			}
		}
		for _, n := range c.not {
			if held[n] {
				t.Errorf("%s ABI %d: %s said enforced", c.p.Policy, c.abi, n)
			}
		}
		if e, _ := LandlockParts(c.p, c.abi, true); c.p.Network != api.NetworkOn && c.abi > 0 && !e.Parts[4].Enforced {
			t.Errorf("%s ABI %d with seccomp: %+v", c.p.Policy, c.abi, e.Parts[4])
		}
		err := Judge(c.p, missing)
		if (err != nil) != (c.missing != "") {
			t.Errorf("%s ABI %d: Judge %v", c.p.Policy, c.abi, err)
		}
		be := c.p
		be.BestEffort = true
		if err := Judge(be, missing); err != nil {
			t.Errorf("best effort refused: %v", err)
		}
	}
}

func TestSeatbeltProfile(t *testing.T) {
	p, _ := Normal(&api.Sandbox{Policy: api.SandboxWorkspaceWrite, Readable: []string{"/Users/u/.ssh/pub"}})
	s := NewSpec(p, "/Users/u/proj", SecretPlaces("/Users/u", "/private/var/folders/x/T/polyrepl"), "/private/tmp/polyrepl-sandbox-1/g", "/private/var/folders/x/T/polyrepl/runtimes/sandbox-g")
	s.Ports = []int{5001, 5002}
	prof := SeatbeltProfile(s)
	for _, w := range []string{
		"(version 1)", "(allow default)", "(deny file-write*)",
		`(subpath "/Users/u/proj")`, `(subpath "/private/tmp/polyrepl-sandbox-1/g")`, `(literal "/dev/null")`,
		"(deny file-read* file-write*", `(subpath "/Users/u/.ssh")`, `(subpath "/Users/u/.aws")`,
		`(remote unix-socket (subpath "/private/var/folders/x/T/polyrepl"))`,
		`(allow file-read* (subpath "/Users/u/.ssh/pub"))`,
		`(allow file-read* file-write* (subpath "/private/var/folders/x/T/polyrepl/runtimes/sandbox-g"))`,
		"(deny network-outbound (remote ip))", `(allow network-bind network-inbound (local ip "localhost:5001"))`,
		"(deny signal (target others))",
	} {
		if !strings.Contains(prof, w) {
			t.Errorf("profile lacks %s:\n%s", w, prof)
		}
	}
	// Order is the policy: the hidden places' denial comes after the
	// writes' allowance, and the listed places' opening after it.
	if i, j := strings.Index(prof, "(allow file-write*"), strings.Index(prof, "(deny file-read* file-write*"); i < 0 || j < i {
		t.Errorf("hidden places denied before the writable ones are allowed:\n%s", prof)
	}
	if i, j := strings.Index(prof, "(deny file-read* file-write*"), strings.Index(prof, `(allow file-read* (subpath "/Users/u/.ssh/pub"))`); j < i {
		t.Errorf("a listed place opened before its hidden parent is denied:\n%s", prof)
	}
	on, _ := Normal(&api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOn})
	if prof := SeatbeltProfile(NewSpec(on, "/", nil, "/t", "/r")); strings.Contains(prof, "network") {
		t.Errorf("network on, yet the profile denies some:\n%s", prof)
	}
	if got := sbplString(`a"b\c`); got != `"a\"b\\c"` {
		t.Errorf("sbplString = %s", got)
	}
}
