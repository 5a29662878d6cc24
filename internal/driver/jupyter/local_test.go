package jupyter

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
)

// ipykernel starts Debian's python3 kernel, or skips saying what to
// install.
func ipykernel(t testing.TB) (driver.Process, *drivertest.Recorder) {
	t.Helper()
	if _, err := FindSpec("python3", os.Environ(), "/"); err != nil {
		t.Skipf("no Jupyter kernel python3 (Debian: apt-get install python3-ipykernel): %v", err)
	}
	if exec.Command("/usr/bin/python3", "-c", "import ipykernel").Run() != nil {
		t.Skip("no ipykernel (Debian: apt-get install python3-ipykernel)")
	}
	d, err := driver.Lookup("jupyter:python3")
	if err != nil {
		t.Fatal(err)
	}
	return drivertest.StartWith(t, d, "", drivertest.Options{})
}

func TestIPyKernelCells(t *testing.T) {
	p, rec := ipykernel(t)
	if !strings.Contains(p.Version(), "ipython") || !strings.Contains(p.Version(), "python 3") {
		t.Errorf("version %q, want ipython and python 3", p.Version())
	}
	r := drivertest.Run(t, p, rec, 1, "x = 6*7\nprint('hello')\nx")
	if out := rec.TakeOutput(); r.Status != api.StatusDone || r.Value != "42" || out != "hello\n" {
		t.Errorf("cell 1: output %q, %+v", out, r)
	}
	if len(r.Names) != 1 || r.Names[0] != "x" {
		t.Errorf("names %v, want [x]", r.Names)
	}
	r = drivertest.Run(t, p, rec, 2, "1/0")
	if r.Status != api.StatusError || r.Error == nil || r.Error.Type != "ZeroDivisionError" || strings.Contains(r.Error.Traceback, "\x1b") {
		t.Errorf("cell 2: %+v %+v", r, r.Error)
	}
	r = drivertest.Run(t, p, rec, 3, "input('name? ')")
	if r.Status != api.StatusError || r.Error == nil || r.Error.Type != "EOFError" || !strings.Contains(r.Note, "end of file") {
		t.Errorf("input: %+v %+v", r, r.Error)
	}
	if err := p.Run(4, "import time\nwhile True: time.sleep(0.01)"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	p.Interrupt(0)
	select {
	case r = <-rec.Done:
		if r.Status != api.StatusInterrupted {
			t.Errorf("interrupt: %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the interrupt did not end the cell")
	}
	r = drivertest.Run(t, p, rec, 5, "x")
	if r.Value != "42" {
		t.Errorf("after interrupt: %+v", r)
	}
}

// TestInterruptByMessage: a kernel whose kernel.json asks for
// interrupt_mode "message" is interrupted over its control channel.
func TestInterruptByMessage(t *testing.T) {
	ks, err := FindSpec("python3", os.Environ(), "/")
	if err != nil || exec.Command(ks.Argv[0], "-c", "import ipykernel").Run() != nil {
		t.Skip("no ipykernel (Debian: apt-get install python3-ipykernel)")
	}
	root := t.TempDir()
	argv, _ := json.Marshal(ks.Argv)
	writeSpec(t, root, "bymessage", `{"argv": `+string(argv)+`, "language": "python", "interrupt_mode": "message"}`)
	d, err := driver.Lookup("jupyter:bymessage")
	if err != nil {
		t.Fatal(err)
	}
	p, rec := drivertest.StartWith(t, d, "", drivertest.Options{Env: append(os.Environ(), "JUPYTER_PATH="+root)})
	if err := p.Run(1, "import time\ntime.sleep(60)"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if err := p.Interrupt(0); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-rec.Done:
		if r.Status != api.StatusInterrupted {
			t.Errorf("interrupt_request: %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the interrupt_request did not end the cell")
	}
}

// TestPortTakenBetween: a port another process takes between polyrepl
// picking it and the kernel binding it (CI met this with two kernels
// starting side by side: the iopub channel reached the other socket and
// was closed in its greeting) costs a second start on fresh ports, not
// the session.
func TestPortTakenBetween(t *testing.T) {
	// The other process's socket: it accepts and closes at once.
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	go func() {
		for {
			c, err := other.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	var picks atomic.Int32
	pickConnection = func(name string) (connection, error) {
		c, err := newConnection(name)
		if picks.Add(1) == 1 {
			c.IOPubPort = other.Addr().(*net.TCPAddr).Port
		}
		return c, err
	}
	defer func() { pickConnection = newConnection }()
	p, rec := ipykernel(t)
	if n := picks.Load(); n != 2 {
		t.Errorf("the kernel was given ports %d times, want 2 (a taken port, then fresh ones)", n)
	}
	if r := drivertest.Run(t, p, rec, 1, "6*7"); r.Value != "42" {
		t.Errorf("a cell after the second start: %+v", r)
	}
}
