package proctest

import (
	"encoding/binary"
	"os/exec"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// macOS has no /proc. The process table comes from sysctl kern.proc.all
// and kern.proc.pid, environments and command lines from sysctl
// kern.procargs2 (parsed here afresh, not by package proc's parser, so that
// tests do not judge proc by itself), and memory from ps. None of this
// could be run where it was written (no macOS machine).

// pids lists the pids in the process table, the kernel's 0 left out.
func pids() []int {
	ks, _ := unix.SysctlKinfoProcSlice("kern.proc.all")
	out := make([]int, 0, len(ks))
	for _, k := range ks {
		if k.Proc.P_pid > 0 {
			out = append(out, int(k.Proc.P_pid))
		}
	}
	return out
}

// procArgs reads pid's arguments and environment from kern.procargs2:
// int32 argc, the executable's path, NUL padding, argc arguments, then the
// environment up to an empty string. macOS shows them for the caller's own
// processes only, and hides the environment of processes whose code
// signature restricts them.
func procArgs(pid int) (args, env []string) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil || len(b) < 4 {
		return nil, nil
	}
	argc := int(int32(binary.NativeEndian.Uint32(b)))
	s := strings.Split(string(b[4:]), "\x00")
	i := 1 // s[0] is the executable's path
	for i < len(s) && s[i] == "" {
		i++
	}
	for ; i < len(s) && len(args) < argc; i++ {
		args = append(args, s[i])
	}
	for ; i < len(s) && s[i] != ""; i++ {
		env = append(env, s[i])
	}
	return args, env
}

// environ is pid's environment; nil if it cannot be read or is empty.
func environ(pid int) []string {
	_, env := procArgs(pid)
	return env
}

// State is the state of pid as the letter Linux's /proc/PID/stat would
// give (R, S, T, Z), from p_stat of its kinfo_proc, or 0 if there is no
// such process.
func State(pid int) byte {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(k.Proc.P_pid) != pid {
		return 0 // a free pid gives an empty reply, which x/sys reports as EIO
	}
	switch k.Proc.P_stat {
	case 1, 2: // SIDL, SRUN
		return 'R'
	case 3: // SSLEEP
		return 'S'
	case 4: // SSTOP
		return 'T'
	case 5: // SZOMB
		return 'Z'
	}
	return '?'
}

// StatField returns what field n (1-based, as proc(5) numbers them) of
// Linux's /proc/PID/stat would hold, for the fields macOS can tell: 3 the
// state, 4 the parent pid, 5 the process group, 6 the session. Other fields,
// and a process that does not exist, give "".
func StatField(pid, n int) string {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(k.Proc.P_pid) != pid {
		return ""
	}
	switch n {
	case 3:
		return string(State(pid))
	case 4:
		return strconv.Itoa(int(k.Eproc.Ppid))
	case 5:
		return strconv.Itoa(int(k.Eproc.Pgid))
	case 6:
		if sid, err := unix.Getsid(pid); err == nil {
			return strconv.Itoa(sid)
		}
	}
	return ""
}

// Cmdline is pid's command line, arguments joined by spaces, or "" if
// it is gone or not the caller's.
func Cmdline(pid int) string {
	args, _ := procArgs(pid)
	return strings.TrimSpace(strings.Join(args, " "))
}

// RSS is pid's resident memory in bytes, as ps reports it; ok is false if
// the process is gone or a zombie.
func RSS(pid int) (n uint64, ok bool) {
	if !Alive(pid) {
		return 0, false
	}
	out, err := exec.Command("ps", "-o", "rss=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return 0, false
	}
	kb, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
	return kb * 1024, err == nil
}
