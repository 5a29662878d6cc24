package sandbox

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseLink(t *testing.T) {
	for _, c := range []struct {
		line                 string
		pid, ppid, pgid, sid int
		start                uint64
		ok                   bool
	}{
		{"42 (sleep) S 41 40 39 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 12345 1000 10 18446744073709551615", 42, 41, 40, 39, 12345, true},
		{"43 (a) b) c) R 1 43 43 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0", 43, 1, 43, 43, 99, true},
		{"44 (x y) S 2 3 4 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7\n", 44, 2, 3, 4, 7, true},
		{"", 0, 0, 0, 0, 0, false},
		{"45 (short) S 1 2 3", 0, 0, 0, 0, 0, false},
		{"x (bad pid) S 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7", 0, 0, 0, 0, 0, false},
		{"46 no parens S 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7", 0, 0, 0, 0, 0, false},
		{"47 (n) S one 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7", 0, 0, 0, 0, 0, false},
		{"48 (n) S 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -7", 0, 0, 0, 0, 0, false},
	} {
		l, err := parseLink([]byte(c.line))
		if (err == nil) != c.ok {
			t.Errorf("parseLink(%q): err %v, want ok=%v", c.line, err, c.ok)
			continue
		}
		if c.ok && (l.Proc.PID != c.pid || l.PPID != c.ppid || l.PGID != c.pgid || l.SID != c.sid || l.Proc.Start != c.start) {
			t.Errorf("parseLink(%q) = %+v", c.line, l)
		}
	}
}

func FuzzParseLink(f *testing.F) {
	f.Add([]byte("42 (sleep) S 41 40 39 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 12345 1000"))
	f.Add([]byte("1 ()) ) ( S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := parseLink(b)
		if err == nil && l.Proc.PID <= 0 {
			t.Fatalf("parseLink accepted pid %d", l.Proc.PID)
		}
	})
}

func TestStatusAndEnviron(t *testing.T) {
	if !statusNoNewPrivs([]byte("Name:\tx\nNoNewPrivs:\t1\nSeccomp:\t0\n")) {
		t.Error("NoNewPrivs 1 not seen")
	}
	if statusNoNewPrivs([]byte("Name:\tx\nNoNewPrivs:\t0\n")) || statusNoNewPrivs([]byte("Name:\tx\n")) {
		t.Error("NoNewPrivs seen where it is 0 or absent")
	}
	env := []byte("A=1\x00POLYREPL_SESSIONX=no\x00POLYREPL_SESSION=abc\x00B=2\x00")
	if got := envEntry(env, "POLYREPL_SESSION"); got != "POLYREPL_SESSION=abc" {
		t.Errorf("envEntry = %q", got)
	}
	if got := envEntry([]byte("A=1\x00"), "POLYREPL_SESSION"); got != "" {
		t.Errorf("envEntry found %q in an environment without it", got)
	}
}

// start runs argv with env and returns it, ended at cleanup.
func start(t *testing.T, env []string, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot run %s: %v", argv[0], err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// The parent resumes before the kernel has laid out the new
	// program's environment: wait until it shows.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cmdline")
		if strings.HasPrefix(string(b), argv[len(argv)-2]+"\x00") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cmd
}

// TestReadPeer reads real processes: this one, a child with a cookie, a
// child under setpriv --no-new-privs.
func TestReadPeer(t *testing.T) {
	self, err := ReadPeer(os.Getpid(), "POLYREPL_SESSION", 0)
	if err != nil {
		t.Fatal(err)
	}
	if self.NoNewPrivs != SelfNoNewPrivs() || len(self.Chain) == 0 || self.Chain[0].Proc.PID != os.Getpid() {
		t.Fatalf("ReadPeer(self) = %+v", self)
	}
	if wd, _ := os.Getwd(); self.Cwd != wd {
		t.Errorf("ReadPeer(self).Cwd = %q; want %q", self.Cwd, wd)
	}
	if len(self.Chain) > 1 && self.Chain[1].Proc.PID != os.Getppid() {
		t.Errorf("the chain's second link is %d, not the parent %d", self.Chain[1].Proc.PID, os.Getppid())
	}
	// Ancestors older than since are none of the sessions': the walk
	// ends at the first.
	if short, err := ReadPeer(os.Getpid(), "POLYREPL_SESSION", self.Chain[0].Proc.Start+1); err != nil || len(short.Chain) != 1 {
		t.Errorf("ReadPeer since after this process's start read %d links (%v); want 1", len(short.Chain), err)
	}

	child := start(t, []string{"A=1", "POLYREPL_SESSION=g42"}, "sleep", "30")
	p, err := ReadPeer(child.Process.Pid, "POLYREPL_SESSION", 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Cookie != "POLYREPL_SESSION=g42" {
		t.Errorf("cookie %q", p.Cookie)
	}
	if p.Chain[0].PGID != child.Process.Pid || p.Chain[1].Proc.PID != os.Getpid() {
		t.Errorf("chain %+v", p.Chain)
	}
	if i, _ := p.Place([]Mark{{Leader: self.Chain[0].Proc}}); i != 0 {
		t.Errorf("a child of this process is not placed under it")
	}

	if SelfNoNewPrivs() {
		t.Skip("this test runs with no_new_privs already")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	// start waits until setpriv has set the flag and run sleep.
	nnp := start(t, nil, "setpriv", "--no-new-privs", "sleep", "30")
	p, err = ReadPeer(nnp.Process.Pid, "POLYREPL_SESSION", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !p.NoNewPrivs {
		t.Fatalf("a process under setpriv --no-new-privs read as without it: %+v", p)
	}
	if _, err := ReadPeer(1<<30, "POLYREPL_SESSION", 0); err == nil {
		t.Fatal("ReadPeer of no process succeeded")
	}
}

// BenchmarkReadPeer is what the daemon pays per connection to know who
// connected: this process and its ancestors.
func BenchmarkReadPeer(b *testing.B) {
	for _, c := range []struct {
		name  string
		since uint64
	}{{"whole ancestry", 0}, {"no session older", ^uint64(0)}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := ReadPeer(os.Getpid(), "POLYREPL_SESSION", c.since); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
