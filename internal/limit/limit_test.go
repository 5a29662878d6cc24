package limit

import (
	"strings"
	"testing"
)

func TestCheckWant(t *testing.T) {
	for _, ok := range []string{"", "auto", "cgroup", "rlimit"} {
		if err := CheckWant(ok); err != nil {
			t.Errorf("CheckWant(%q) = %v", ok, err)
		}
	}
	if err := CheckWant("systemd"); err == nil || !strings.Contains(err.Error(), "auto, cgroup or rlimit") {
		t.Errorf("CheckWant(systemd) = %v", err)
	}
}

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

// On macOS nothing can hold a memory limit: the Limiter says so, in the
// words the status shows, and refuses every limit, whatever way was
// wanted, rather than claim one the kernel does not enforce.
func TestNoWayOnMacOS(t *testing.T) {
	why := noWay("darwin")
	if !strings.HasPrefix(why, "macOS cannot enforce a memory limit") || !strings.Contains(why, "mmap") {
		t.Errorf("noWay(darwin) = %q", why)
	}
	if why := noWay("linux"); why != "" {
		t.Errorf("noWay(linux) = %q, want a way", why)
	}
	if got, want := (&Limiter{}).describe("darwin"), "no limit can be held ("+why+")"; got != want {
		t.Errorf("before any session: Describe() = %q, want %q from the start", got, want)
	}
	if got := (&Limiter{}).describe("linux"); got != "the way is chosen at the first limited session" {
		t.Errorf("linux, before any session: Describe() = %q", got)
	}
	for _, want := range []string{"", "auto", "cgroup", "rlimit"} {
		l := &Limiter{Want: want}
		l.once.Do(func() { l.take(byNone, "", why) }) // what choose finds on macOS
		if got := l.Describe(); got != "no limit can be held ("+why+")" {
			t.Errorf("want %q: Describe() = %q", want, got)
		}
		// No such process: were a limit tried, it would fail otherwise.
		lim, err := l.Apply(1<<30, "polyrepl-test", 64<<20)
		if lim != nil || err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "without a memory limit") {
			t.Errorf("want %q: Apply = %v, %v; want a refusal saying why and what to do", want, lim, err)
		}
	}
}
