package proc

// PSS is RSS on macOS, which keeps no proportional set size a process may
// read (forks are Linux's alone here).
func PSS(ps []Proc) uint64 { return RSS(ps) }
