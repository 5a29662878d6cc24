package proc

// The macOS process table (kinfo_proc, see kinfo_darwin.go) is translated
// into the stat Linux's /proc gives, by the pure functions here, which build
// and are tested everywhere although only macOS calls them.

// p_stat values of a BSD kinfo_proc (<sys/proc.h>).
const (
	bsdSIDL   = 1 // being created by fork
	bsdSRUN   = 2 // runnable
	bsdSSLEEP = 3 // sleeping on an address
	bsdSSTOP  = 4 // stopped by a signal or a debugger
	bsdSZOMB  = 5 // exited, waiting to be reaped
)

// bsdState translates a kinfo_proc p_stat into the state letter of
// /proc/PID/stat, so that stat.zombie and Stopped decide alike on both
// systems: SZOMB is Z, SSTOP is T, SSLEEP is S, and SRUN is R, as is a
// process still being forked (SIDL), which is neither gone nor stopped (BSD
// ps shows it so too). A value this code does not know is '?', which counts
// as alive and not stopped.
func bsdState(pstat int8) byte {
	switch pstat {
	case bsdSIDL, bsdSRUN:
		return 'R'
	case bsdSSLEEP:
		return 'S'
	case bsdSSTOP:
		return 'T'
	case bsdSZOMB:
		return 'Z'
	default:
		return '?'
	}
}

// bsdStart turns a kinfo_proc p_starttime (a struct timeval) into the
// Start of a Proc: microseconds since the Unix epoch. Two processes holding
// one pid in turn cannot both have started in the same microsecond, which
// is all Start is used for.
func bsdStart(sec int64, usec int32) uint64 {
	return uint64(sec)*1_000_000 + uint64(usec)
}
