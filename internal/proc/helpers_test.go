package proc

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

// started holds the pids whose reaping belongs to an exec.Cmd Wait goroutine,
// so reapOrphans never steals their exit status.
var started sync.Map

// newCookie returns a cookie unique to one test.
func newCookie(tb testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return "POLYREPL_TEST_SESSION=" + hex.EncodeToString(b)
}

// child is a started process reaped by its own goroutine.
type child struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// start runs script under sh in its own process group, with cookie in its
// environment when cookie is not empty, and reaps it in the background.
func start(tb testing.TB, cookie, script string) *child {
	tb.Helper()
	return startArgv(tb, cookie, "sh", "-c", script)
}

// startArgv is start for an arbitrary command line.
func startArgv(tb testing.TB, cookie string, argv ...string) *child {
	tb.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = os.Environ()
	if cookie != "" {
		cmd.Env = append(cmd.Env, cookie)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %q: %v", argv, err)
	}
	started.Store(cmd.Process.Pid, true)
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		started.Delete(cmd.Process.Pid)
		close(c.done)
	}()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			tb.Errorf("pid %d was not reaped", cmd.Process.Pid)
		}
	})
	return c
}

// proc returns the identity of the started process.
func (c *child) proc(tb testing.TB) Proc {
	tb.Helper()
	st, err := StartTime(c.cmd.Process.Pid)
	if err != nil {
		tb.Fatal(err)
	}
	return Proc{PID: c.cmd.Process.Pid, Start: st}
}

// waitDone waits for the child to exit and be reaped.
func (c *child) waitDone(tb testing.TB) {
	tb.Helper()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		tb.Fatalf("pid %d did not exit", c.cmd.Process.Pid)
	}
}

// tree returns the Tree of a started session leader.
func (c *child) tree(tb testing.TB, cookie string) Tree {
	return Tree{Leader: c.proc(tb), Cookie: cookie}
}

// eventually polls cond every 5ms for up to 5 seconds.
func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	tb.Fatalf("timed out waiting for %s", what)
}

// byCmdline maps command lines to the processes running them.
func byCmdline(ps []Proc) map[string]Proc {
	m := make(map[string]Proc, len(ps))
	for _, p := range ps {
		m[proctest.Cmdline(p.PID)] = p
	}
	return m
}

// withCookie lists the live processes whose environment holds cookie,
// found by proctest's scan of /proc rather than by the code under test.
func withCookie(cookie string) []int {
	return proctest.PIDs(proctest.WithVar(cookie))
}

// ourChildren lists the children of the test process, live and zombie.
func ourChildren() (live, zombies []int) {
	es, _ := scan("")
	for _, e := range es {
		if e.ppid != os.Getpid() {
			continue
		}
		if e.zombie() {
			zombies = append(zombies, e.pid)
		} else {
			live = append(live, e.pid)
		}
	}
	return live, zombies
}

// reapOrphans reaps zombie children that no exec.Cmd owns: the re-parented
// orphans of double-forking test trees.
func reapOrphans() {
	_, zs := ourChildren()
	for _, pid := range zs {
		if _, owned := started.Load(pid); !owned {
			_, _ = unix.Wait4(pid, nil, unix.WNOHANG, nil)
		}
	}
}

// noLeftovers registers a cleanup that kills the tree found by cookie and
// fails the test if any process carrying cookie, or any child of the test
// process, remains. Registered first, it runs after the per-child cleanups.
func noLeftovers(tb testing.TB, cookie string) {
	tb.Cleanup(func() {
		if sv, err := (Tree{Cookie: cookie}).Kill(0); err != nil {
			tb.Errorf("cleanup kill: %v %v", sv, err)
		}
		var live, zs []int
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			reapOrphans()
			live, zs = ourChildren()
			if len(live) == 0 && len(zs) == 0 && len(withCookie(cookie)) == 0 {
				return
			}
		}
		tb.Errorf("processes left behind: cookie %v, live children %v, zombie children %v", withCookie(cookie), live, zs)
	})
}
