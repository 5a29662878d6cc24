// Package limit holds a session's process tree to a memory limit: through
// a cgroup v2 group of its own where the daemon's cgroup is delegated to
// it (the whole tree, counted together, and an out-of-memory kill that can
// be told apart), else with an rlimit on each process (RLIMIT_DATA,
// inherited by every child; allocations beyond it fail inside the
// runtime, which usually raises its own out-of-memory error).
package limit

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Limit is a memory limit in force on one session.
type Limit struct {
	Bytes int64
	By    string // "cgroup" or "rlimit"
	group string // the cgroup directory, for "cgroup"
}

// Apply limits the process pid, and what it starts from now on, to bytes
// of memory; name names the cgroup ("polyrepl-GEN").
func Apply(pid int, name string, bytes int64) (*Limit, error) {
	if dir, err := cgroupDir(); err == nil {
		g := filepath.Join(dir, name)
		if err := os.Mkdir(g, 0o755); err == nil {
			if write(g, "memory.max", strconv.FormatInt(bytes, 10)) == nil {
				write(g, "memory.swap.max", "0") // swapping past the limit is not staying within it
				if write(g, "cgroup.procs", strconv.Itoa(pid)) == nil {
					return &Limit{Bytes: bytes, By: "cgroup", group: g}, nil
				}
			}
			os.Remove(g)
		}
	}
	lim := &unix.Rlimit{Cur: uint64(bytes), Max: uint64(bytes)}
	if err := unix.Prlimit(pid, unix.RLIMIT_DATA, lim, nil); err != nil {
		return nil, fmt.Errorf("cannot limit the session's memory: no delegated cgroup v2, and setrlimit failed: %w", err)
	}
	return &Limit{Bytes: bytes, By: "rlimit"}, nil
}

// OOMKilled reports whether the kernel killed a process of the group for
// going over the limit (known for cgroups only).
func (l *Limit) OOMKilled() bool {
	if l == nil || l.group == "" {
		return false
	}
	b, err := os.ReadFile(filepath.Join(l.group, "memory.events"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" && f[1] != "0" {
			return true
		}
	}
	return false
}

// Release removes the session's cgroup once its processes are gone.
func (l *Limit) Release() {
	if l != nil && l.group != "" {
		os.Remove(l.group)
	}
}

// Describe says the limit in words: "2.0 GB (cgroup)".
func (l *Limit) Describe() string {
	if l == nil {
		return ""
	}
	return fmt.Sprintf("%s (%s)", Size(l.Bytes), l.By)
}

func write(dir, file, value string) error {
	return os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644)
}

// cgroupDir is the daemon's own cgroup v2 directory, if memory can be
// limited under it (the controller is enabled for its children).
func cgroupDir() (string, error) {
	mount, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			dir := filepath.Join(mount, rest)
			ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
			if err != nil || !strings.Contains(" "+string(ctl)+" ", " memory") {
				return "", fmt.Errorf("the memory controller is not delegated to %s", dir)
			}
			return dir, nil
		}
	}
	return "", fmt.Errorf("no cgroup v2 membership")
}

func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "... MOUNTPOINT ... - FSTYPE SOURCE OPTIONS"
		before, after, ok := strings.Cut(sc.Text(), " - ")
		if f := strings.Fields(after); ok && len(f) > 0 && f[0] == "cgroup2" {
			if bf := strings.Fields(before); len(bf) >= 5 {
				return bf[4], nil
			}
		}
	}
	return "", fmt.Errorf("cgroup v2 is not mounted")
}

// Parse reads a size: bytes, or with a K, M, G or T suffix (powers of
// 1024; "1.5G" works).
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := 1.0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			mult, t = 1<<10, t[:n-1]
		case 'M':
			mult, t = 1<<20, t[:n-1]
		case 'G':
			mult, t = 1<<30, t[:n-1]
		case 'T':
			mult, t = 1<<40, t[:n-1]
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f <= 0 || f*mult < 16<<20 || f*mult > 1<<50 {
		return 0, fmt.Errorf("invalid memory size %q: give bytes or a size such as 512M or 2G, at least 16M", s)
	}
	return int64(f * mult), nil
}

// Size says a byte count for people: "512 MB", "2.0 GB".
func Size(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%d MB", n>>20)
}
