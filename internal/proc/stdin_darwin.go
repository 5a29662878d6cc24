package proc

// macOS has nothing like /proc/PID/syscall: which call another process is
// blocked in can be read only with the right to debug it (task_for_pid),
// which the daemon does not have, and no count of its read calls is kept.
// So polyrepl cannot see a runtime asking for input there: SeesStdinReads
// is false, and its callers then start no console watch, the only user of
// Reads and HasOpen. HasOpen could be built on proc_pidinfo's descriptor
// lists (PROC_PIDLISTFDS) should anything need it without a watch.

func waitsOnStdin(Proc) bool          { return false }
func anyThreadWaitsOnStdin(Proc) bool { return false }
func reads(int) (uint64, bool)        { return 0, false }
func hasOpen(int, string) bool        { return false }
func seesStdinReads() bool            { return false }

// children lists the processes whose parent is pid in the process table,
// zombies included as Linux's children file includes them; nil if the
// table cannot be read.
func children(pid int) []int {
	es, err := scan("")
	if err != nil {
		return nil
	}
	var kids []int
	for _, e := range es {
		if e.ppid == pid && e.pid != pid {
			kids = append(kids, e.pid)
		}
	}
	return kids
}
