package proc

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// RSS is the summed resident memory in bytes of the given processes, from
// /proc/PID/statm resident pages times the page size, so the daemon can
// enforce a session's memory limit. Processes that vanished, were replaced
// by another process with the same pid, or are zombies are skipped.
func RSS(ps []Proc) uint64 {
	page := uint64(os.Getpagesize())
	var total uint64
	var buf []byte
	for _, p := range ps {
		if p.PID <= 0 {
			continue
		}
		dir := "/proc/" + strconv.Itoa(p.PID)
		var err error
		buf, err = readFileAt(unix.AT_FDCWD, dir+"/statm", buf)
		if err != nil {
			continue
		}
		pages, ok := residentPages(buf)
		if !ok {
			continue
		}
		// Checked after reading statm: start times never repeat, so a match
		// now means statm was read from p and not from an earlier holder
		// of the pid.
		var s stat
		s, buf, err = readStat(unix.AT_FDCWD, dir+"/stat", buf)
		if err != nil || s.start != p.Start || s.zombie() {
			continue
		}
		total += pages * page
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
