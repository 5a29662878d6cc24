package sandbox

// Self is the running binary, which the trampoline is: /proc/self/exe
// stays the file this process was started from, even after an upgrade
// replaced it on disk.
func Self() string { return "/proc/self/exe" }
