package proctest

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// pids lists the pids /proc shows.
func pids() []int {
	ents, _ := os.ReadDir("/proc")
	out := make([]int, 0, len(ents))
	for _, d := range ents {
		if pid, err := strconv.Atoi(d.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// environ is pid's environment from /proc/PID/environ; nil if it cannot be
// read or is empty.
func environ(pid int) []string {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil || len(raw) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
}

// State is the state letter of /proc/PID/stat (R, S, D, T, Z, …), or 0 if
// there is no such process.
func State(pid int) byte {
	if f := StatField(pid, 3); f != "" {
		return f[0]
	}
	return 0
}

// StatField returns field n (1-based, as proc(5) numbers them; 3 onwards,
// the fields after the command name) of /proc/PID/stat, or "" if the
// process or the field does not exist.
func StatField(pid, n int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := bytes.LastIndexByte(b, ')')
	if err != nil || i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if n-3 < 0 || n-3 >= len(f) {
		return ""
	}
	return f[n-3]
}

// Cmdline is pid's command line, arguments joined by spaces, or "" if
// it is gone.
func Cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

// RSS is pid's resident memory in bytes (VmRSS of /proc/PID/status); ok
// is false if the process is gone or states none (a zombie).
func RSS(pid int) (n uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, found := strings.CutPrefix(line, "VmRSS:"); found {
			f := strings.Fields(v)
			if len(f) == 0 {
				return 0, false
			}
			kb, err := strconv.ParseUint(f[0], 10, 64)
			return kb * 1024, err == nil
		}
	}
	return 0, false
}
