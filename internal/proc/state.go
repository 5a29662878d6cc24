package proc

import (
	"bytes"
	"strconv"

	"golang.org/x/sys/unix"
)

// Stopped reports whether p is stopped by a signal (SIGSTOP, or SIGTSTP and
// kin), so that it runs nothing, not even a signal handler, until it gets
// SIGCONT: state T in /proc/PID/stat on Linux, SSTOP in the kinfo_proc of
// macOS.
func Stopped(p Proc) bool {
	s, err := procStat(p.PID)
	return err == nil && s.start == p.Start && s.state == 'T'
}

// Ignores reports whether p ignores sig: a signal it ignores does nothing,
// so sending it again will not help. The mask comes from SigIgn of
// /proc/PID/status on Linux and from p_sigignore of the kinfo_proc on macOS
// (what ps -o sigignore shows). False when p is gone or replaced, or the
// mask cannot be read.
func Ignores(p Proc, sig unix.Signal) bool {
	mask, ok := ignoredSignals(p)
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
