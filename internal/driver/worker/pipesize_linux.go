package worker

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe asks for a larger pipe: fewer wake-ups of the worker and the
// daemon when a cell prints a lot. The kernel may refuse, which only
// costs speed.
func growPipe(w *os.File) {
	unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, outputPipeSize)
}
