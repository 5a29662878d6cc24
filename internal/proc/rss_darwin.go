package proc

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// proc_info(2), the system call behind libproc's proc_pidinfo, from XNU's
// <sys/proc_info.h>; x/sys/unix exports only its number, SYS_PROC_INFO.
const (
	procInfoCallPIDInfo = 2  // PROC_INFO_CALL_PIDINFO
	procPIDTaskInfo     = 4  // PROC_PIDTASKINFO: struct proc_taskinfo
	procTaskInfoSize    = 96 // sizeof(struct proc_taskinfo)
)

// resident is p's resident memory in bytes, pti_resident_size of
// proc_pidinfo(pid, PROC_PIDTASKINFO), made as a raw system call because
// libproc needs cgo; ok is false when p is gone, replaced, a zombie, or
// another user's (the kernel refuses it). The start time is checked after
// the read, so a match means the memory was p's. buf is not needed here.
//
// Raw system calls are not a promised interface on macOS (libSystem is);
// proc_info's number and arguments have stayed the same across releases so
// far, but if one ever refuses the call, RSS counts nothing on macOS and a
// session's memory limit sees no usage.
func resident(p Proc, buf []byte) (n uint64, _ []byte, ok bool) {
	// struct proc_taskinfo begins with uint64 pti_virtual_size, then
	// uint64 pti_resident_size.
	var info [procTaskInfoSize / 8]uint64
	got, _, errno := unix.Syscall6(unix.SYS_PROC_INFO, procInfoCallPIDInfo, uintptr(p.PID), procPIDTaskInfo, 0,
		uintptr(unsafe.Pointer(&info[0])), procTaskInfoSize)
	if errno != 0 || got < 16 {
		return 0, buf, false
	}
	s, err := procStat(p.PID)
	if !stillAlive(p, s, err) {
		return 0, buf, false
	}
	return info[1], buf, true
}
