package proc

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/testenv"
)

// TestWaitsOnStdin: a process blocked reading descriptor 0 — in read,
// select or poll — is seen waiting; one asleep, or waiting on another
// descriptor, is not.
func TestWaitsOnStdin(t *testing.T) {
	py, _ := testenv.Python()
	if py == "" {
		py = "python3"
	}
	cases := []struct {
		name  string
		argv  []string
		waits bool
	}{
		{"read", []string{"sh", "-c", "read x"}, true},
		{"select", []string{py, "-c", "import select,sys; select.select([sys.stdin],[],[])"}, true},
		{"poll", []string{py, "-c", "import select; p=select.poll(); p.register(0, select.POLLIN); p.poll()"}, true},
		{"epoll", []string{py, "-c", "import select; e=select.epoll(); e.register(0, select.EPOLLIN); e.poll()"}, true},
		{"epoll for writing", []string{py, "-c", "import select,os; r,w=os.pipe(); e=select.epoll(); e.register(0, select.EPOLLOUT); e.register(r, select.EPOLLIN); e.poll()"}, false},
		{"select on another descriptor", []string{py, "-c", "import os,select; r,w=os.pipe(); select.select([r],[],[])"}, false},
		{"sleep", []string{"sleep", "30"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := exec.LookPath(c.argv[0]); err != nil {
				t.Skipf("needs %s: %v", c.argv[0], err)
			}
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			cmd := exec.Command(c.argv[0], c.argv[1:]...)
			cmd.Stdin = r
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			r.Close()
			started.Store(cmd.Process.Pid, true)
			defer func() {
				cmd.Process.Kill()
				cmd.Wait()
				started.Delete(cmd.Process.Pid)
			}()
			st, err := StartTime(cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			p := Proc{PID: cmd.Process.Pid, Start: st}
			// Give it time to reach its blocking call (on a loaded
			// machine, seconds), then look for a while: the answer must
			// hold steadily.
			time.Sleep(300 * time.Millisecond)
			for deadline := time.Now().Add(10 * time.Second); c.waits && !WaitsOnStdin(p) && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			for range 5 {
				if got := WaitsOnStdin(p); got != c.waits {
					t.Fatalf("WaitsOnStdin = %v, want %v", got, c.waits)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if c.waits {
				// An answer frees it: it is no longer waiting.
				w.Write([]byte("x\n"))
				w.Close()
				eventually(t, "the process to take its line", func() bool { return !WaitsOnStdin(p) })
			}
		})
	}
}

// TestHasOpen: a process holding a file open is seen holding it, under
// another name for it too; a file it does not hold, or one that does not
// exist, is not.
func TestHasOpen(t *testing.T) {
	dir := t.TempDir()
	held, other := dir+"/held", dir+"/other"
	for _, f := range []string{held, other} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(held, dir+"/link"); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command("sleep", "30")
	cmd.Stdin = in
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	if !HasOpen(pid, held) || !HasOpen(pid, dir+"/link") {
		t.Errorf("a process holding %s is not seen holding it", held)
	}
	if HasOpen(pid, other) || HasOpen(pid, dir+"/missing") {
		t.Errorf("a process is seen holding a file it does not hold")
	}
}
