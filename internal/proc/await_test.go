//go:build linux

package proc

import "testing"

func TestStatField(t *testing.T) {
	line := []byte("42 (a) b) c) Z 1 42 42 0 -1 4194560 " +
		"1 2 3 4 5 6 7 8 20 0 1 0 100 0 0 1 1 1 1 1 1 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1792\n")
	if f, ok := statField(line, 3); !ok || string(f) != "Z" {
		t.Errorf("field 3: %q %v", f, ok)
	}
	if f, ok := statField(line, 52); !ok || string(f) != "1792" {
		t.Errorf("field 52: %q %v", f, ok)
	}
	if _, ok := statField(line, 60); ok {
		t.Error("field 60 of a 52-field line found")
	}
	if _, ok := statField([]byte("garbage"), 4); ok {
		t.Error("a field of a line with no command name found")
	}
}

func TestPSSKB(t *testing.T) {
	rollup := []byte("55d0-7ffd ---p 00000000 00:00 0 [rollup]\nRss:               16384 kB\nPss:                9120 kB\nPss_Anon:           8000 kB\n")
	if n, ok := pssKB(rollup); !ok || n != 9120 {
		t.Errorf("pssKB = %d %v, want 9120", n, ok)
	}
	for _, bad := range []string{"", "Rss: 1 kB\n", "x\nPss: 12\n", "x\nPss: a kB\n"} {
		if _, ok := pssKB([]byte(bad)); ok {
			t.Errorf("pssKB(%q) found a size", bad)
		}
	}
}
