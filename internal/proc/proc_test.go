package proc

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

func itoa(n int) string { return strconv.Itoa(n) }

func TestStartTime(t *testing.T) {
	st, err := StartTime(os.Getpid())
	if err != nil || st == 0 {
		t.Fatalf("StartTime(self) = %d, %v", st, err)
	}
	if !Alive(Proc{PID: os.Getpid(), Start: st}) {
		t.Error("Alive(self) = false")
	}
	if Alive(Proc{PID: os.Getpid(), Start: st + 1}) {
		t.Error("Alive with a wrong start time = true")
	}
	n := pidMax(t)
	for _, pid := range []int{n + 1, 0, -1} {
		if _, err := StartTime(pid); err == nil {
			t.Errorf("StartTime(%d) succeeded", pid)
		}
		if Alive(Proc{PID: pid}) {
			t.Errorf("Alive(%d) = true", pid)
		}
	}
}

// TestZombie checks that an exited but unreaped child counts as ended.
func TestZombie(t *testing.T) {
	cookie := newCookie(t)
	noLeftovers(t, cookie)
	// Not started with the reaping goroutine, so it stays a zombie.
	cmd := exec.Command("sh", "-c", "read x; exit 0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), cookie)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started.Store(cmd.Process.Pid, true)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		started.Delete(cmd.Process.Pid)
	})
	pid := cmd.Process.Pid
	st, err := StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	tree := Tree{Leader: Proc{PID: pid, Start: st}, Cookie: cookie}
	if got := tree.Members(true); len(got) != 1 || got[0] != tree.Leader {
		t.Fatalf("Members = %v; want the leader", got)
	}
	in.Close()
	eventually(t, "the child to become a zombie", func() bool { return !proctest.Alive(pid) })
	if _, err := StartTime(pid); err != nil {
		t.Errorf("StartTime of a zombie: %v", err)
	}
	if Alive(tree.Leader) {
		t.Error("zombie is alive")
	}
	if m := tree.Members(true); len(m) != 0 {
		t.Errorf("Members of a zombie tree = %v", m)
	}
	if RSS([]Proc{tree.Leader}) != 0 {
		t.Error("RSS of a zombie is not 0")
	}
	if err := Signal(tree.Leader, unix.SIGKILL); err != nil {
		t.Errorf("Signal to a zombie: %v", err)
	}
	if err := tree.SignalGroup(unix.SIGKILL); err != nil {
		t.Errorf("SignalGroup with a zombie leader: %v", err)
	}
	if sv, err := tree.Kill(200 * time.Millisecond); err != nil || len(sv) != 0 {
		t.Errorf("Kill of a zombie tree = %v, %v", sv, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("zombie exit: %v", err)
	}
}

// TestTableRSSAndStopped: a scan's table gives a process's memory and
// whether it is stopped as reading the process itself does; a process
// it did not see as it is (another start time) is read afresh.
func TestTableRSSAndStopped(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	st, err := StartTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	p := Proc{PID: cmd.Process.Pid, Start: st}
	syscall.Kill(p.PID, syscall.SIGSTOP)
	deadline := time.Now().Add(10 * time.Second)
	for !Stopped(p) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	tb, err := ReadTable()
	if err != nil {
		t.Fatal(err)
	}
	// The table's count is the kernel's rough one: within a megabyte.
	if got, want := tb.RSS([]Proc{p}), RSS([]Proc{p}); got == 0 || got > want+1<<20 || want > got+1<<20 {
		t.Errorf("the table's RSS of a stopped sleep = %d, reading it = %d", got, want)
	}
	if !tb.Stopped(p) {
		t.Error("the table does not see the stopped sleep stopped")
	}
	other := Proc{PID: p.PID, Start: st + 1}
	if tb.RSS([]Proc{other}) != 0 || tb.Stopped(other) {
		t.Error("a process of another start time is counted")
	}
	var none *Table
	if none.RSS([]Proc{p}) != RSS([]Proc{p}) || !none.Stopped(p) {
		t.Error("no table: not read afresh")
	}
	syscall.Kill(p.PID, syscall.SIGCONT)
}
