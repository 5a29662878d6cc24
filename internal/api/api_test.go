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
