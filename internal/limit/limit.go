// Package limit holds a session's process tree to a memory limit, in the
// best way the machine allows, chosen once per daemon by a Limiter:
//
//   - a cgroup v2 group per session, under a cgroup delegated to the
//     daemon: the whole tree is counted together, swap is refused, and an
//     out-of-memory kill can be told apart from any other SIGKILL;
//   - where the daemon's cgroup is not delegated but systemd manages the
//     unified hierarchy, the daemon first asks systemd (over D-Bus, with
//     busctl: the call `systemd-run --scope -p Delegate=yes` makes) for a
//     delegated scope of its own, and then works as above;
//   - a cgroup v1 memory group per session, where the daemon may create
//     groups under its own v1 memory cgroup (root on v1 or hybrid hosts);
//   - else an rlimit on each process (RLIMIT_DATA, inherited by every
//     child): allocations beyond it fail inside the runtime, which usually
//     raises its own out-of-memory error and lives on.
//
// macOS has none of these (see noWay): there the Limiter chooses none,
// says why, and refuses every limit rather than claim one it cannot hold.
package limit

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// How a limit is held, as Limit.By and $POLYREPL_MEMORY_BY say it.
const (
	ByCgroup   = "cgroup"    // a cgroup v2 group of the session's own
	ByCgroupV1 = "cgroup v1" // a cgroup v1 memory group of the session's own
	ByRlimit   = "rlimit"    // RLIMIT_DATA on each process
)

// Limit is a memory limit in force on one session: a limit of its own
// (Bytes), the cap on all sessions together (its group under the cap's),
// or both.
type Limit struct {
	Bytes int64  // its own limit (0: none, only the cap)
	By    string // ByCgroup, ByCgroupV1 or ByRlimit
	group string // the cgroup directory, for the cgroup ways
	// The cap's group the session's group is under, the cap, and how
	// many times the cap had been reached when the session started (see
	// Over).
	capGroup string
	capBytes int64
	capHits  int64
}

// Limiter chooses, at its first use, how this daemon holds sessions to
// their limits, and holds them.
type Limiter struct {
	// Want is "" or "auto" (the best way there is), "cgroup" (a cgroup of
	// either version, or fail) or "rlimit" (always the rlimit, which keeps
	// the session alive on a too-big allocation but counts each process
	// alone).
	Want string

	// Total caps all sessions together (0: no cap); Key names the cap's
	// group: the same for every daemon of one state directory.
	Total int64
	Key   string

	once   sync.Once
	chosen atomic.Bool // by, dir and why are set (for Describe)
	by     string      // ByCgroup or ByCgroupV1 if a cgroup is used, byNone if nothing can hold a limit, else ""
	dir    string      // the cgroup directory sessions' groups go in
	why    string      // why no cgroup is used, when none is
	// capGroup is the cap's group when the cap is enforced; capWhy says
	// why it is not, when it is not; liftedGroup is a cap's group an
	// earlier daemon left, whose cap this one lifted.
	capGroup, capWhy, liftedGroup string
}

// Describe says how this daemon holds limits: the way it chose, or, before
// a limited session made it choose, that it has not. Where there is
// nothing to choose from (macOS), it says so from the start.
func (l *Limiter) Describe() string { return l.describe(runtime.GOOS) }

func (l *Limiter) describe(goos string) string {
	switch {
	case !l.chosen.Load() && noWay(goos) != "":
		return "no limit can be held (" + noWay(goos) + ")"
	case !l.chosen.Load():
		return "the way is chosen at the first limited session"
	case l.by == ByCgroup:
		return "a cgroup v2 group per session under " + l.dir
	case l.by == ByCgroupV1:
		return "a cgroup v1 memory group per session under " + l.dir
	case l.by == byNone:
		return "no limit can be held (" + l.why + ")"
	default:
		return "an rlimit on each process (" + l.why + ")"
	}
}

// CheckWant validates a $POLYREPL_MEMORY_BY value.
func CheckWant(want string) error {
	switch want {
	case "", "auto", "cgroup", ByRlimit:
		return nil
	}
	return fmt.Errorf("invalid way to hold memory limits %q: give auto, cgroup or rlimit", want)
}

// Prepare makes the choice now, before a limited session's runtime is
// started, so that runtimes start where their groups will be made (the
// daemon may move into a delegated cgroup as it chooses).
func (l *Limiter) Prepare() {
	l.once.Do(func() { l.take(choose(l.Want)) })
}

// take makes by, dir and why (see choose) the way this daemon holds
// limits.
func (l *Limiter) take(by, dir, why string) {
	l.by, l.dir, l.why = by, dir, why
	l.chosen.Store(true)
	log.Printf("memory limits: %s", l.Describe())
	if l.by == ByCgroup || l.by == ByCgroupV1 {
		removeStale(l.dir)
	}
	l.takeCap()
}

// Apply limits the process pid, and what it starts from now on, to bytes
// of memory (0: no limit of its own) and to the cap on all sessions
// together, where there is one and the kernel holds it; name names the
// session's cgroup ("polyrepl-GEN"). It returns nil for no limit at all.
func (l *Limiter) Apply(pid int, name string, bytes int64) (*Limit, error) {
	l.Prepare()
	if l.capGroup != "" {
		// A session outside the cap's group would not be counted: a cap
		// that does not hold is refused, as a limit that does not is.
		g, err := newGroup(l.capGroup, name, pid, settings(l.by, bytes))
		if err != nil {
			return nil, fmt.Errorf("cannot put the session under the memory cap on all sessions together: %w", err)
		}
		return &Limit{Bytes: bytes, By: l.by, group: g, capGroup: l.capGroup, capBytes: l.Total, capHits: hits(l.by, l.capGroup)}, nil
	}
	if bytes <= 0 {
		return nil, nil
	}
	switch {
	case l.by == byNone:
		return nil, fmt.Errorf("cannot limit the session's memory: %s; start it without a memory limit (no --memory, and no $POLYREPL_MEMORY for the daemon)", l.why)
	case l.by != "":
		g, err := newGroup(l.dir, name, pid, settings(l.by, bytes))
		if err == nil {
			return &Limit{Bytes: bytes, By: l.by, group: g}, nil
		}
		if l.Want == "cgroup" {
			return nil, err
		}
		log.Printf("memory limits: %v; holding this session by rlimit instead", err)
	case l.Want == "cgroup":
		return nil, fmt.Errorf("$POLYREPL_MEMORY_BY asks for a cgroup and there is none to use: %s", l.why)
	}
	if err := setRlimit(pid, bytes); err != nil {
		return nil, err
	}
	return &Limit{Bytes: bytes, By: ByRlimit}, nil
}

// Held is a limit in force as data: a holder keeps it for the daemons
// that adopt its session after the one that set it.
type Held struct {
	Bytes int64  `json:"bytes"`
	By    string `json:"by"`
	Group string `json:"group,omitempty"` // the cgroup directory, for the cgroup ways
	// The cap on all sessions together the group is under (see Limit).
	CapGroup string `json:"cap_group,omitempty"`
	CapBytes int64  `json:"cap_bytes,omitempty"`
	CapHits  int64  `json:"cap_hits,omitempty"`
}

// Held is l as data, or nil for no limit.
func (l *Limit) Held() *Held {
	if l == nil {
		return nil
	}
	return &Held{Bytes: l.Bytes, By: l.By, Group: l.group, CapGroup: l.capGroup, CapBytes: l.capBytes, CapHits: l.capHits}
}

// Restore takes up a limit an earlier daemon set (nil for none): its
// group, its kills counted by the kernel, its release when the session
// ends.
func Restore(h *Held) *Limit {
	if h == nil {
		return nil
	}
	return &Limit{Bytes: h.Bytes, By: h.By, group: h.Group, capGroup: h.CapGroup, capBytes: h.CapBytes, capHits: h.CapHits}
}

// OOMKilled reports whether the kernel's out-of-memory killer killed a
// process of the session's group (known for cgroups only). Ask before
// Release.
func (l *Limit) OOMKilled() bool {
	return l.OOMKills() > 0
}

// OOMKills is how many processes of the session's group the kernel's
// out-of-memory killer has killed so far (0 where that is not known).
func (l *Limit) OOMKills() int {
	if l == nil || l.group == "" {
		return 0
	}
	file := "memory.events" // v2: "oom_kill N"
	if l.By == ByCgroupV1 {
		file = "memory.oom_control" // v1 (Linux 4.13 and later): "oom_kill N"
	}
	b, err := os.ReadFile(filepath.Join(l.group, file))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// Release removes the session's cgroup. The session's processes are being
// killed as it is called, and a group with a process left cannot be
// removed, so it tries again for a while before giving up (and saying so).
func (l *Limit) Release() {
	if l == nil || l.group == "" {
		return
	}
	if os.Remove(l.group) == nil {
		return
	}
	go func(g string) {
		var err error
		for i := 0; i < 100; i++ {
			time.Sleep(100 * time.Millisecond)
			if err = os.Remove(g); err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
		}
		log.Printf("memory limits: cannot remove the cgroup %s (a process left in it?): %v", g, err)
	}(l.group)
}

// Describe says the limit in words: "2.0 GB (cgroup)"; a session held
// only by the cap on all sessions together, "no limit of its own, under
// the cap on all sessions together of 300 MB (cgroup v1)".
func (l *Limit) Describe() string {
	if l == nil {
		return ""
	}
	if l.Bytes <= 0 {
		return fmt.Sprintf("no limit of its own, under the cap on all sessions together of %s (%s)", Size(l.capBytes), l.By)
	}
	return fmt.Sprintf("%s (%s)", Size(l.Bytes), l.By)
}

func write(dir, file, value string) error {
	return os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644)
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
