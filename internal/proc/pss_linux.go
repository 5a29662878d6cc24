package proc

import (
	"bytes"
	"strconv"

	"golang.org/x/sys/unix"
)

// PSS is the summed proportional set size in bytes of the given
// processes: each page counted as its share among the processes that map
// it, so a fork and its parent, sharing their pages copy-on-write, are
// not each charged for all of them. It reads /proc/PID/smaps_rollup,
// which walks the process's page tables: dearer than RSS, so it is asked
// only for processes that share pages with a fork.
func PSS(ps []Proc) uint64 {
	var total uint64
	var buf []byte
	for _, p := range ps {
		if p.PID <= 0 {
			continue
		}
		var err error
		buf, err = readFileAt(unix.AT_FDCWD, "/proc/"+strconv.Itoa(p.PID)+"/smaps_rollup", buf)
		if err != nil {
			continue
		}
		kb, ok := pssKB(buf)
		if !ok {
			continue
		}
		if s, err := procStat(p.PID); err != nil || s.start != p.Start || s.zombie() {
			continue
		}
		total += kb << 10
	}
	return total
}

// pssKB is the "Pss:" line of smaps_rollup, in kB.
func pssKB(b []byte) (uint64, bool) {
	i := bytes.Index(b, []byte("\nPss:"))
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+len("\nPss:"):])
	if len(f) < 2 || string(f[1]) != "kB" {
		return 0, false
	}
	n, err := strconv.ParseUint(string(f[0]), 10, 64)
	return n, err == nil
}
