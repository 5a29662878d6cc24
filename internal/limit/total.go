package limit

// The cap on all sessions together (polyrepl daemon --memory-total,
// $POLYREPL_MEMORY_TOTAL): one parent cgroup, the cap's group, with the
// cap as its limit, and every session's group under it, whether or not
// the session has a limit of its own. The kernel counts the sessions
// together against the parent's limit and, past it, kills a process of
// one of them. Like group.go, this is files alone; only Linux chooses a
// cgroup.

import (
	"errors"
	"fmt"
	"hash/fnv"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// capPrefix begins the name of the cap's group: "polyrepl-all-" and a
// hash of the Limiter's Key, so that daemons of other state directories
// in the same cgroup have caps of their own, and a daemon that follows
// one of the same state directory finds its group and its sessions.
const capPrefix = "polyrepl-all-"

// CapState is how the cap on all sessions together stands.
type CapState struct {
	Bytes    int64  // the cap (0: none asked for)
	Enforced bool   // the kernel holds it
	By       string // ByCgroup or ByCgroupV1, when enforced
	Group    string // the cap's group, when enforced
	Why      string // why it is not enforced, when it is not
}

// Cap says how the cap on all sessions together stands. It makes the
// Limiter choose its way first (see Prepare) when a cap is asked for.
func (l *Limiter) Cap() CapState {
	if l.Total <= 0 {
		return CapState{}
	}
	l.Prepare()
	return l.capState()
}

// capState is Cap once the way is chosen.
func (l *Limiter) capState() CapState {
	st := CapState{Bytes: l.Total, Why: l.capWhy}
	if l.capGroup != "" {
		st.Enforced, st.By, st.Group = true, l.by, l.capGroup
	}
	return st
}

// Describe says the cap in words, for the daemon's log and status.
func (c CapState) Describe() string {
	if c.Enforced {
		return fmt.Sprintf("%s on all sessions together, enforced by a %s group (%s)", Size(c.Bytes), cgroupWords(c.By), c.Group)
	}
	return fmt.Sprintf("%s on all sessions together, NOT enforced: %s", Size(c.Bytes), c.Why)
}

func cgroupWords(by string) string {
	if by == ByCgroupV1 {
		return "cgroup v1 memory"
	}
	return "cgroup v2"
}

// capName is the cap's group's name for key.
func capName(key string) string {
	h := fnv.New32a()
	h.Write([]byte(key))
	return fmt.Sprintf("%s%08x", capPrefix, h.Sum32())
}

// takeCap makes or lifts the cap's group as the Limiter's way is chosen:
// with a cap asked for, the group is made (or found, with the sessions a
// daemon before this one put there) and given the cap; with none, a
// group a daemon before this one left is given no limit, so that a cap
// nobody asks for any more holds nothing.
func (l *Limiter) takeCap() {
	cgroup := l.by == ByCgroup || l.by == ByCgroupV1
	g := filepath.Join(l.dir, capName(l.Key))
	switch {
	case l.Total <= 0:
		if _, err := os.Stat(g); cgroup && err == nil {
			if err := setCap(l.by, g, 0); err != nil {
				log.Printf("memory cap: cannot lift the cap of %s, which an earlier daemon set: %v", g, err)
			} else {
				log.Printf("memory cap: none asked for; lifted the cap of %s, which an earlier daemon set", g)
			}
			l.liftedGroup = g // removed as the daemon stops, if its sessions are gone
		}
	case !cgroup:
		l.capWhy = "no cgroup to hold it: " + l.why
	default:
		if err := makeCap(l.by, g, l.Total); err != nil {
			l.capWhy = err.Error()
		} else {
			l.capGroup = g
			removeStale(g)
		}
	}
	if l.Total > 0 {
		log.Printf("memory cap: %s", l.capState().Describe())
	}
}

// makeCap makes the cap's group g (or takes the one there) and sets its
// limit to bytes, swap included.
func makeCap(by, g string, bytes int64) error {
	if err := os.Mkdir(g, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("cannot make the cap's cgroup %s: %w", g, err)
	}
	if by == ByCgroup {
		// The sessions' groups under it set limits of their own.
		if err := write(g, "cgroup.subtree_control", "+memory"); err != nil {
			return fmt.Errorf("cannot offer the memory controller to the groups under %s: %w", g, err)
		}
	} else {
		// Kernels before 5.x could count each group alone.
		write(g, "memory.use_hierarchy", "1")
		if b, err := os.ReadFile(filepath.Join(g, "memory.use_hierarchy")); err == nil && strings.TrimSpace(string(b)) != "1" {
			return fmt.Errorf("the cgroup v1 group %s does not count the groups under it (memory.use_hierarchy is 0)", g)
		}
	}
	return setCap(by, g, bytes)
}

// setCap sets g's limit to bytes (0: no limit), and its swap to none
// (or, with no limit, to no limit).
func setCap(by, g string, bytes int64) error {
	n, swap := strconv.FormatInt(bytes, 10), "0"
	if by == ByCgroupV1 {
		if bytes == 0 {
			n = "-1"
		}
		// Memory and swap together may not be below memory alone:
		// lifted first, so that the memory limit may move either way.
		write(g, "memory.memsw.limit_in_bytes", "-1")
		if err := write(g, "memory.limit_in_bytes", n); err != nil {
			return fmt.Errorf("cannot set the cap's limit on %s (are the sessions already using more?): %w", g, err)
		}
		write(g, "memory.memsw.limit_in_bytes", n) // where swap is accounted at all
		return nil
	}
	if bytes == 0 {
		n, swap = "max", "max"
	}
	if err := write(g, "memory.max", n); err != nil {
		return fmt.Errorf("cannot set the cap's limit on %s: %w", g, err)
	}
	if err := write(g, "memory.swap.max", swap); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cannot keep the sessions under %s from swap: %w", g, err)
	}
	return nil
}

// Usage is the memory the sessions under the cap use together now, as
// the kernel counts it against the cap (page cache included), or -1 when
// it cannot be read.
func (c CapState) Usage() int64 {
	if !c.Enforced {
		return -1
	}
	file := "memory.current"
	if c.By == ByCgroupV1 {
		file = "memory.usage_in_bytes"
	}
	b, err := os.ReadFile(filepath.Join(c.Group, file))
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// hits is how many times group g has reached its own limit: the "oom"
// count of a cgroup v2 group (its memory.events.local, where the kernel
// has one, counts only its own limit, not its children's), the failcnt
// of a v1 group (charges its own limit refused, each page counter
// counting only its own).
func hits(by, g string) int64 {
	if g == "" {
		return 0
	}
	if by == ByCgroupV1 {
		b, err := os.ReadFile(filepath.Join(g, "memory.failcnt"))
		if err != nil {
			return 0
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return n
	}
	for _, file := range []string{"memory.events.local", "memory.events"} {
		b, err := os.ReadFile(filepath.Join(g, file))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "oom" {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				return n
			}
		}
		return 0
	}
	return 0
}

// Which limit an out-of-memory kill in a session's group came from.
const (
	OverOwn    = "own"    // the session's own limit
	OverCap    = "cap"    // the cap on all sessions together
	OverEither = "either" // both were reached during the session's life
)

// Over says which limit the kernel's out-of-memory kills in the
// session's group came from: its own limit, or the cap on all sessions
// together (reached since the session started, while its own was not).
func (l *Limit) Over() string {
	if l == nil || l.capGroup == "" {
		return OverOwn
	}
	own := l.Bytes > 0 && hits(l.By, l.group) > 0
	capped := hits(l.By, l.capGroup) > l.capHits
	switch {
	case own && capped:
		return OverEither
	case own || !capped && l.Bytes > 0:
		return OverOwn
	}
	return OverCap
}

// OverWords says the limit an out-of-memory kill came from (see Over),
// as the end of "killed by the kernel for going over …".
func (l *Limit) OverWords() string {
	switch l.Over() {
	case OverCap:
		return fmt.Sprintf("the memory cap on all sessions together, %s (%s), not a limit of its own", Size(l.capBytes), l.By)
	case OverEither:
		return fmt.Sprintf("its memory limit of %s or the memory cap on all sessions together, %s (%s)", Size(l.Bytes), Size(l.capBytes), l.By)
	}
	return "its memory limit of " + l.Describe()
}

// UnderCap reports whether the session's group is under a cap's group.
func (l *Limit) UnderCap() bool { return l != nil && l.capGroup != "" }

// Capped reports whether the session's group is under the cap's group
// g, as every session a daemon with that cap starts is (one started by
// an earlier daemon without the cap is not).
func (l *Limit) Capped(g string) bool {
	return l != nil && g != "" && l.capGroup == g
}

// ReleaseCap removes the cap's group once every session's group under it
// is gone (the daemon stops, its sessions with it); it waits for them a
// while, since a session's group goes as its last process does. A group
// with a session left in it stays, for the next daemon to take up.
func (l *Limiter) ReleaseCap(wait time.Duration) {
	if !l.chosen.Load() {
		return
	}
	g := l.capGroup
	if g == "" {
		g = l.liftedGroup
	}
	if g == "" {
		return
	}
	for deadline := time.Now().Add(wait); ; time.Sleep(50 * time.Millisecond) {
		err := os.Remove(g)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			log.Printf("memory cap: cannot remove the cap's cgroup %s (a session's group left in it?): %v", g, err)
			return
		}
	}
}
