package holder

// selfExe is the running binary: /proc/self/exe stays the file this
// process was started from even after the one on disk is replaced, so an
// upgrade never puts a holder of other code under this daemon.
func selfExe() string { return "/proc/self/exe" }
