package proc

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestWaitsOnStdin: a process blocked reading descriptor 0 — in read,
// select or poll — is seen waiting; one asleep, or waiting on another
// descriptor, is not.
func TestWaitsOnStdin(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
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
			// Give it time to reach its blocking call, then look for a
			// while: the answer must hold steadily.
			time.Sleep(300 * time.Millisecond)
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

func TestEpollReadsStdin(t *testing.T) {
	for _, c := range []struct {
		info string
		want bool
	}{
		{"pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t1038\ntfd:        0 events:       19 data:     7fe100000000  pos:0 ino:98400d sdev:fe00000\n", true},
		{"tfd:        3 events:       19 data: 0\ntfd:        0 events:        4 data: 0\n", false},
		{"tfd:       10 events:       19 data: 0\n", false},
		{"", false},
	} {
		if got := epollReadsStdin([]byte(c.info)); got != c.want {
			t.Errorf("epollReadsStdin(%q) = %v, want %v", c.info, got, c.want)
		}
	}
}

func TestParseSyscall(t *testing.T) {
	for _, s := range []string{"running", "-1 0x7ffd 0x0", "", "0 0x0 0x7f 0x1"} {
		if _, ok := parseSyscall([]byte(s)); ok {
			t.Errorf("parseSyscall(%q) took it for a blocked call", s)
		}
	}
	c, ok := parseSyscall([]byte("270 0x1 0x7ff9e9eca4e0 0x0 0x0 0x0 0x0 0x7ffdf36b3cd0 0x7ff9e991c9ec\n"))
	if !ok || c.nr != 270 || c.args[0] != 1 || c.args[1] != 0x7ff9e9eca4e0 {
		t.Fatalf("parseSyscall = %+v, %v", c, ok)
	}
	n := syscallNums{read: 0, sel: 23, pselect6: 270, poll: 7, ppoll: 271}
	fd0 := func(uint64, int) []byte { return []byte{1} }
	fd3 := func(uint64, int) []byte { return []byte{8} }
	if !stdinWait(c, n, fd0) || stdinWait(c, n, fd3) || stdinWait(c, n, func(uint64, int) []byte { return nil }) {
		t.Error("pselect6: descriptor 0 in the read set decides")
	}
	if stdinWait(blockedCall{nr: 0, args: [5]uint64{5}}, n, fd0) || !stdinWait(blockedCall{nr: 0}, n, fd0) {
		t.Error("read: descriptor 0 decides")
	}
	poll := func(fd int32, ev uint16) func(uint64, int) []byte {
		return func(uint64, int) []byte {
			b := make([]byte, 8)
			b[0], b[4] = byte(fd), byte(ev)
			return b
		}
	}
	pc := blockedCall{nr: 7, args: [5]uint64{0x1000, 1}}
	if !stdinWait(pc, n, poll(0, 1)) || stdinWait(pc, n, poll(0, 4)) || stdinWait(pc, n, poll(3, 1)) {
		t.Error("poll: descriptor 0 waiting to read decides")
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
