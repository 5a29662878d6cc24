package proc

import (
	"bytes"
	"strconv"

	"golang.org/x/sys/unix"
)

// Stopped reports whether p is stopped by a signal (state T in
// /proc/PID/stat: SIGSTOP, or SIGTSTP and kin), so that it runs nothing,
// not even a signal handler, until it gets SIGCONT.
func Stopped(p Proc) bool {
	s, _, err := readStat(unix.AT_FDCWD, statPath(p.PID), nil)
	return err == nil && s.start == p.Start && s.state == 'T'
}

// Ignores reports whether p ignores sig (its bit in SigIgn of
// /proc/PID/status): a signal it ignores does nothing, so sending it again
// will not help.
func Ignores(p Proc, sig unix.Signal) bool {
	if !Alive(p) {
		return false
	}
	b, err := readFileAt(unix.AT_FDCWD, "/proc/"+strconv.Itoa(p.PID)+"/status", nil)
	if err != nil {
		return false
	}
	mask, ok := statusMask(b, "SigIgn:")
	return ok && sig > 0 && sig <= 64 && mask&(1<<(uint(sig)-1)) != 0
}

// statusMask reads a hexadecimal signal mask field (SigIgn:, SigBlk:) of
// a /proc/PID/status text.
func statusMask(status []byte, field string) (uint64, bool) {
	for line := range bytes.SplitSeq(status, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(field)); ok {
			m, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 16, 64)
			return m, err == nil
		}
	}
	return 0, false
}
