package ipython

import (
	"context"
	"testing"
	"time"

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
	ch, err := worker.MakeChannels(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	into := ch.Into()
	into.Cookie = drivertest.Cookie("ipython-copy")
	f, err := parent.(driver.Forker).Fork(into, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	crec := drivertest.NewRecorder()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	child, err := worker.Driver{R: Runtime}.Adopt(ctx, driver.Spec{ValueLimit: 10000}, ch, f.PID, crec)
	if err != nil {
		t.Fatal(err)
	}
	defer child.Tree().Kill(time.Second)
	if v := drivertest.MustValue(t, child, crec, 2, "x += 1\nOut[1], x"); v != "(41, 42)" {
		t.Errorf("the copy: %s", v)
	}
	if v := drivertest.MustValue(t, parent, prec, 2, "Out[1], x, len(Out)"); v != "(41, 41, 1)" {
		t.Errorf("the parent after the copy's cell: %s", v)
	}
}
