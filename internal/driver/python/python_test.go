package python

import (
	"strconv"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/driver/drivertest"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// recorder records the worker's events (shared by every runtime's tests).
type recorder = drivertest.Recorder

func start(t testing.TB) (driver.Process, *recorder) {
	t.Helper()
	return drivertest.StartExe(t, worker.Driver{R: Runtime}, testenv.NeedPython(t))
}

// All output a cell writes, from Python, a subprocess and C, arrives before
// the cell is reported done, and nothing of the end marker leaks into it.
func TestOutputBeforeDone(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, "import os, ctypes\nprint('py')\nos.system('echo sh')\nctypes.CDLL(None).printf(b'c\\n')\n6*7")
	if r.Status != "done" || r.Value != "42" {
		t.Fatalf("result = %+v", r)
	}
	if got := rec.TakeOutput(); got != "py\nsh\nc\n" {
		t.Errorf("output = %q, want py, sh, c in order", got)
	}
	last := rec.LastEvent()
	if last != "done" {
		t.Errorf("last event = %s, want done", last)
	}
	// A long output crossing many pipe reads keeps its bytes exactly.
	r = drivertest.Run(t, p, rec, 2, "import sys\nfor i in range(20000): sys.stdout.write('%d,' % i)")
	want := new(strings.Builder)
	for i := 0; i < 20000; i++ {
		want.WriteString(strconv.Itoa(i) + ",")
	}
	if got := rec.TakeOutput(); got != want.String() {
		t.Errorf("long output differs: got %d bytes, want %d", len(got), want.Len())
	}
	if r.Status != "done" {
		t.Errorf("status = %s", r.Status)
	}
}

// BenchmarkCell measures one trivial cell through the worker protocol:
// the pipe round trip, framing and marker scan, without the daemon.
func BenchmarkCell(b *testing.B) {
	p, rec := start(b)
	drivertest.BenchCell(b, p, rec, "1+1")
}
