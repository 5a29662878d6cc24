package main

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

//go:embed jupyter_driver.py
var jupyterDriver []byte

// jupyter is the driver process (jupyter_driver.py) holding kernels; the
// harness times each request from Go, so every Jupyter row includes one
// pipe round trip to it, measured alone by ping.
type jupyter struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	kernel int    // the kernel the exec rows use
	errlog string // the driver's stderr
}

type jupyterReply struct {
	OK     bool    `json:"ok"`
	Error  string  `json:"error"`
	ID     int     `json:"id"`
	PID    int     `json:"pid"`
	Secs   float64 `json:"secs"`
	Out    int     `json:"out"`
	Status string  `json:"status"`
}

// startJupyter starts the driver and one kernel, or says why it cannot.
func startJupyter(w *world) (*jupyter, string) {
	if b, err := w.command(w.cfg.python, "-c", "import jupyter_client, ipykernel").CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("%s cannot import jupyter_client and ipykernel (Debian: apt install python3-jupyter-client python3-ipykernel): %s", w.cfg.python, clip(string(b)))
	}
	script := filepath.Join(w.root, "jupyter_driver.py")
	if err := os.WriteFile(script, jupyterDriver, 0o600); err != nil {
		return nil, err.Error()
	}
	j := &jupyter{errlog: filepath.Join(w.root, "jupyter.log")}
	logf, err := os.Create(j.errlog)
	if err != nil {
		return nil, err.Error()
	}
	defer logf.Close()
	j.cmd = w.command(w.cfg.python, script)
	j.cmd.Stderr = logf
	if j.in, err = j.cmd.StdinPipe(); err != nil {
		return nil, err.Error()
	}
	stdout, err := j.cmd.StdoutPipe()
	if err != nil {
		return nil, err.Error()
	}
	j.out = bufio.NewReader(stdout)
	if err := j.cmd.Start(); err != nil {
		return nil, err.Error()
	}
	fail := func(format string, a ...any) string {
		j.close()
		return fmt.Sprintf(format, a...) + "; driver log: " + j.logTail()
	}
	r, err := j.call(map[string]any{"op": "start"})
	if err != nil {
		return nil, fail("cannot start a kernel: %v", err)
	}
	j.kernel = r.ID
	if _, err := j.exec("import sys", 0); err != nil {
		return nil, fail("the kernel does not run a cell: %v", err)
	}
	return j, ""
}

func (j *jupyter) call(req map[string]any) (jupyterReply, error) {
	var r jupyterReply
	if err := exchange(j.in, j.out, "the driver", req, &r); err != nil {
		return r, err
	}
	if !r.OK {
		return r, fmt.Errorf("the driver says: %s", r.Error)
	}
	return r, nil
}

// exec times one cell, checking that at least want characters came back.
func (j *jupyter) exec(code string, want int) (float64, error) {
	t0 := time.Now()
	r, err := j.call(map[string]any{"op": "exec", "id": j.kernel, "code": code})
	d := time.Since(t0)
	if err != nil {
		return 0, err
	}
	if r.Status != "ok" || r.Out < want {
		return 0, fmt.Errorf("status %s, %d characters of output, want %d", r.Status, r.Out, want)
	}
	return secs(d), nil
}

func (j *jupyter) ping() (float64, error) {
	t0 := time.Now()
	_, err := j.call(map[string]any{"op": "ping"})
	return secs(time.Since(t0)), err
}

// startKernel times a new kernel until it is ready, and returns its pid.
func (j *jupyter) startKernel() (float64, int, int, error) {
	t0 := time.Now()
	r, err := j.call(map[string]any{"op": "start"})
	d := time.Since(t0)
	if err != nil {
		return 0, 0, 0, err
	}
	return secs(d), r.ID, r.PID, nil
}

func (j *jupyter) stopKernel(id int) error {
	_, err := j.call(map[string]any{"op": "stop", "id": id})
	return err
}

// close asks the driver to shut its kernels down, and waits for it.
func (j *jupyter) close() {
	if j.cmd == nil || j.cmd.Process == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		j.call(map[string]any{"op": "quit"})
		j.in.Close()
		j.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		j.cmd.Process.Kill()
		<-done
	}
	j.cmd = nil
}

func (j *jupyter) logTail() string {
	b, _ := os.ReadFile(j.errlog)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}

func (w *world) stopJupyter() {
	if w.jup != nil {
		w.jup.close()
		w.jup = nil
	}
}

// exchange sends req to a driver process (who) as one JSON line and reads
// its one-line JSON answer into reply.
func exchange(in io.Writer, out *bufio.Reader, who string, req, reply any) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := in.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("%s is gone: %w", who, err)
	}
	line, err := out.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("%s is gone: %w", who, err)
	}
	if err := json.Unmarshal(line, reply); err != nil {
		return fmt.Errorf("%s answered %q: %w", who, clip(string(line)), err)
	}
	return nil
}
