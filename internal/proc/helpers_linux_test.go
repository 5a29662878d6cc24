package proc

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMain makes the test binary a child subreaper, so that double-forked
// test processes are re-parented to it rather than to init; the tests can
// then reap them and prove that nothing is left behind.
func TestMain(m *testing.M) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "become child subreaper: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// pidMax is the kernel's pid limit (pid_max): no pid reaches it.
func pidMax(tb testing.TB) int {
	tb.Helper()
	max, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		tb.Fatal(err)
	}
	n, _ := strconv.Atoi(string(max[:len(max)-1]))
	return n
}
