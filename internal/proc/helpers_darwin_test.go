package proc

import "testing"

// macOS has no child subreaper: double-forked test processes are
// re-parented to launchd, which reaps them, so the tests need no TestMain.

// pidMax is the kernel's pid limit, no pid reaches it: PID_MAX (99999,
// in XNU's <sys/proc_internal.h>).
func pidMax(testing.TB) int { return 99999 }
