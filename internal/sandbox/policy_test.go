package sandbox

import (
	"slices"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
)

func TestParsePolicy(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"read-only", api.SandboxReadOnly, ""},
		{" Read-Only ", api.SandboxReadOnly, ""},
		{"readonly", api.SandboxReadOnly, ""},
		{"workspace-write", api.SandboxWorkspaceWrite, ""},
		{"workspace", api.SandboxWorkspaceWrite, ""},
		{"full", api.SandboxFull, ""},
		{"danger-full-access", api.SandboxFull, ""},
		{"", "", "no sandbox policy"},
		{"none", "", "give one of read-only, workspace-write, full"},
		{strings.Repeat("x", 100), "", "…"},
	} {
		got, err := ParsePolicy(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParsePolicy(%q) = %q, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParsePolicy(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestNormal(t *testing.T) {
	for _, c := range []struct {
		name string
		in   *api.Sandbox
		want api.Sandbox
		err  string
	}{
		{"nil is full", nil, api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}, ""},
		{"read-only defaults network off", &api.Sandbox{Policy: "read-only"}, api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}, ""},
		{"full defaults network on", &api.Sandbox{Policy: "danger-full-access"}, api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}, ""},
		{"network on kept", &api.Sandbox{Policy: "workspace-write", Network: "ON"}, api.Sandbox{Policy: api.SandboxWorkspaceWrite, Network: api.NetworkOn}, ""},
		{"dirs cleaned", &api.Sandbox{Policy: "read-only", Readable: []string{"/a/b/../c/"}, Writable: []string{"/tmp//x"}},
			api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff, Readable: []string{"/a/c"}, Writable: []string{"/tmp/x"}}, ""},
		{"best effort kept", &api.Sandbox{Policy: "read-only", BestEffort: true}, api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff, BestEffort: true}, ""},
		{"bad policy", &api.Sandbox{Policy: "jail"}, api.Sandbox{}, "no sandbox policy"},
		{"bad network", &api.Sandbox{Policy: "read-only", Network: "maybe"}, api.Sandbox{}, "no network setting"},
		{"full with network off", &api.Sandbox{Policy: "full", Network: "off"}, api.Sandbox{}, "network off needs a sandbox"},
		{"full with extras", &api.Sandbox{Policy: "full", Writable: []string{"/x"}}, api.Sandbox{}, "already reads and writes everywhere"},
		{"relative dir", &api.Sandbox{Policy: "read-only", Readable: []string{"data"}}, api.Sandbox{}, "is not absolute"},
		{"too many dirs", &api.Sandbox{Policy: "read-only", Writable: slices.Repeat([]string{"/x"}, MaxDirs+1)}, api.Sandbox{}, "at most 64"},
		{"too long a dir", &api.Sandbox{Policy: "read-only", Readable: []string{"/" + strings.Repeat("d", 5000)}}, api.Sandbox{}, "at most 4096"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Normal(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Normal = %+v, %v; want an error with %q", got, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Policy != c.want.Policy || got.Network != c.want.Network || got.BestEffort != c.want.BestEffort ||
				!slices.Equal(got.Readable, c.want.Readable) || !slices.Equal(got.Writable, c.want.Writable) {
				t.Fatalf("Normal = %+v; want %+v", got, c.want)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	ro := api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}
	roNet := api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOn}
	ww := api.Sandbox{Policy: api.SandboxWorkspaceWrite, Network: api.NetworkOff}
	full := api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}
	with := func(s api.Sandbox, readable, writable []string) api.Sandbox {
		s.Readable, s.Writable = readable, writable
		return s
	}
	for _, c := range []struct {
		name string
		p    api.Sandbox
		pCwd string
		c    api.Sandbox
		cCwd string
		ok   bool
		why  string
	}{
		{"anything within full", full, "/", full, "/", true, ""},
		{"read-only within full", ro, "/w", full, "/", true, ""},
		{"full not within read-only", full, "/w", ro, "/w", false, "full allows more than read-only"},
		{"workspace-write not within read-only", ww, "/w", ro, "/w", false, "workspace-write allows more than read-only"},
		{"read-only within workspace-write", ro, "/elsewhere", ww, "/w", true, ""},
		{"same workspace", ww, "/w", ww, "/w", true, ""},
		{"workspace inside the ceiling's", ww, "/w/sub", ww, "/w", true, ""},
		{"workspace outside the ceiling's", ww, "/other", ww, "/w", false, "/other would be writable"},
		{"workspace is the ceiling's writable dir", ww, "/data", with(ww, nil, []string{"/data"}), "/w", true, ""},
		{"network on under off", roNet, "/w", ro, "/w", false, "network on"},
		{"network off under on", ro, "/w", roNet, "/w", true, ""},
		{"readable dir the ceiling lacks", with(ro, []string{"/secret"}, nil), "/w", ro, "/w", false, "/secret would be readable"},
		{"readable dir inside the ceiling's", with(ro, []string{"/data/x"}, nil), "/w", with(ro, []string{"/data"}, nil), "/w", true, ""},
		{"readable dir inside the ceiling's workspace", with(ro, []string{"/w/x"}, nil), "/", ww, "/w", true, ""},
		{"writable dir the ceiling lacks", with(ro, nil, []string{"/x"}), "/w", ro, "/w", false, "/x would be writable"},
		{"root is not a prefix trick", ww, "/wx", ww, "/w", false, "/wx would be writable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, why := Within(c.p, c.pCwd, c.c, c.cCwd)
			if ok != c.ok || !strings.Contains(why, c.why) {
				t.Fatalf("Within = %v, %q; want %v, %q", ok, why, c.ok, c.why)
			}
		})
	}
}

func TestHidden(t *testing.T) {
	secrets := SecretPlaces("/home/u", "/run/user/1/polyrepl", "relative", "")
	if !slices.Contains(secrets, "/home/u/.ssh") || !slices.Contains(secrets, "/run/user/1/polyrepl") {
		t.Fatalf("SecretPlaces = %v", secrets)
	}
	if slices.Contains(secrets, "relative") || slices.Contains(secrets, "") {
		t.Fatalf("SecretPlaces kept a relative or empty place: %v", secrets)
	}
	if got := SecretPlaces("", "/run/x"); !slices.Equal(got, []string{"/run/x"}) {
		t.Fatalf("SecretPlaces without a home = %v", got)
	}
	ro := api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}
	for _, c := range []struct {
		name     string
		s        api.Sandbox
		hidden   []string
		unhidden []string
	}{
		{"full hides nothing", api.Sandbox{Policy: api.SandboxFull}, nil, []string{"/home/u/.ssh"}},
		{"read-only hides every one", ro, []string{"/home/u/.ssh", "/home/u/.aws", "/run/user/1/polyrepl"}, nil},
		{"a listed parent does not open it", func() api.Sandbox { s := ro; s.Readable = []string{"/home/u"}; return s }(),
			[]string{"/home/u/.ssh"}, nil},
		{"a listed place opens it", func() api.Sandbox { s := ro; s.Readable = []string{"/home/u/.ssh"}; return s }(),
			[]string{"/home/u/.aws"}, []string{"/home/u/.ssh"}},
		{"a writable dir inside opens it", func() api.Sandbox { s := ro; s.Writable = []string{"/home/u/.aws/cache"}; return s }(),
			[]string{"/home/u/.ssh"}, []string{"/home/u/.aws"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Hidden(c.s, secrets)
			for _, h := range c.hidden {
				if !slices.Contains(got, h) {
					t.Errorf("Hidden = %v; want %s in it", got, h)
				}
			}
			for _, h := range c.unhidden {
				if slices.Contains(got, h) {
					t.Errorf("Hidden = %v; want %s out of it", got, h)
				}
			}
		})
	}
}

func TestUnder(t *testing.T) {
	for _, c := range []struct {
		path, root string
		want       bool
	}{
		{"/a", "/a", true}, {"/a/b", "/a", true}, {"/ab", "/a", false}, {"/", "/", true}, {"/x", "/", true}, {"/a", "/a/b", false},
	} {
		if got := Under(c.path, c.root); got != c.want {
			t.Errorf("Under(%q, %q) = %v; want %v", c.path, c.root, got, c.want)
		}
	}
}
