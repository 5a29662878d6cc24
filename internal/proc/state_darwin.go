package proc

// ignoredSignals is the mask of signals p ignores (bit sig-1 for sig), from
// p_sigignore of its kinfo_proc, read together with its start time so that
// the mask is p's; ok is false when p is gone, replaced or a zombie.
func ignoredSignals(p Proc) (mask uint64, ok bool) {
	if p.PID <= 0 {
		return 0, false
	}
	k, err := kinfo(p.PID)
	if err != nil || !stillAlive(p, statOf(k), nil) {
		return 0, false
	}
	return uint64(k.Proc.P_sigignore), true
}
