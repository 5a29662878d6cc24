package proc

// fdDir lists the calling process's open descriptors, one entry per number.
const fdDir = "/proc/self/fd"
