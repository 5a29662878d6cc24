package limit

// A session's cgroup, of either version, is made and removed through its
// files alone: this is portable code, though only Linux ever chooses a
// cgroup (see choose).

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// daemonLeaf is where the daemon moves itself inside a delegated cgroup
// v2: a cgroup that hands a controller to its children may hold no
// process itself ("no internal processes"), so the daemon and the
// sessions' groups are siblings under it.
const daemonLeaf = "polyrepl-daemon"

// setting is one file of a new session group, written in order; an
// optional one may be missing, as swap accounting often is.
type setting struct {
	file, value string
	optional    bool
}

// settings are the files that hold a group of cgroup version by to bytes.
func settings(by string, bytes int64) []setting {
	if bytes <= 0 {
		return nil // a session held by the cap on all sessions alone
	}
	n := strconv.FormatInt(bytes, 10)
	if by == ByCgroupV1 {
		// Memory first: v1 refuses a memory+swap limit below it. Memory
		// and swap together, where swap is accounted at all.
		return []setting{{"memory.limit_in_bytes", n, false}, {"memory.memsw.limit_in_bytes", n, true}}
	}
	// Swapping past the limit is not staying within it.
	return []setting{{"memory.max", n, false}, {"memory.swap.max", "0", true}}
}

// removeStale removes the empty session groups a daemon that died left
// under dir (a group with a process in it cannot be removed, and stays).
func removeStale(dir string) {
	stale, _ := filepath.Glob(filepath.Join(dir, "polyrepl-*"))
	for _, g := range stale {
		if base := filepath.Base(g); base != daemonLeaf && !strings.HasPrefix(base, capPrefix) && os.Remove(g) == nil {
			log.Printf("memory limits: removed %s, left by an earlier daemon", g)
		}
	}
}

// newGroup makes the group dir/name, writes its settings and moves pid
// into it.
func newGroup(dir, name string, pid int, settings []setting) (string, error) {
	g := filepath.Join(dir, name)
	if err := os.Mkdir(g, 0o755); err != nil {
		return "", fmt.Errorf("cannot make the session's cgroup: %w", err)
	}
	for _, st := range settings {
		if err := write(g, st.file, st.value); err != nil && !(st.optional && errors.Is(err, os.ErrNotExist)) {
			os.Remove(g)
			return "", fmt.Errorf("cannot set %s of the session's cgroup: %w", st.file, err)
		}
	}
	if err := write(g, "cgroup.procs", strconv.Itoa(pid)); err != nil {
		os.Remove(g)
		return "", fmt.Errorf("cannot move the session into its cgroup: %w", err)
	}
	return g, nil
}
