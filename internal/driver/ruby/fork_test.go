package ruby

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// TestFork: a fork of Ruby's worker between cells is a second worker
// holding the same names, each changing its own from then on; the copy
// speaks on its own channels, has its own process group (an interrupt of
// either reaches its own only), and its end is seen with its status
// though it is not this process's child. The fork says which thread it
// did not copy.
func TestFork(t *testing.T) {
	parent, prec := start(t)
	drivertest.MustValue(t, parent, prec, 1, "x = [1, 2, 3]\n"+
		"loader = Thread.new { sleep 60 }\nloader.name = 'loader'\nsleep 0.1 until loader.status == 'sleep'\nx.length")
	prec.TakeOutput()

	crec := drivertest.NewAsker()
	child, f, into := drivertest.Fork(t, parent, worker.Driver{R: Runtime}, driver.Spec{Exe: testRuby(t), ValueLimit: 10000}, crec)
	if !strings.Contains(strings.Join(f.Threads, ","), "loader") || f.ThreadsTotal != 1 {
		t.Errorf("the fork's threads not copied: %v (%d), want the loader", f.Threads, f.ThreadsTotal)
	}
	if g := drivertest.PGID(t, f.PID); g != f.PID {
		t.Errorf("the copy's process group %d, want its own (%d)", g, f.PID)
	}

	// The copy holds none of its parent's channels: the pipes both hold
	// are those the fork said it shares.
	if held, said := drivertest.HeldPipes(t, parent.PID(), f.PID), drivertest.PipesSaid(f.Shared); !slices.Equal(held, said) {
		t.Errorf("the pipes the copy shares with its parent: %q, the fork said %q", held, said)
	}

	if v := drivertest.MustValue(t, child, crec.Recorder, 2, "x << 4\nputs 'in the copy'\nx"); v != "[1, 2, 3, 4]" {
		t.Errorf("the copy's x: %s", v)
	}
	if out := crec.TakeOutput(); out != "in the copy\n" {
		t.Errorf("the copy's output %q", out)
	}
	// The copy is not of the parent's tree, and what it starts carries
	// its own cookie.
	for _, m := range parent.Tree().Members(true) {
		if m.PID == f.PID {
			t.Errorf("the copy %d is a member of the parent's tree", f.PID)
		}
	}
	key, value, _ := strings.Cut(into.Cookie, "=")
	if v := drivertest.MustValue(t, child, crec.Recorder, 9, "`sh -c 'echo $"+key+"'`.strip"); v != strconv.Quote(value) {
		t.Errorf("a process the copy started has cookie %s, want %s", v, into.Cookie)
	}
	if v := drivertest.MustValue(t, parent, prec, 2, "x"); v != "[1, 2, 3]" {
		t.Errorf("the parent's x after the copy changed its own: %s", v)
	}
	if out := prec.TakeOutput(); out != "" {
		t.Errorf("the parent's output %q: the copy's reached it", out)
	}
	if v := drivertest.MustValue(t, child, crec.Recorder, 3, "[loader.alive?, Thread.list.size]"); v != "[false, 1]" {
		t.Errorf("the copy's threads: %s, want the loader not running there", v)
	}
	if v := drivertest.MustValue(t, child, crec.Recorder, 4, "system('echo from a subprocess; echo to stderr >&2')"); v != "true" {
		t.Errorf("the copy's subprocess: %s", v)
	}
	if out := crec.TakeOutput(); out != "from a subprocess\nto stderr\n" {
		t.Errorf("the copy's subprocess's output %q", out)
	}
	if out := prec.TakeOutput(); out != "" {
		t.Errorf("the parent's output %q: the copy's subprocess reached it", out)
	}

	// Bytes pass as they were written; the copy's console is its own: a
	// subprocess reading it asks there.
	if v := drivertest.MustValue(t, child, crec.Recorder, 5, `$stdout.write("\xff\n".b); print "caf\u00e9\n"; STDOUT.external_encoding`); v != "nil" {
		t.Errorf("the copy's STDOUT encoding: %s", v)
	}
	if out := crec.TakeOutput(); out != "\xff\ncaf\u00e9\n" {
		t.Errorf("the copy's bytes %q", out)
	}
	if err := child.Run(6, "system('read line; echo got $line')"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-crec.Asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the copy's subprocess reading its console did not ask")
	}
	if err := child.(driver.Answerer).Answer("bob", false); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-crec.Done:
		if r.Status != "done" || r.Value != "true" {
			t.Errorf("the copy's subprocess reading its console: %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the copy's subprocess reading its console did not end")
	}
	if out := crec.TakeOutput(); !strings.HasSuffix(out, "got bob\n") {
		t.Errorf("the copy's subprocess's answer: output %q", out)
	}

	// An interrupt of the copy, escalated to its process group, ends its
	// cell and leaves the parent's running cell alone.
	if err := parent.Run(3, "sleep 2\n'slept'"); err != nil {
		t.Fatal(err)
	}
	r := drivertest.Interrupt(t, child, crec.Recorder, 7, "loop {}", 250*time.Millisecond)
	if r.Status != "interrupted" {
		t.Errorf("the copy's interrupted cell: %+v", r)
	}
	select {
	case r := <-prec.Done:
		if r.Status != "done" || r.Value != `"slept"` {
			t.Errorf("the parent's cell while the copy was interrupted: %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the parent's cell did not end")
	}

	// The copy's end is seen, with its status, though it is the parent
	// worker's child and not this process's.
	if err := child.Run(8, "exit!(7)"); err != nil {
		t.Fatal(err)
	}
	select {
	case ex := <-crec.Exit:
		if ex.Code != 7 {
			t.Errorf("the copy's end: %+v, want status 7", ex)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the copy's end was not seen")
	}
	if proc.Alive(child.Tree().Leader) {
		t.Error("the copy is alive after its end was reported")
	}
	if v := drivertest.MustValue(t, parent, prec, 4, "[x.length, loader.alive?]"); v != "[3, true]" {
		t.Errorf("the parent after the copy ended: %s", v)
	}
}

// TestForkRefused: a fork asked without a directory and an end marker is
// refused with the reason, and the worker goes on.
func TestForkRefused(t *testing.T) {
	p, rec := start(t)
	drivertest.MustValue(t, p, rec, 1, "x = 1")
	_, err := p.(driver.Forker).Fork(driver.ForkInto{}, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "needs a directory and an end marker") {
		t.Errorf("a fork into nowhere: %v", err)
	}
	if v := drivertest.MustValue(t, p, rec, 2, "x + 1"); v != "2" {
		t.Errorf("the worker after a refused fork: %s", v)
	}
}
