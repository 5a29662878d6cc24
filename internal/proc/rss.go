package proc

import (
	"bytes"
	"strconv"
)

// RSS is the summed resident memory in bytes of the given processes, so the
// daemon can enforce a session's memory limit. Processes that vanished, were
// replaced by another process with the same pid, or are zombies are skipped.
//
// Linux reads resident pages from /proc/PID/statm. macOS reads
// pti_resident_size of proc_pidinfo(PROC_PIDTASKINFO), which it gives only
// for processes of the caller's own user (or to root); any it refuses count
// nothing.
func RSS(ps []Proc) uint64 {
	var total uint64
	var buf []byte
	for _, p := range ps {
		if p.PID <= 0 {
			continue
		}
		var n uint64
		var ok bool
		n, buf, ok = resident(p, buf)
		if ok {
			total += n
		}
	}
	return total
}

// residentPages parses the second field of a statm line.
func residentPages(b []byte) (uint64, bool) {
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(f[1]), 10, 64)
	return n, err == nil
}
