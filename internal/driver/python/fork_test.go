package python

import (
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// TestFork: a fork of a worker between cells is a second worker holding
// the same names, each changing its own from then on; the copy speaks on
// its own channels, is interrupted alone, and its end is seen though it
// is not this process's child. The fork says which threads it did not
// copy.
func TestFork(t *testing.T) {
	exe := testenv.NeedPython(t)
	parent, prec := drivertest.StartExe(t, worker.Driver{R: Runtime}, exe)
	drivertest.MustValue(t, parent, prec, 1, "x = [1, 2, 3]\nimport threading, time\n"+
		"loader = threading.Thread(target=lambda: time.sleep(60), name='loader', daemon=True)\nloader.start()\nlen(x)")
	prec.TakeOutput()

	crec := drivertest.NewRecorder()
	child, f, into := drivertest.Fork(t, parent, worker.Driver{R: Runtime}, driver.Spec{Exe: exe, ValueLimit: 10000}, crec)
	if !strings.Contains(strings.Join(f.Threads, ","), "loader") || f.ThreadsTotal != 1 {
		t.Errorf("the fork's threads not copied: %v (%d), want the loader", f.Threads, f.ThreadsTotal)
	}

	if v := drivertest.MustValue(t, child, crec, 2, "x.append(4)\nprint('in the copy')\nx"); v != "[1, 2, 3, 4]" {
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
	key, _, _ := strings.Cut(into.Cookie, "=")
	if v := drivertest.MustValue(t, child, crec, 3, "import subprocess\nsubprocess.run(['sh', '-c', 'echo $"+key+"'], capture_output=True, text=True).stdout.strip()"); v != "'"+strings.TrimPrefix(into.Cookie, key+"=")+"'" {
		t.Errorf("a process the copy started has cookie %s, want %s", v, into.Cookie)
	}
	if v := drivertest.MustValue(t, parent, prec, 2, "x"); v != "[1, 2, 3]" {
		t.Errorf("the parent's x after the copy changed its own: %s", v)
	}
	if out := prec.TakeOutput(); out != "" {
		t.Errorf("the parent's output %q: the copy's reached it", out)
	}
	if v := drivertest.MustValue(t, child, crec, 4, "loader.is_alive(), threading.active_count()"); v != "(False, 1)" {
		t.Errorf("the copy's threads: %s, want the loader not running there", v)
	}

	// An interrupt of the copy ends its cell and leaves the parent alone.
	r := drivertest.Interrupt(t, child, crec, 5, "while True: pass", 250*time.Millisecond)
	if r.Status != "interrupted" {
		t.Errorf("the copy's interrupted cell: %+v", r)
	}
	if v := drivertest.MustValue(t, parent, prec, 3, "len(x)"); v != "3" {
		t.Errorf("the parent after the copy's interrupt: %s", v)
	}

	// The copy's end is seen, with its status, though it is the parent
	// worker's child and not this process's.
	if err := child.Run(6, "import os\nos._exit(7)"); err != nil {
		t.Fatal(err)
	}
	select {
	case ex := <-crec.Exit:
		if ex.Code != 7 {
			t.Errorf("the copy's end: %+v, want status 7", ex)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the copy's end was not seen")
	}
	if proc.Alive(child.Tree().Leader) {
		t.Error("the copy is alive after its end was reported")
	}
	if v := drivertest.MustValue(t, parent, prec, 4, "len(x)"); v != "3" {
		t.Errorf("the parent after the copy ended: %s", v)
	}
}
