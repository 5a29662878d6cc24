package proc

import (
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Stopped sees SIGSTOP and SIGCONT; Ignores reads SigIgn.
func TestStoppedAndIgnores(t *testing.T) {
	cmd := exec.Command("sh", "-c", "trap '' INT; exec sleep 30")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start sh: %v", err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	start, err := StartTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	p := Proc{PID: cmd.Process.Pid, Start: start}
	eventually := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 5s", what)
			}
		}
	}
	eventually("sh ignores SIGINT", func() bool { return Ignores(p, unix.SIGINT) })
	if Ignores(p, unix.SIGTERM) || Stopped(p) {
		t.Errorf("sh: ignores SIGTERM %v, stopped %v; want neither", Ignores(p, unix.SIGTERM), Stopped(p))
	}
	unix.Kill(p.PID, unix.SIGSTOP)
	eventually("stopped after SIGSTOP", func() bool { return Stopped(p) })
	unix.Kill(p.PID, unix.SIGCONT)
	eventually("running after SIGCONT", func() bool { return !Stopped(p) })
	if Stopped(Proc{PID: p.PID, Start: p.Start + 1}) || Ignores(Proc{PID: p.PID, Start: p.Start + 1}, unix.SIGINT) {
		t.Errorf("a pid with another start time was taken for the process")
	}
}

func TestStatusMask(t *testing.T) {
	status := []byte("Name:\tpython3\nSigBlk:\t0000000000000000\nSigIgn:\t0000000001001002\nSigCgt:\t0000000180000000\n")
	m, ok := statusMask(status, "SigIgn:")
	if !ok || m != 0x1001002 {
		t.Errorf("SigIgn = %x, %v", m, ok)
	}
	if _, ok := statusMask([]byte("Name: x\n"), "SigIgn:"); ok {
		t.Errorf("a status without SigIgn gave a mask")
	}
}
