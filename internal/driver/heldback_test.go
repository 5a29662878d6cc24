package driver

import (
	"testing"
)

func TestHeldBack(t *testing.T) {
	marker := []byte("\x01end\x02")
	for _, tc := range []struct {
		data string
		want int
	}{
		{"", 0},
		{"abc", 0},
		{"abc\x01", 1},
		{"abc\x01e", 2},
		{"abc\x01en", 3},
		{"abc\x01end", 4},
		{"\x01en", 3},
		{"abc\x01x", 0},
		{"e", 0},
	} {
		if got := HeldBack([]byte(tc.data), marker); got != tc.want {
			t.Errorf("HeldBack(%q) = %d, want %d", tc.data, got, tc.want)
		}
	}
}
