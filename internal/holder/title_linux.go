package holder

import (
	"strings"
	"unsafe"
)

// titleRoom is the argument a holder is started with, kept blank for the
// name of the session it will keep: a spare is started before it knows.
var titleRoom = strings.Repeat(" ", 64) // api.MaxNameLen

// setTitle writes name into the blank argument the holder was started
// with, so that ps shows whose session it keeps (`polyrepl holder etl`).
// The argument's bytes are the process's own argv, which the kernel
// shows as /proc/PID/cmdline; Go's os.Args point at them.
func setTitle(args []string, name string) {
	if len(args) < 3 || len(args[2]) != len(titleRoom) || len(name) > len(titleRoom) {
		return
	}
	b := unsafe.Slice(unsafe.StringData(args[2]), len(args[2]))
	copy(b, name+titleRoom[len(name):])
}
