// Package proc owns the process tree of one session: finding its members,
// measuring their memory and ending them safely.
//
// A session is a runtime process the daemon started in its own process group
// plus everything it spawned, including processes that left the group with
// setsid or escaped their parent by double-forking. Such processes are found
// through an environment cookie the daemon put in the session's environment.
//
// How processes are found depends on the system, each in its own files so
// that the rest of the package and its callers do not know which:
//
//   - Linux (*_linux.go): everything is read directly from /proc: the
//     process table from /proc/PID/stat, environments from
//     /proc/PID/environ, memory from /proc/PID/statm, and a runtime's
//     blocked read of its console from /proc/PID/syscall. Signals go
//     through a pidfd when the kernel has them.
//   - macOS (*_darwin.go): the process table comes from sysctl
//     kern.proc.all and kern.proc.pid (kinfo_proc), environments from sysctl
//     kern.procargs2, and memory from proc_pidinfo(PROC_PIDTASKINFO), made as
//     a raw system call since cgo is not used. There is no pidfd: the start
//     time is re-checked right before kill(2). A runtime's blocked read
//     cannot be seen (SeesStdinReads is false). None of the macOS code could
//     be run where it was written; its parsers are tested on Linux.
//
// An orphan, a process whose parent exited, is no longer anyone's
// descendant: it is re-parented to init on Linux (the daemon does not make
// itself a child subreaper; only this package's tests do) and to launchd on
// macOS, which has no PR_SET_CHILD_SUBREAPER at all. One that also left the
// group is found only by the cookie in its environment: on macOS through
// kern.procargs2, which shows the environment of processes running as the
// same user as the daemon and no other. macOS also hides it for processes
// whose code signature restricts them (while System Integrity Protection is
// on); such an orphan, having left the group, is not found at all.
//
// A process is named by its pid together with its start time, so that a pid
// reused by an unrelated process is never mistaken for a member and never
// signalled. Signals are never sent to pid 0, pid 1, negative pids other than
// a verified session group, or the calling process and its own group.
package proc
