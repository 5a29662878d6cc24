package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Descriptors the starting process left open without close-on-exec (a
// shell's fd 10, a pipe on fd 251) reach neither the daemon, nor a
// holder, nor any runtime: the daemon has only what it opened itself
// besides 0, 1 and 2, and each runtime starts with only the descriptors
// its driver gives it (none of its holder's sockets among them).
func TestStrayDescriptorsAreNotInherited(t *testing.T) {
	needPython(t)
	e := newEnv(t)
	stray := filepath.Join(e.home, "stray-file")
	if err := os.WriteFile(stray, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(e.home, "stray-fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The first call, which starts the daemon, runs from a shell that
	// left both open, as a person's shell or an agent's harness may.
	pre := []string{"bash", "-c", fmt.Sprintf(`exec 10<%q 251<>%q; exec "$@"`, stray, fifo), "bash"}
	if _, stderr, code := e.runWith(runOpts{pre: pre}, "exec", "py", "1"); code != 0 {
		t.Fatalf("exec: exit %d: %s", code, stderr)
	}
	if _, stderr, code := e.runWith(runOpts{pre: pre}, "exec", "--runtime", "sh", "shell", "true"); code != 0 {
		t.Fatalf("exec sh: exit %d: %s", code, stderr)
	}
	strayTargets := []string{stray, fifo}

	daemon := fdTargets(t, e.status().PID)
	for fd, target := range daemon {
		if slices.Contains(strayTargets, target) {
			t.Errorf("the daemon has the starting shell's descriptor %d (%s)", fd, target)
		}
	}
	for _, tc := range []struct {
		session string
		want    []int  // the descriptors the driver gives the runtime
		own     string // what the runtime opens itself, if anything
	}{
		// worker: stdin, output pipe; commands, events and its copies of
		// fds 1 and 2, moved high by the worker (issue 14)
		{"py", []int{0, 1, 2, 900, 901, 902, 903}, ""},
		{"shell", []int{0, 1, 2}, "/dev/tty"}, // terminal on a PTY; the shell opens its tty
	} {
		for fd, target := range fdTargets(t, e.session(tc.session).Holder) {
			if slices.Contains(strayTargets, target) {
				t.Errorf("session %s's holder has the starting shell's descriptor %d (%s)", tc.session, fd, target)
			}
		}
		fds := fdTargets(t, e.session(tc.session).PID)
		var got []int
		for fd, target := range fds {
			if fd > 2 && target == tc.own {
				continue
			}
			got = append(got, fd)
			if slices.Contains(strayTargets, target) {
				t.Errorf("session %s's runtime has the starting shell's descriptor %d (%s)", tc.session, fd, target)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("session %s's runtime has descriptors %v (%v), want only %v", tc.session, got, fds, tc.want)
		}
	}
}

// A daemon started by hand from such a shell keeps them from its
// runtimes too.
func TestStrayDescriptorsOfAHandStartedDaemon(t *testing.T) {
	needPython(t)
	e := newEnv(t)
	stray := filepath.Join(e.home, "stray-file")
	if err := os.WriteFile(stray, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", fmt.Sprintf(`exec 10<%q; exec "$@"`, stray), "bash", e.bin, "daemon")
	cmd.Env, cmd.Dir = e.vars, e.home
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		e.run("stop")
		<-done
	}()
	if !waitFor(10*time.Second, func() bool { _, _, code := e.run("status"); return code == 0 }) {
		t.Fatal("the daemon started by hand did not answer")
	}
	e.must(0, "exec", "py", "1")
	for fd, target := range fdTargets(t, e.session("py").PID) {
		if target == stray {
			t.Errorf("the runtime has the hand-started daemon's inherited descriptor %d (%s)", fd, target)
		}
	}
}

// fdTargets lists a process's open descriptors and what each refers to.
func fdTargets(t *testing.T, pid int) map[int]string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("cannot list the descriptors of pid %d: %v", pid, err)
	}
	fds := map[int]string{}
	for _, ent := range ents {
		fd, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		target, err := os.Readlink(filepath.Join(dir, ent.Name()))
		if err != nil {
			continue // closed since it was listed
		}
		fds[fd] = strings.TrimSuffix(target, " (deleted)")
	}
	return fds
}
