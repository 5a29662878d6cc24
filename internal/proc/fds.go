package proc

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CloseOnExecInherited marks close-on-exec every descriptor above 2 this
// process has without it, and says how many it marked.
//
// Go opens its own descriptors close-on-exec and os/exec passes a child
// only Stdin, Stdout, Stderr and ExtraFiles, but a descriptor this process
// inherited open (a shell's `exec 10<file`, a harness's pipe) stays open
// across every exec it makes: the daemon would inherit it from the client
// that starts it, and every runtime from the daemon. Marking them keeps
// them for this process, which may still be using them, and from its
// children.
//
// The descriptors are listed from fdDir: /proc/self/fd on Linux, /dev/fd on
// macOS (where it shows the calling process's own descriptors).
func CloseOnExecInherited() (int, error) {
	ents, err := os.ReadDir(fdDir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ent := range ents {
		fd, err := strconv.Atoi(ent.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // closed since it was listed (the directory's own), or marked already
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err == nil {
			n++
		}
	}
	return n, nil
}
