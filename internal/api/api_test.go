package api

import (
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	good := []string{"a", "chirp", "etl_2", "v1.2", "A-b", "_x", strings.Repeat("n", MaxNameLen)}
	bad := []string{"", ".", "..", ".hidden", "-x", "a/b", "a b", "a\x00b", "é", strings.Repeat("n", MaxNameLen+1), "a\nb"}
	for _, n := range good {
		if err := ValidateName(n); err != nil {
			t.Errorf("ValidateName(%q) = %v, want ok", n, err)
		}
	}
	for _, n := range bad {
		if err := ValidateName(n); err == nil {
			t.Errorf("ValidateName(%q) = nil, want an error", n)
		}
	}
}

// FuzzValidateName holds every accepted session name to what a file name
// and a URL path segment need.
func FuzzValidateName(f *testing.F) {
	for _, s := range []string{"a", "data-1.v2", "..", ".x", "-x", "a/b", "a\x00b", "é", strings.Repeat("a", 65), "", " "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidateName(name) != nil {
			return
		}
		if name == "" || len(name) > MaxNameLen || name[0] == '.' || name[0] == '-' ||
			strings.ContainsAny(name, "/\\\x00 %?#") || strings.Contains(name, "..") && name[0] == '.' {
			t.Fatalf("accepted %q", name)
		}
		for _, r := range name {
			if r > 0x7e {
				t.Fatalf("accepted %q with %U", name, r)
			}
		}
	})
}
