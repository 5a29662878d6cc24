package proc

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testSignalChecksStartTime checks that Signal spares a process whose
// start time differs, signals the right one, and takes a gone one calmly;
// signal_linux_test.go runs it with pidfds and without.
func testSignalChecksStartTime(t *testing.T) {
	cookie := newCookie(t)
	noLeftovers(t, cookie)
	c := start(t, cookie, "exec sleep 1000")
	p := c.proc(t)
	wrong := Proc{PID: p.PID, Start: p.Start + 1}
	if err := Signal(wrong, unix.SIGKILL); err != nil {
		t.Fatalf("Signal with a wrong start time: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	if !Alive(p) {
		t.Fatal("process signalled despite a wrong start time")
	}
	if err := Signal(p, unix.SIGKILL); err != nil {
		t.Fatalf("Signal: %v", err)
	}
	c.waitDone(t)
	if ws := c.cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signal() != unix.SIGKILL {
		t.Errorf("process ended by %v; want SIGKILL", ws.Signal())
	}
	if err := Signal(p, unix.SIGKILL); err != nil {
		t.Errorf("Signal to a gone process: %v", err)
	}
}

// TestStillAlive checks the decision made on re-reading a process right
// before signalling it.
func TestStillAlive(t *testing.T) {
	p := Proc{PID: 42, Start: 7}
	for _, c := range []struct {
		name string
		s    stat
		err  error
		want bool
	}{
		{"same process", stat{pid: 42, start: 7, state: 'S'}, nil, true},
		{"same process, stopped", stat{pid: 42, start: 7, state: 'T'}, nil, true},
		{"gone", stat{}, unix.ESRCH, false},
		{"gone, read nothing", stat{}, unix.ENOENT, false},
		{"unreadable", stat{pid: 42, start: 7, state: 'S'}, unix.EACCES, false},
		{"pid reused", stat{pid: 42, start: 8, state: 'S'}, nil, false},
		{"pid reused earlier", stat{pid: 42, start: 6, state: 'R'}, nil, false},
		{"zombie", stat{pid: 42, start: 7, state: 'Z'}, nil, false},
		{"being torn down", stat{pid: 42, start: 7, state: 'X'}, nil, false},
	} {
		if got := stillAlive(p, c.s, c.err); got != c.want {
			t.Errorf("%s: stillAlive = %v; want %v", c.name, got, c.want)
		}
	}
}

func TestSignalRefuses(t *testing.T) {
	self, err := StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	init1, _ := StartTime(1)
	pg := unix.Getpgrp()
	pgStart, _ := StartTime(pg)
	for _, p := range []Proc{{PID: 0}, {PID: -1}, {PID: -os.Getpid()}, {PID: 1, Start: init1}, {PID: os.Getpid(), Start: self}, {PID: pg, Start: pgStart}} {
		if err := Signal(p, unix.Signal(0)); !errors.Is(err, errRefused) {
			t.Errorf("Signal(%v) = %v; want a refusal", p, err)
		}
	}
	for _, p := range []Proc{{PID: 0}, {PID: -5}, {PID: 1, Start: init1}, {PID: os.Getpid(), Start: self}, {PID: pg, Start: pgStart}} {
		if err := (Tree{Leader: p}).SignalGroup(unix.Signal(0)); !errors.Is(err, errRefused) {
			t.Errorf("SignalGroup(%v) = %v; want a refusal", p, err)
		}
	}
}

func TestSignalGroup(t *testing.T) {
	cookie := newCookie(t)
	noLeftovers(t, cookie)
	c := start(t, cookie, "sleep 1009 & sleep 1010 & wait")
	tree := c.tree(t, cookie)
	eventually(t, "the group to start", func() bool { return len(tree.Members(false)) == 3 })
	// A wrong start time means the pid was reused: the group is not ours.
	if err := (Tree{Leader: Proc{PID: tree.Leader.PID, Start: tree.Leader.Start + 1}}).SignalGroup(unix.SIGKILL); err != nil {
		t.Fatalf("SignalGroup with a wrong start time: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := len(tree.Members(false)); n != 3 {
		t.Fatalf("SignalGroup with a wrong start time reached the group: %d members left", n)
	}
	if err := tree.SignalGroup(unix.SIGKILL); err != nil {
		t.Fatalf("SignalGroup: %v", err)
	}
	c.waitDone(t)
	eventually(t, "the group to end", func() bool { return len(tree.Members(true)) == 0 })
}

// TestSignalGroupLeaderGone checks that members left in the group after the
// leader exited are signalled one by one.
func TestSignalGroupLeaderGone(t *testing.T) {
	cookie := newCookie(t)
	noLeftovers(t, cookie)
	// The leader ends once its identity is read (a leader that ended
	// before it was read failed this test under load).
	gone := filepath.Join(t.TempDir(), "gone")
	c := start(t, cookie, "(sleep 1011 &); while [ ! -e "+gone+" ]; do sleep 0.01; done")
	tree := c.tree(t, cookie)
	if err := os.WriteFile(gone, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c.waitDone(t)
	var ms []Proc
	eventually(t, "the orphan", func() bool { ms = tree.Members(false); return len(ms) == 1 })
	if err := tree.SignalGroup(unix.SIGKILL); err != nil {
		t.Fatalf("SignalGroup: %v", err)
	}
	eventually(t, "the orphan to die", func() bool { return !Alive(ms[0]) })
}
