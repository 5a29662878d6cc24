package proc

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// macOS has no /proc: processes are read from the kernel's process table
// through sysctl (kern.proc.all, kern.proc.pid), and environments through
// sysctl kern.procargs2. None of this file could be run where it was
// written (no macOS machine); it follows the x/sys/unix types and the XNU
// sources, and its pure parts (kinfo.go, procargs.go) are tested on Linux.

// stuckHint ends the error of a Kill that could not end every process.
const stuckHint = "check for state U in ps -o stat= -p PID, or a lack of permission"

// kinfo reads pid's entry in the process table. A pid no process holds
// gives ESRCH, as a vanished /proc/PID does on Linux, so callers tell
// "gone" from "unreadable" alike on both systems.
func kinfo(pid int) (*unix.KinfoProc, error) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if errors.Is(err, unix.EIO) {
		// SysctlKinfoProc reports a reply of the wrong size as EIO; for
		// kern.proc.pid that is the empty reply about a free pid.
		return nil, unix.ESRCH
	}
	if err != nil {
		return nil, err
	}
	if int(k.Proc.P_pid) != pid {
		return nil, unix.ESRCH
	}
	return k, nil
}

// statOf takes from a kinfo_proc what /proc/PID/stat gives on Linux.
func statOf(k *unix.KinfoProc) stat {
	return stat{
		pid:   int(k.Proc.P_pid),
		state: bsdState(k.Proc.P_stat),
		ppid:  int(k.Eproc.Ppid),
		pgid:  int(k.Eproc.Pgid),
		start: bsdStart(k.Proc.P_starttime.Sec, k.Proc.P_starttime.Usec),
	}
}

// procStat reads the stat of pid from the process table.
func procStat(pid int) (stat, error) {
	k, err := kinfo(pid)
	if err != nil {
		return stat{}, err
	}
	return statOf(k), nil
}

// scan reads the whole process table in one sysctl. When key is a
// cookie's key ("KEY=", see cookieKey) it also reads the environment of
// every live process whose effective uid is ours (the kernel shows no
// other user's) and keeps its entries under key as the process's tags.
// pid 0, the kernel, is left out as /proc leaves it out on Linux.
func scan(key string) ([]entry, error) {
	ks, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, fmt.Errorf("read the process table (sysctl kern.proc.all): %w", err)
	}
	euid := uint32(os.Geteuid())
	es := make([]entry, 0, len(ks))
	for i := range ks {
		e := entry{stat: statOf(&ks[i])}
		if e.pid <= 0 {
			continue
		}
		if key != "" && ks[i].Eproc.Ucred.Uid == euid && !e.zombie() {
			e.tags = tagsOf(e.proc(), []byte(key))
		}
		es = append(es, e)
	}
	return es, nil
}

// tagsOf reads p's environment (sysctl kern.procargs2) and returns its
// entries under key. Unlike Linux's directory fd, nothing binds the read
// to p, so a match is confirmed by reading p's start time again
// afterwards: if it still matches, the environment was p's.
//
// macOS gives the environment only of processes of the caller's user, and
// hides it (returning the arguments alone) for processes whose code signature
// restricts them while System Integrity Protection is on; such a process is
// never found by its cookie, only by its group or its parent.
func tagsOf(p Proc, key []byte) []string {
	b, err := unix.SysctlRaw("kern.procargs2", p.PID)
	if err != nil {
		return nil
	}
	tags := entriesUnder(procArgsEnv(b), key)
	if len(tags) == 0 {
		return nil
	}
	if s, err := procStat(p.PID); err != nil || s.start != p.Start {
		return nil
	}
	return tags
}
