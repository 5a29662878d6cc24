package daemon

import (
	"strings"
	"testing"
)

func TestDeclaredCeiling(t *testing.T) {
	for _, c := range []struct {
		header, policy, cwd, err string
	}{
		{`{"sandbox":{"policy":"workspace-write"},"cwd":"/w/../x/"}`, "workspace-write", "/x", ""},
		{`{"sandbox":{"policy":"read-only","network":"on"},"cwd":"/"}`, "read-only", "/", ""},
		{`{"sandbox":{"policy":"full"},"cwd":""}`, "", "", ""}, // full is no ceiling
		{`{"sandbox":{"policy":"danger-full-access"}}`, "", "", ""},
		{`{"sandbox":{"policy":"read-only"},"cwd":"rel"}`, "", "", "is not absolute"},
		{`{"sandbox":{"policy":"read-only"}}`, "", "", "is not absolute"},
		{`{"sandbox":{"policy":"jail"},"cwd":"/"}`, "", "", "no sandbox policy"},
		{`{"sandbox":{"policy":"read-only"},"cwd":"/","extra":1}`, "", "", "malformed"},
		{`{"sandbox":{"policy":"read-only"},"cwd":"/"} {}`, "", "", "data after"},
		{`not json`, "", "", "malformed"},
		{`{"sandbox":{"policy":"read-only"},"cwd":"/` + strings.Repeat("x", 70000) + `"}`, "", "", "over the"},
	} {
		got, err := declaredCeiling(c.header)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "ceiling") {
				t.Errorf("declaredCeiling(%.60s) = %+v, %v; want an error with %q", c.header, got, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("declaredCeiling(%.60s): %v", c.header, err)
			continue
		}
		if c.policy == "" {
			if got != nil {
				t.Errorf("declaredCeiling(%.60s) = %+v; want none", c.header, got)
			}
			continue
		}
		if got == nil || got.Sandbox.Policy != c.policy || got.Cwd != c.cwd || got.Sandbox.Network == "" {
			t.Errorf("declaredCeiling(%.60s) = %+v; want %s at %s", c.header, got, c.policy, c.cwd)
		}
	}
}

func FuzzDeclaredCeiling(f *testing.F) {
	f.Add(`{"sandbox":{"policy":"workspace-write","writable":["/a"]},"cwd":"/w"}`)
	f.Add(`{"sandbox":{"policy":"full"}}`)
	f.Fuzz(func(t *testing.T, h string) {
		c, err := declaredCeiling(h)
		if err == nil && c != nil && (c.Sandbox.Policy == "full" || !strings.HasPrefix(c.Cwd, "/")) {
			t.Fatalf("declaredCeiling(%q) = %+v", h, c)
		}
	})
}
