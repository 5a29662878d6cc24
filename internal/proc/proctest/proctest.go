// Package proctest reads /proc for tests, independently of the code under
// test: which processes are alive and carry a variable in their
// environment, their state, their command line and their memory. Tests
// use it to prove that nothing they started is left behind; it is
// imported only by tests, never by the binary.
//
// It imports nothing of polyrepl, so package proc's own tests can use it
// too without judging proc by proc's own scanner.
package proctest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Process is one live process a scan found.
type Process struct {
	PID     int
	Cmdline string   // arguments joined by spaces
	Env     []string // its environment, KEY=value
}

// Find lists the live processes, zombies excepted, whose environment
// satisfies keep. The calling process is never listed; a process whose
// environment cannot be read (another user's, or gone) is skipped.
func Find(keep func(env []string) bool) []Process {
	ents, _ := os.ReadDir("/proc")
	var out []Process
	self := os.Getpid()
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		raw, err := os.ReadFile("/proc/" + d.Name() + "/environ")
		if err != nil || len(raw) == 0 {
			continue
		}
		env := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if !keep(env) || !Alive(pid) {
			continue
		}
		out = append(out, Process{PID: pid, Cmdline: Cmdline(pid), Env: env})
	}
	return out
}

// WithVar lists the live processes whose environment holds kv
// (KEY=value) exactly.
func WithVar(kv string) []Process {
	return Find(func(env []string) bool { return HasVar(env, kv) })
}

// HasVar reports whether env holds kv (KEY=value) exactly.
func HasVar(env []string, kv string) bool {
	for _, v := range env {
		if v == kv {
			return true
		}
	}
	return false
}

// PIDs lists the pids of ps.
func PIDs(ps []Process) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.PID
	}
	return out
}

// Describe lists ps one per line (pid and command line), for failure
// messages.
func Describe(ps []Process) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "\n  pid %d: %s", p.PID, p.Cmdline)
	}
	return b.String()
}

// Alive reports whether pid is a process that has not exited: neither
// gone nor a zombie waiting to be reaped.
func Alive(pid int) bool {
	s := State(pid)
	return s != 0 && s != 'Z' && s != 'X'
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
