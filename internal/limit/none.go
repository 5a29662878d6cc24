package limit

// byNone is the Limiter's choice where the kernel enforces no memory
// limit polyrepl could set on a session's processes: every limit asked
// for is refused, since one that is not enforced is worse than none.
const byNone = "none"

// noWay says why the kernel of goos (a runtime.GOOS) holds no memory
// limit polyrepl could set, or "" where it holds one (Linux). macOS
// accepts setrlimit for RLIMIT_AS and RLIMIT_RSS but enforces neither;
// RLIMIT_DATA counts only the brk heap, and malloc gets memory with mmap;
// and there are no cgroups, nor any other limit on a process tree an
// unprivileged program can set.
func noWay(goos string) string {
	if goos == "darwin" {
		return "macOS cannot enforce a memory limit: its kernel does not enforce RLIMIT_AS or RLIMIT_RSS, and RLIMIT_DATA does not cover mmap, which malloc uses"
	}
	return ""
}
