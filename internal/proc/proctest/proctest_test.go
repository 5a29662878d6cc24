package proctest

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TestFindAndState starts a process with a variable of its own, finds it
// by that variable, and sees it stop being alive once it is reaped.
func TestFindAndState(t *testing.T) {
	kv := "PROCTEST_TAG=" + strconv.Itoa(os.Getpid())
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), kv)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Start returns once the child has begun to exec, which may not yet
	// have laid out its new environment: look until it has.
	var found []Process
	for deadline := time.Now().Add(5 * time.Second); len(found) == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		found = WithVar(kv)
	}
	if len(found) != 1 || found[0].PID != pid || found[0].Cmdline != "sleep 60" || !HasVar(found[0].Env, kv) {
		t.Errorf("WithVar(%q) = %+v, want only pid %d running sleep 60", kv, found, pid)
	}
	if !Alive(pid) || State(pid) == 0 || StatField(pid, 4) != strconv.Itoa(os.Getpid()) {
		t.Errorf("pid %d: alive %v, state %q, ppid %q; want alive, our child", pid, Alive(pid), State(pid), StatField(pid, 4))
	}
	if n, ok := RSS(pid); !ok || n == 0 {
		t.Errorf("RSS(%d) = %d, %v; want some memory", pid, n, ok)
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for Alive(pid) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if Alive(pid) || len(WithVar(kv)) != 0 || State(pid) != 0 || Cmdline(pid) != "" {
		t.Errorf("pid %d after it was reaped: alive %v, found %v, state %q", pid, Alive(pid), WithVar(kv), State(pid))
	}
}
