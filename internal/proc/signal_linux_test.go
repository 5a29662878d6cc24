package proc

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestSignalChecksStartTime(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		name := "pidfd"
		if fallback {
			name = "kill"
		}
		t.Run(name, func(t *testing.T) {
			if fallback {
				pidfdOpen = func(int, int) (int, error) { return -1, unix.ENOSYS }
				t.Cleanup(func() { pidfdOpen = unix.PidfdOpen })
			}
			testSignalChecksStartTime(t)
		})
	}
}
