package proc

import (
	"errors"

	"golang.org/x/sys/unix"
)

// AwaitExit is Linux's alone: macOS keeps no exit status a process other
// than the parent can read (a fork is adopted on Linux only).
func AwaitExit(p Proc) (ws unix.WaitStatus, known bool, err error) {
	return 0, false, errors.New("waiting for another process's child is not supported on macOS")
}
