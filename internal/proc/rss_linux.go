package proc

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// resident is p's resident memory in bytes, from /proc/PID/statm resident
// pages times the page size; ok is false when p is gone, replaced or a
// zombie. buf is reused across calls and returned grown.
func resident(p Proc, buf []byte) (n uint64, _ []byte, ok bool) {
	dir := "/proc/" + strconv.Itoa(p.PID)
	buf, err := readFileAt(unix.AT_FDCWD, dir+"/statm", buf)
	if err != nil {
		return 0, buf, false
	}
	pages, ok := residentPages(buf)
	if !ok {
		return 0, buf, false
	}
	// Checked after reading statm: start times never repeat, so a match
	// now means statm was read from p and not from an earlier holder of
	// the pid.
	var s stat
	s, buf, err = readStat(unix.AT_FDCWD, dir+"/stat", buf)
	if err != nil || s.start != p.Start || s.zombie() {
		return 0, buf, false
	}
	return pages * uint64(os.Getpagesize()), buf, true
}
