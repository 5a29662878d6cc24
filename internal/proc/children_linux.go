package proc

import (
	"bytes"
	"strconv"

	"golang.org/x/sys/unix"
)

// childPIDs reads the children of leader's main thread from
// /proc/PID/task/PID/children, one file instead of a scan of the table (a
// shell is one thread). ok is false when the file cannot be read (a kernel
// without it) or leader is no longer the same process.
func childPIDs(leader Proc) (pids []int, ok bool) {
	id := strconv.Itoa(leader.PID)
	b, err := readFileAt(unix.AT_FDCWD, "/proc/"+id+"/task/"+id+"/children", nil)
	if err != nil {
		return nil, false
	}
	if s, err := procStat(leader.PID); err != nil || s.start != leader.Start {
		return nil, false
	}
	for _, f := range bytes.Fields(b) {
		if pid, err := strconv.Atoi(string(f)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, true
}
