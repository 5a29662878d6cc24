package proc

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// ignoredSignals is the mask of signals p ignores (bit sig-1 for sig), from
// SigIgn of /proc/PID/status; ok is false when p is gone or replaced.
func ignoredSignals(p Proc) (mask uint64, ok bool) {
	if !Alive(p) {
		return 0, false
	}
	b, err := readFileAt(unix.AT_FDCWD, "/proc/"+strconv.Itoa(p.PID)+"/status", nil)
	if err != nil {
		return 0, false
	}
	return statusMask(b, "SigIgn:")
}
