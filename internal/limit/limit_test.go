package limit

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"2G", 2 << 30}, {"512M", 512 << 20}, {"1.5g", 3 << 29}, {"300MiB", 300 << 20}, {"1T", 1 << 40},
		{"67108864", 64 << 20}, {" 64m ", 64 << 20},
	} {
		if got, err := Parse(tc.in); err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "lots", "-1G", "0", "1K", "2X", "G", "1e20"} {
		if n, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", bad, n)
		}
	}
}
