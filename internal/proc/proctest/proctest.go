// Package proctest reads the process table for tests, independently of the
// code under test: which processes are alive and carry a variable in their
// environment, their state, their command line and their memory. Tests
// use it to prove that nothing they started is left behind; it is
// imported only by tests, never by the binary. On Linux it reads /proc
// (proctest_linux.go); on macOS it asks sysctl and ps (proctest_darwin.go).
//
// It imports nothing of polyrepl, so package proc's own tests can use it
// too without judging proc by proc's own scanner.
package proctest

import (
	"fmt"
	"os"
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
	var out []Process
	self := os.Getpid()
	for _, pid := range pids() {
		if pid == self {
			continue
		}
		env := environ(pid)
		if len(env) == 0 || !keep(env) || !Alive(pid) {
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
