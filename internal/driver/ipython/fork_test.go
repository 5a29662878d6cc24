package ipython

import (
	"testing"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

// TestFork: an IPython worker forks as the Python worker does (its
// protocol is Python's), and the copy keeps IPython's own state — Out,
// the execution count — apart from the parent's from then on.
func TestFork(t *testing.T) {
	parent, prec := start(t)
	drivertest.MustValue(t, parent, prec, 1, "x = 41\nx")
	crec := drivertest.NewRecorder()
	child, _, _ := drivertest.Fork(t, parent, worker.Driver{R: Runtime}, driver.Spec{ValueLimit: 10000}, crec)
	if v := drivertest.MustValue(t, child, crec, 2, "x += 1\nOut[1], x"); v != "(41, 42)" {
		t.Errorf("the copy: %s", v)
	}
	if v := drivertest.MustValue(t, parent, prec, 2, "Out[1], x, len(Out)"); v != "(41, 41, 1)" {
		t.Errorf("the parent after the copy's cell: %s", v)
	}
}
