package proc

// fdDir lists the calling process's open descriptors, one entry per number:
// macOS has no /proc, but its fdesc file system shows them in /dev/fd.
const fdDir = "/dev/fd"
