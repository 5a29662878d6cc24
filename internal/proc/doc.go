// Package proc owns the process tree of one session: finding its members,
// measuring their memory and ending them safely.
//
// A session is a runtime process the daemon started in its own process group
// plus everything it spawned, including processes that left the group with
// setsid or escaped their parent by double-forking. Such processes are found
// through an environment cookie the daemon put in the session's environment.
//
// Everything is read directly from /proc on Linux. A process is named by its
// pid together with its start time, so that a pid reused by an unrelated
// process is never mistaken for a member and never signalled. Signals are
// never sent to pid 0, pid 1, negative pids other than a verified session
// group, or the calling process and its own group.
package proc
