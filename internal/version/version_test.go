package version

import "testing"

func TestNewer(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"9.9.9", "0.1.0", true},
		{"0.1.0", "9.9.9", false},
		{"0.1.0", "0.1.0", false},
		{"0.2.0", "0.1.9", true},
		{"0.10.0", "0.9.0", true},
		{"1.0.0", "1.0.0-rc1", true},
		{"1.0.0-rc1", "1.0.0", false},
		{"1.0.0-rc2", "1.0.0-rc1", true},
		{"v1.2.3", "1.2.2", true},
		{"dev", "0.1.0", false},
		{"0.1.0", "dev", false},
		{"1.2", "1.1", false},
	} {
		if got := Newer(c.a, c.b); got != c.want {
			t.Errorf("Newer(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
