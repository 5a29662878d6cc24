package limit

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets this test binary be three other programs: a memory hog
// (the process a limit is put on), a stand-in busctl (for the VM test,
// which has no systemd) and the init of the VM test's machine.
func TestMain(m *testing.M) {
	if mb := os.Getenv("POLYREPL_TEST_HOG"); mb != "" {
		os.Exit(hog(mb))
	}
	if filepath.Base(os.Args[0]) == "busctl" {
		os.Exit(fakeBusctl(os.Args[1:]))
	}
	if os.Getpid() == 1 && os.Getenv("POLYREPL_IN_VM") != "" {
		os.Exit(vmInit(m))
	}
	os.Exit(m.Run())
}

// hog waits for a line on stdin (so that a limit can be put on it
// first), then takes mb megabytes, touching every page, and says so.
func hog(mb string) int {
	n, _ := strconv.Atoi(mb)
	bufio.NewReader(os.Stdin).ReadString('\n')
	var keep [][]byte
	for i := 0; i < n; i++ {
		b := make([]byte, 1<<20)
		for j := 0; j < len(b); j += 4096 {
			b[j] = 1
		}
		keep = append(keep, b)
	}
	fmt.Printf("hog took %d MB\n", len(keep))
	return 0
}

// hogUnder runs a hog of mb megabytes under a limit of limitMB.
func hogUnder(t *testing.T, l *Limiter, mb, limitMB int) (*Limit, *os.ProcessState, string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "POLYREPL_TEST_HOG="+strconv.Itoa(mb))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lim, err := l.Apply(cmd.Process.Pid, fmt.Sprintf("polyrepl-test-%d", cmd.Process.Pid), int64(limitMB)<<20)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, nil, "", err
	}
	in.Write([]byte("go\n"))
	in.Close()
	cmd.Wait()
	return lim, cmd.ProcessState, out.String(), nil
}

// killedForMemory checks a hog went over its limit and the group says so.
func killedForMemory(t *testing.T, lim *Limit, st *os.ProcessState, out string) {
	t.Helper()
	ws := st.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("a 256 MB hog under %s: %v, output %q; want killed by SIGKILL", lim.Describe(), st, out)
	}
	if !lim.OOMKilled() {
		t.Errorf("OOMKilled() = false after the hog was killed under %s", lim.Describe())
	}
	lim.Release()
	waitGone(t, lim.group)
}

// withinLimit checks a hog that stays under its limit lives and is not
// called out-of-memory.
func withinLimit(t *testing.T, lim *Limit, st *os.ProcessState, out string) {
	t.Helper()
	if !st.Success() || !strings.Contains(out, "hog took 16 MB") {
		t.Errorf("a 16 MB hog under %s: %v, output %q; want it to finish", lim.Describe(), st, out)
	}
	if lim.OOMKilled() {
		t.Errorf("OOMKilled() = true for a hog within %s", lim.Describe())
	}
	lim.Release()
	waitGone(t, lim.group)
}

func waitGone(t *testing.T, dir string) {
	t.Helper()
	if dir == "" {
		return
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return
		}
	}
	t.Errorf("the session's cgroup %s is still there after Release", dir)
}

// TestCgroup holds hogs to a limit with whatever cgroup this machine
// gives the daemon (a cgroup v1 memory group here and in CI, running as
// root).
func TestCgroup(t *testing.T) {
	// A group an earlier daemon left (it died before removing it).
	var stale string
	if dir, err := writableV1(); err == nil {
		stale = filepath.Join(dir, fmt.Sprintf("polyrepl-stale-%d", os.Getpid()))
		if err := os.Mkdir(stale, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l := &Limiter{Want: "cgroup"}
	lim, st, out, err := hogUnder(t, l, 256, 64)
	if err != nil {
		t.Skipf("no cgroup to hold memory limits with here: %v", err)
	}
	if _, err := os.Stat(stale); stale != "" && lim.By == ByCgroupV1 && !errors.Is(err, os.ErrNotExist) {
		os.Remove(stale)
		t.Errorf("the empty group %s an earlier daemon left is still there", stale)
	}
	if lim.By != ByCgroup && lim.By != ByCgroupV1 {
		t.Fatalf("held by %q, want a cgroup", lim.By)
	}
	if b, err := os.ReadFile(filepath.Join(lim.group, "cgroup.procs")); err != nil {
		t.Errorf("the session's group %s: %v", lim.group, err)
	} else if len(strings.TrimSpace(string(b))) != 0 {
		t.Errorf("the session's group still holds %q after its process ended", b)
	}
	killedForMemory(t, lim, st, out)
	lim, st, out, err = hogUnder(t, l, 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	withinLimit(t, lim, st, out)
}

// TestRlimit holds a hog by the rlimit, as asked: its own allocation
// fails (Go's runtime ends it), and nothing calls that an out-of-memory
// kill.
func TestRlimit(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's reservations do not fit under an rlimit on address space")
	}
	l := &Limiter{Want: ByRlimit}
	// RLIMIT_DATA counts address space reserved and never used, of which
	// Go's runtime reserves tens of megabytes as it starts: 256 MB, then.
	lim, st, out, err := hogUnder(t, l, 1024, 256)
	if err != nil {
		t.Fatal(err)
	}
	if lim.By != ByRlimit || st.Success() || !strings.Contains(out, "out of memory") || lim.OOMKilled() {
		t.Errorf("a 1 GB hog under %s: %v, OOMKilled %v, output %.200q; want Go's own out-of-memory failure", lim.Describe(), st, lim.OOMKilled(), out)
	}
	lim, st, out, err = hogUnder(t, l, 16, 256)
	if err != nil {
		t.Fatal(err)
	}
	withinLimit(t, lim, st, out)
}
