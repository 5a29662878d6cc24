package terminal

import (
	"strings"
	"testing"
)

func TestCellNames(t *testing.T) {
	dir := "/run/user/1000/polyrepl/ghci-cells-123"
	for _, tc := range []struct{ in, want string }{
		{dir + "/cell_3.hs:1:7: error:\n", "<cell 3>:1:7: error:\n"},
		{`"` + dir + `/cell_12.hs" line 1` + "\n", `"<cell 12>" line 1` + "\n"},
		{"a " + dir + "/cell_1.hs and " + dir + "/cell_2.hs\n", "a <cell 1> and <cell 2>\n"},
		{dir + "/cell_x.hs\n", dir + "/cell_x.hs\n"},
		{dir + "/cell_1.txt\n", dir + "/cell_1.txt\n"},
		{dir + "/cell_1234567890.hs\n", dir + "/cell_1234567890.hs\n"},
		{"no paths here\n", "no paths here\n"},
		{dir + "/cell_" + dir + "/cell_4.hs\n", dir + "/cell_<cell 4>\n"},
		{"ends with part of a path " + dir[:10], "ends with part of a path " + dir[:10]},
		{"ends with a path " + dir + "/cell_5.hs", "ends with a path <cell 5>"},
		{"ends undecided " + dir + "/cell_5", "ends undecided " + dir + "/cell_5"},
	} {
		// Whole, then split at every byte: the same text comes out.
		for split := 0; split <= len(tc.in); split++ {
			c := newCellNames(dir, ".hs")
			got := string(c.rewrite([]byte(tc.in[:split]))) + string(c.rewrite([]byte(tc.in[split:]))) + string(c.flush())
			if got != tc.want {
				t.Errorf("%q split at %d: %q, want %q", tc.in, split, got, tc.want)
				break
			}
		}
		// One byte at a time.
		c := newCellNames(dir, ".hs")
		var b strings.Builder
		for i := range len(tc.in) {
			b.Write(c.rewrite([]byte{tc.in[i]}))
		}
		b.Write(c.flush())
		if b.String() != tc.want {
			t.Errorf("%q a byte at a time: %q, want %q", tc.in, b.String(), tc.want)
		}
	}
}

// FuzzCellNames checks that rewriting loses and invents nothing: with no
// path in the input the output is the input, however it is split.
func FuzzCellNames(f *testing.F) {
	f.Add("/d/cell_1.hs:1:1: error", 3)
	f.Add("plain text /d/cel", 14)
	f.Fuzz(func(t *testing.T, in string, split int) {
		if split < 0 || split > len(in) {
			return
		}
		c := newCellNames("/d", ".hs")
		got := string(c.rewrite([]byte(in[:split]))) + string(c.rewrite([]byte(in[split:]))) + string(c.flush())
		whole := newCellNames("/d", ".hs")
		want := string(whole.rewrite([]byte(in))) + string(whole.flush())
		if got != want {
			t.Errorf("split at %d: %q, whole: %q", split, got, want)
		}
		if !strings.Contains(in, "/d/cell_") && got != in {
			t.Errorf("no path in %q, yet it came out as %q", in, got)
		}
	})
}
