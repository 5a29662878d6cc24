package proc

import (
	"fmt"
	"strconv"
)

// Proc is one process as seen at one moment: its pid and its start time,
// which together name it uniquely even after pid reuse.
//
// The unit of Start depends on the operating system, so it means nothing
// outside this machine and is only ever compared for equality:
//   - Linux: field 22 of /proc/PID/stat, clock ticks since boot;
//   - macOS: p_starttime of the process's kinfo_proc, in microseconds since
//     the Unix epoch (seconds × 1e6 + microseconds).
type Proc struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// String formats p as pid@start so that error messages name a process
// unambiguously.
func (p Proc) String() string {
	return strconv.Itoa(p.PID) + "@" + strconv.FormatUint(p.Start, 10)
}

// Tree identifies one session's processes: the leader (the runtime process
// the daemon started, in its own process group whose pgid == leader pid),
// and an environment cookie: a "KEY=VALUE" string the daemon put in the
// session's environment, which descendants inherit even when they call
// setsid or double-fork to escape the process group.
type Tree struct {
	Leader Proc
	Cookie string
	// Spare are processes that descend from the leader, or carry its
	// cookie, and are not of the tree: forks of the runtime another
	// session adopted. They and their descendants are never members.
	Spare []Proc `json:",omitempty"`
}

// StartTime reads the start time of pid, which callers record next to the
// pid so that a later signal cannot hit a different process reusing it; it
// fails if pid does not exist.
func StartTime(pid int) (uint64, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("read start time of pid %d: pid must be positive", pid)
	}
	s, err := procStat(pid)
	if err != nil {
		return 0, fmt.Errorf("read start time of pid %d: %w (the process may have exited)", pid, err)
	}
	return s.start, nil
}

// Alive reports whether p still exists as the same process (same start
// time) and has not exited; zombies count as not alive because they can no
// longer run and only wait to be reaped.
func Alive(p Proc) bool {
	if p.PID <= 0 {
		return false
	}
	s, err := procStat(p.PID)
	return stillAlive(p, s, err)
}
