package session

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/holder"
)

// leave lets m's sessions go on in their holders, as a daemon that
// leaves, and ends m: its table is emptied.
func leave(m *Manager) {
	m.Leave()
	m.mu.Lock()
	clear(m.slots)
	m.mu.Unlock()
}

// nextDaemon is a second manager on m's directories, as the daemon that
// starts after m left its sessions to their holders. Holders in the
// test's process cannot be ended by a daemon that took them up (their
// pid is the test's), so it leaves them too when the test ends, and
// their runtimes are ended.
func nextDaemon(t *testing.T, m *Manager) *Manager {
	t.Helper()
	d := dirsOf(m)
	n := NewManager(Config{State: d.state, RuntimeDir: d.runtime, Holders: holder.InProcess{}})
	testDirs.Store(n, d)
	t.Cleanup(func() {
		defer testDirs.Delete(n)
		leave(n)
		for _, f := range fakes.in(d.runtime) {
			f.exit(driver.Exit{Code: -1, Signal: 9})
		}
	})
	return n
}

// stall puts a listener that accepts nothing at the socket of name's
// holder, which keeps listening where it was moved to: a holder that does
// not answer yet. The returned function lets it answer: the connection
// waiting in the queue is accepted and joined to the holder.
func stall(t *testing.T, m *Manager, name string) (answer func()) {
	t.Helper()
	sock := holder.SocketName(m.holdersDir, describe(t, m, name).Generation)
	moved := sock + ".moved"
	if err := os.Rename(sock, moved); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return func() {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				h, err := net.Dial("unix", moved)
				if err != nil {
					c.Close()
					continue
				}
				go func() { io.Copy(h, c); h.(*net.UnixConn).CloseWrite() }()
				go func() { io.Copy(c, h); c.(*net.UnixConn).CloseWrite() }()
			}
		}()
	}
}

// A holder that has not answered when the daemon starts does not hold
// the start up: its session is listed as being taken up, calls on it are
// told to retry, and it is taken up, names and all, once the holder
// answers.
func TestAHolderThatAnswersLate(t *testing.T) {
	m := newTestManager(t)
	execOK(t, m, "late", req("names kept\nvalue 1"))
	f, sent := startBlocked(t, m, "late", req("print before\nblock"))
	answer := stall(t, m, "late")
	leave(m)
	if r := await(t, sent); r.err != nil || r.r.Status != api.StatusRunning {
		t.Fatalf("the cell's reply as its daemon left: %+v", r)
	}

	n := nextDaemon(t, m)
	t0 := time.Now()
	n.AdoptAll(200 * time.Millisecond)
	n.RecoverLost()
	if took := time.Since(t0); took > 2*time.Second {
		t.Errorf("the daemon's start waited %s for a holder that does not answer", took)
	}
	info := describe(t, n, "late")
	if info.State != api.StateAdopting || !strings.Contains(info.Problem, "has not answered yet") || info.Holder == 0 || len(info.Names) != 1 {
		t.Errorf("the session as listed: %+v", info)
	}
	if l := n.List(false); len(l) != 1 || l[0].State != api.StateAdopting {
		t.Errorf("the listing: %+v", l)
	}
	_, err := n.Exec(context.Background(), "late", req("value 2"), nil)
	if e := wantCode(t, err, api.CodeAdopting); len(e.Next) != 2 || e.Next[1].Do != api.DoKill || !strings.Contains(e.Hint, "retry") {
		t.Errorf("exec on it: %+v", e)
	}
	if _, err := n.Wait(context.Background(), "late", api.WaitRequest{Client: bob}, nil); codeOf(err) != api.CodeAdopting {
		t.Errorf("wait on it: %v", err)
	}

	// Its record read meanwhile keeps the cell running: its holder has
	// not said yet which cell runs on.
	rec, err := n.Record("late", bob)
	if err != nil {
		t.Fatal(err)
	}
	entries, _, _ := rec.Since(0)
	last := entries[len(entries)-1]
	if last.Kind != api.EntryCell || last.Status != api.StatusRunning {
		t.Errorf("the cell in flight as the record says while being taken up: %+v", last)
	}

	answer()
	w, err := n.Wait(context.Background(), "late", api.WaitRequest{Client: alice, Timeout: api.Seconds(0.2)}, nil)
	if err != nil || w.Status != api.StatusRunning {
		t.Fatalf("wait on the cell once its holder answered: %+v %v", w, err)
	}
	f.Finish(driver.Result{Status: api.StatusDone, Value: "'blocked'"})
	w, err = n.Wait(context.Background(), "late", api.WaitRequest{Client: alice, Timeout: api.Seconds(10)}, nil)
	if err != nil || w.Value != "'blocked'" || w.Output != "" && w.Output != "before\n" {
		t.Fatalf("the cell's end: %+v %v", w, err)
	}
	if e, _ := rec.Get(last.Seq); e.Status != api.StatusDone || e.Output != "before\n" {
		t.Errorf("the cell's entry: %+v", e)
	}
	r, err := n.Exec(context.Background(), "late", req("value 2"), nil)
	if err != nil || r.Value != "2" || r.Generation != info.Generation {
		t.Fatalf("exec once the holder answered: %+v %v", r, err)
	}
	if i := describe(t, n, "late"); i.State != api.StateIdle || len(i.Names) != 1 {
		t.Errorf("the session once taken up: %+v", i)
	}
	if l := n.List(false); len(l) != 1 {
		t.Errorf("the listing once taken up: %+v", l)
	}
}

// kill ends a session being taken up, and its holder answering after
// that does not bring it back.
func TestKillWhileAdopting(t *testing.T) {
	m := newTestManager(t)
	execOK(t, m, "gone", req("value 1"))
	f := fakeOf(t, describe(t, m, "gone").Generation)
	answer := stall(t, m, "gone")
	leave(m)

	n := nextDaemon(t, m)
	n.AdoptAll(100 * time.Millisecond)
	n.RecoverLost()
	reply, err := n.Kill("gone", api.ControlRequest{Client: alice})
	if err != nil || reply.Info.State != Dead || reply.Info.Death == nil || reply.Info.Death.By != api.ByKill {
		t.Fatalf("kill: %+v %v", reply, err)
	}
	f.waitExited(t)
	answer()
	time.Sleep(200 * time.Millisecond)
	if l := n.List(false); len(l) != 0 {
		t.Errorf("after kill, the holder answering: %+v", l)
	}
	_, err = n.Wait(context.Background(), "gone", api.WaitRequest{Client: bob}, nil)
	if d := wantCode(t, err, api.CodeDead).Death; d == nil || d.By != api.ByKill {
		t.Errorf("after kill: %+v", d)
	}
}

// Sockets where nobody answers (a listener that never accepts) cost the
// daemon's start nothing beyond its wait, and a session whose live note
// names a dead holder is reported lost even if something listens at its
// socket.
func TestSilentSocketsDoNotHoldTheStartUp(t *testing.T) {
	m := newTestManager(t)
	if err := os.MkdirAll(m.holdersDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		ln, err := net.Listen("unix", holder.SocketName(m.holdersDir, strings.Repeat("0", 10)+string(rune('a'+i/26))+string(rune('a'+i%26))))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
	}
	t0 := time.Now()
	if names := m.AdoptAll(300 * time.Millisecond); len(names) != 0 {
		t.Errorf("took up %v", names)
	}
	m.RecoverLost()
	if took := time.Since(t0); took > 2*time.Second {
		t.Errorf("40 silent sockets held the start up for %s", took)
	}
	if l := m.List(false); len(l) != 0 {
		t.Errorf("listed: %+v", l)
	}
	execOK(t, m, "fresh", req("value 1"))
	m.mu.Lock()
	waiting := len(m.dials)
	m.mu.Unlock()
	if waiting != 40 {
		t.Errorf("%d dials wait, want 40", waiting)
	}
	m.StopAll("the test ended")
	m.mu.Lock()
	waiting = len(m.dials)
	m.mu.Unlock()
	if waiting != 0 {
		t.Errorf("%d dials wait after the stop", waiting)
	}
}
