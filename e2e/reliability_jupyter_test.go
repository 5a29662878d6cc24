package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// Kernels and holders (issue 33, items 4, 8 and 9): what a hostile
// kernel.json, a kernel or a gateway sends costs the call that asked
// for it, never the daemon, other sessions or the holder's memory.

// TestReliabilityKernelspecs: a kernel.json that is a named pipe, and
// one linked to /dev/zero, among the installed kernels. A plain Python
// session starts while they stay; a session of an unknown kernel is
// refused naming the bad files and what is wrong with each; `runtimes`
// lists them as unusable, saying why; the daemon lives on.
func TestReliabilityKernelspecs(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	jp := testenv.ShortDir(t)
	for _, k := range []string{"x", "z"} {
		if err := os.MkdirAll(filepath.Join(jp, "kernels", k), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(jp, "kernels", "x", "kernel.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(jp, "kernels", "z", "kernel.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	e.setenv("JUPYTER_PATH", jp)

	start := time.Now()
	_, refusal, code := e.run("exec", "a", "--kernel", "nosuch", "1")
	took := time.Since(start)
	if code == 0 {
		t.Errorf("a session of an unknown kernel started: %s", refusal)
	}
	wantContains(t, "the unknown kernel's refusal", refusal, "nosuch", fifo, "named pipe", zero, "character device")

	r := e.runJSON("exec", "newone", "6*7")
	if r.code != 0 || r.Value != "42" {
		t.Errorf("a Python session beside the bad kernel.json files: %s", r)
	}
	out, stderr, code := e.run("runtimes")
	if code != 0 {
		t.Errorf("runtimes exited %d: %s", code, stderr)
	}
	wantContains(t, "runtimes", out, "jupyter:x", "named pipe", "jupyter:z", "character device")
	if len(out) > 200_000 {
		t.Errorf("runtimes printed %d bytes", len(out))
	}
	r = e.runJSON("exec", "newone", "1+1")
	if r.code != 0 || r.Value != "2" {
		t.Errorf("the daemon after the bad kernel.json files: %s", r)
	}
	report(t, "8 Kernels and holders", "a kernel.json that is a named pipe, another linked to /dev/zero",
		"`exec --kernel nosuch` refused in %.1f s naming both files (a named pipe, a character device); a Python session answered; `runtimes` lists both as unusable with the reason; the daemon lived",
		took.Seconds())
	if strings.Contains(out, strings.Repeat("\x00", 16)) {
		t.Errorf("runtimes shows bytes of /dev/zero")
	}
}

// mountTmpfs mounts a tmpfs of size at a new directory, or skips saying
// why it cannot; it is unmounted after everything the test registers
// later (an env's teardown among them).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := testenv.ShortDir(t)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a %s tmpfs to fill (needs root, or a mount namespace): %v: %s", size, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fillDisk writes a file in dir until no more than leave bytes are free.
func fillDisk(t *testing.T, dir string, leave uint64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := st.Bavail * uint64(st.Bsize)
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for n := uint64(0); n+leave < free; n += uint64(len(chunk)) {
		if _, err := f.Write(chunk[:min(uint64(len(chunk)), free-leave-n)]); err != nil {
			break
		}
	}
	return path
}

// TestReliabilityHolderFullDisk: the state directory's disk is full while
// no daemon is connected and a cell prints 200 MB, in a Python worker
// session and in an ipykernel one. The holder keeps no more than its
// bound in memory; the next daemon is told the cell's result, with a
// note of what was lost and why; the end of the output is there.
func TestReliabilityHolderFullDisk(t *testing.T) {
	needPython(t)
	t.Parallel()
	for _, row := range []struct {
		name, runtime string
		lost          []string // what the result's notes say
	}{
		{"python", "python", []string{"bytes of this cell's output while no daemon was connected", "no space left on device"}},
		{"jupyter", "jupyter:python3", []string{"no space left on device"}},
	} {
		t.Run(row.name, func(t *testing.T) {
			state := mountTmpfs(t, "64m")
			e := newEnv(t)
			if row.runtime != "python" {
				needRuntime(t, e, row.runtime, "python3-ipykernel")
			}
			e.setenv("XDG_STATE_HOME", state)
			e.must(0, "exec", "--runtime", row.runtime, "s", "x = 1")
			holder := e.session("s").Holder
			done := filepath.Join(e.home, "printed")
			cell := "import sys, time\ntime.sleep(3)\nline = 'x' * 1023 + '\\n'\nfor i in range(200 * 1024):\n    sys.stdout.write(line)\n" +
				"sys.stdout.flush()\ntime.sleep(1)\nprint('END', flush=True)\ntime.sleep(1)\nopen(" + strconv.Quote(done) + ", 'w').close()"
			r := e.runJSON("exec", "-t", "0", "s", cell)
			if r.Status != "running" {
				t.Fatalf("the printing cell: %s", r)
			}
			daemon := e.status().PID
			e.must(0, "stop", "--keep-sessions")
			if !waitFor(10*time.Second, func() bool { return !proctest.Alive(daemon) }) {
				t.Fatal("the daemon is still running after stop --keep-sessions")
			}
			filler := fillDisk(t, state, 8<<20)
			idle, _ := proctest.RSS(holder)
			stop := peakRSS(holder)
			if !waitFor(180*time.Second, func() bool { _, err := os.Stat(done); return err == nil }) {
				t.Fatal("the cell did not print its 200 MB within 3 minutes")
			}
			time.Sleep(time.Second) // the holder takes the last of it
			peak := stop()
			os.Remove(filler)
			grew := int64(peak) - int64(idle)
			if grew > 64<<20 {
				t.Errorf("the holder grew by %d MB (idle %d MB, peak %d MB) while the disk was full: want at most 64 MB", grew>>20, idle>>20, peak>>20)
			}
			t.Logf("holder RSS idle %d MB, peak %d MB", idle>>20, peak>>20)
			r = e.runJSON("wait", "s")
			if r.Status != "done" {
				t.Errorf("the cell after the daemon's return: %s", r)
			}
			lost := strings.Join(r.notesOf("runtime"), " ")
			wantContains(t, "the cell's notes", lost, row.lost...)
			wantContains(t, "the cell's output", r.Output, "END")
			if len(lost) > 5000 {
				t.Errorf("the notes of what was lost take %d bytes", len(lost))
			}
			t.Logf("notes: %s", lost)
			if r2 := e.runJSON("exec", "s", "x + 1"); r2.Value != "2" {
				t.Errorf("the session after: %s", r2)
			}
			report(t, "8 Kernels and holders", fmt.Sprintf("the state disk full (a 64 MB tmpfs) while no daemon is connected and a %s cell prints 200 MB", row.runtime),
				"the holder grew by %d MB (idle %d MB); the next daemon's result says what was lost and why, and the output's end is there",
				grew>>20, idle>>20)
		})
	}
}

// TestReliabilityKernelFlood: an ipykernel printing 256 MB (1 GB with
// POLYREPL_LONG) in lines of a kilobyte, as fast as it can: the holder's
// memory stays within 64 MB above idle, and the output arrives whole.
func TestReliabilityKernelFlood(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "jupyter:python3", "python3-ipykernel")
	mb := 256
	if long() {
		mb = 1024
	}
	e.must(0, "exec", "--kernel", "python3", "k", "x = 1")
	holder := e.session("k").Holder
	time.Sleep(6 * time.Second) // the holder gives back what its start used
	idle, _ := proctest.RSS(holder)
	stop := peakRSS(holder)
	start := time.Now()
	cell := fmt.Sprintf("line = 'x' * 1023\nfor i in range(%d * 1024):\n    print(line)\nprint('END')", mb)
	r := e.runJSON("exec", "-t", "600", "k", cell)
	took := time.Since(start)
	peak := stop()
	t.Logf("holder RSS idle %d MB, peak %d MB; %d MB printed in %.1f s", idle>>20, peak>>20, mb, took.Seconds())
	if r.Status != "done" || !strings.HasSuffix(r.Output, "END\n") {
		t.Errorf("the flood's result: %.2000s", r.String())
	}
	if r.OutputCut == nil || r.OutputCut.Total < mb<<20 {
		t.Errorf("the flood's output cut: %+v, want all %d MB counted", r.OutputCut, mb)
	}
	grew := int64(peak) - int64(idle)
	if grew > 64<<20 {
		t.Errorf("the holder grew by %d MB (idle %d MB, peak %d MB) while the kernel printed %d MB: want at most 64 MB", grew>>20, idle>>20, peak>>20, mb)
	}
	for _, dir := range []string{filepath.Join(e.stateDir(), "output"), filepath.Join(e.socketDir(), "runtimes")} {
		if left, _ := filepath.Glob(filepath.Join(dir, "jupyter-frame-*")); len(left) > 0 {
			t.Errorf("spooled kernel messages left after the cell: %v", left)
		}
	}
	report(t, "8 Kernels and holders", fmt.Sprintf("an ipykernel printing %d MB in 1 KB lines", mb),
		"the holder grew by %d MB above idle (%d MB); all %d MB arrived, in %.0f s", grew>>20, idle>>20, mb, took.Seconds())
}

// hostileGateway is a Jupyter gateway that speaks the REST and channels
// protocol but says too much: a 2 MB display_name, a 3 MB error JSON when
// the kernel "fails" is started, and, for a cell's code, a 3 MB error, a
// 3 MB input prompt, a 40 MB stream message, or a 300 MB one. It is a
// protocol peer, not a runtime: nothing of polyrepl's is mocked.
type hostileGateway struct {
	url string
	srv *http.Server
}

func startHostileGateway(t *testing.T) *hostileGateway {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &hostileGateway{url: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/kernelspecs", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"default": "hostile", "kernelspecs": map[string]any{
			"hostile": map[string]any{"name": "hostile", "spec": map[string]any{"display_name": strings.Repeat("D", 2<<20), "language": "python"}},
			"fails":   map[string]any{"name": "fails", "spec": map[string]any{"display_name": "Fails", "language": "python"}},
		}})
	})
	mux.HandleFunc("POST /api/kernels", func(w http.ResponseWriter, r *http.Request) {
		var rq struct {
			Name string `json:"name"`
		}
		json.NewDecoder(r.Body).Decode(&rq)
		if rq.Name == "fails" {
			w.WriteHeader(http.StatusInternalServerError)
			json.NewEncoder(w).Encode(map[string]string{"reason": "Internal Server Error", "message": strings.Repeat("M", 3<<20)})
			return
		}
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]string{"id": "k1", "name": rq.Name})
	})
	mux.HandleFunc("GET /api/kernels/k1", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"id":"k1"}`)) })
	mux.HandleFunc("DELETE /api/kernels/k1", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("POST /api/kernels/k1/interrupt", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /api/kernels/k1/channels", g.channels)
	g.srv = &http.Server{Handler: mux}
	go g.srv.Serve(ln)
	t.Cleanup(func() { g.srv.Close() })
	return g
}

// channels answers kernel_info and execute requests in the JSON framing.
func (g *hostileGateway) channels(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(-1)
	ctx := context.Background()
	var mu sync.Mutex
	seq := 0
	send := func(ch, typ string, parent json.RawMessage, content any) error {
		mu.Lock()
		defer mu.Unlock()
		seq++
		b, _ := json.Marshal(map[string]any{"channel": ch, "metadata": map[string]any{}, "content": content, "parent_header": parent,
			"header": map[string]any{"msg_id": fmt.Sprint("g", seq), "msg_type": typ, "session": "gw", "username": "gw", "version": "5.3", "date": time.Now().UTC().Format(time.RFC3339)}})
		return c.Write(ctx, websocket.MessageText, b)
	}
	// stream sends one stream message of n bytes of 'x' and a tail,
	// written as it goes.
	stream := func(parent json.RawMessage, n int, tail string) error {
		mu.Lock()
		defer mu.Unlock()
		seq++
		wr, err := c.Writer(ctx, websocket.MessageText)
		if err != nil {
			return err
		}
		hdr, _ := json.Marshal(map[string]any{"msg_id": fmt.Sprint("g", seq), "msg_type": "stream", "session": "gw", "username": "gw", "version": "5.3"})
		fmt.Fprintf(wr, `{"channel": "iopub", "header": %s, "parent_header": %s, "metadata": {}, "content": {"name": "stdout", "text": "`, hdr, parent)
		chunk := []byte(strings.Repeat("x", 1<<20))
		for ; n > 0; n -= len(chunk) {
			if _, err := wr.Write(chunk[:min(n, len(chunk))]); err != nil {
				return err
			}
		}
		fmt.Fprintf(wr, `%s"}}`, tail)
		return wr.Close()
	}
	var asking json.RawMessage
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return
		}
		var m struct {
			Header  json.RawMessage `json:"header"`
			Content struct {
				Code string `json:"code"`
			} `json:"content"`
		}
		json.Unmarshal(b, &m)
		var h struct {
			Type string `json:"msg_type"`
		}
		json.Unmarshal(m.Header, &h)
		parent := m.Header
		idle := func() { send("iopub", "status", parent, map[string]string{"execution_state": "idle"}) }
		switch h.Type {
		case "kernel_info_request":
			send("iopub", "status", parent, map[string]string{"execution_state": "busy"})
			send("shell", "kernel_info_reply", parent, map[string]any{"status": "ok", "implementation": "hostile", "implementation_version": "1",
				"language_info": map[string]string{"name": "python", "version": "3"}})
			idle()
		case "input_reply":
			send("iopub", "stream", asking, map[string]string{"name": "stdout", "text": "answered\n"})
			send("iopub", "status", asking, map[string]string{"execution_state": "idle"})
			send("shell", "execute_reply", asking, map[string]any{"status": "ok"})
		case "execute_request":
			send("iopub", "status", parent, map[string]string{"execution_state": "busy"})
			switch m.Content.Code {
			case "err":
				tb := strings.Repeat("a line of the traceback\n", 3<<20/24)
				send("iopub", "error", parent, map[string]any{"ename": "HugeError", "evalue": strings.Repeat("v", 3<<20), "traceback": []string{tb}})
				idle()
				send("shell", "execute_reply", parent, map[string]any{"status": "error", "ename": "HugeError", "evalue": "v"})
				continue
			case "ask":
				asking = parent
				send("stdin", "input_request", parent, map[string]any{"prompt": strings.Repeat("?", 3<<20), "password": false})
				continue
			case "big":
				stream(parent, 40<<20, "END")
			case "flood":
				stream(parent, 300<<20, "END")
			}
			idle()
			send("shell", "execute_reply", parent, map[string]any{"status": "ok"})
		}
	}
}

// TestReliabilityHostileGateway: what a gateway says is bounded where it
// enters, and its frames never enter the holder's memory whole.
func TestReliabilityHostileGateway(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := startHostileGateway(t)
	gw := []string{"--gateway", g.url}

	out, stderr, code := e.run(append([]string{"runtimes"}, gw...)...)
	if code != 0 || len(out) > 20_000 || !strings.Contains(out, "cut: 2,097,152 characters in all") {
		t.Errorf("runtimes of a gateway with a 2 MB display_name: exit %d, %d bytes: %.500s %s", code, len(out), out, stderr)
	}
	_, stderr, code = e.run(append([]string{"exec", "f", "--kernel", "fails", "1"}, gw...)...)
	if code == 0 || len(stderr) > 10_000 || !strings.Contains(stderr, "cut: 3,145,728 characters in all") {
		t.Errorf("a gateway's 3 MB error JSON: exit %d, %d bytes: %.500s", code, len(stderr), stderr)
	}

	r := e.runJSON(append([]string{"exec", "s", "--kernel", "hostile", "nothing"}, gw...)...)
	if r.Status != "done" || len(fmt.Sprint(r.raw)) > 20_000 {
		t.Errorf("a session on the gateway: %.2000s", r.String())
	}
	holder := e.session("s").Holder
	time.Sleep(6 * time.Second) // the holder gives back what its start used
	idle, _ := proctest.RSS(holder)
	stop := peakRSS(holder)

	r = e.runJSON("exec", "s", "err")
	if r.Status != "error" || r.Error == nil || len(r.Error.Message)+len(r.Error.Traceback) > 30_000 || !strings.Contains(r.Error.Message, "characters cut") {
		t.Errorf("a 3 MB error: %.2000s", r.String())
	}
	stdout, _, _ := e.run("exec", "s", "ask", "--json")
	if len(stdout) > 50_000 || !strings.Contains(stdout, "characters cut") || !strings.Contains(stdout, `"input"`) {
		t.Errorf("a 3 MB input prompt: %d bytes: %.1000s", len(stdout), stdout)
	}
	if out, stderr, code := e.run("input", "s", "Bob"); code != 0 || !strings.Contains(out, "answered") {
		t.Errorf("the answer: exit %d: %s %s", code, out, stderr)
	}
	r = e.runJSON("exec", "s", "big", "-t", "120")
	if r.Status != "done" || !strings.HasSuffix(r.Output, "END") || r.OutputCut == nil || r.OutputCut.Total != 40<<20+3 {
		t.Errorf("a 40 MB stream message: %.2000s", r.String())
	}
	r = e.runJSON("exec", "s", "flood", "-t", "300")
	peak := stop()
	dropped := strings.Join(r.notesOf("runtime"), " ")
	if r.Status != "done" || !strings.Contains(dropped, "300 MB that was dropped") {
		t.Errorf("a 300 MB frame: %.2000s", r.String())
	}
	grew := int64(peak) - int64(idle)
	t.Logf("holder RSS idle %d MB, peak %d MB", idle>>20, peak>>20)
	if grew > 64<<20 {
		t.Errorf("the holder grew by %d MB (idle %d MB, peak %d MB) taking a gateway's 40 MB and 300 MB frames: want at most 64 MB", grew>>20, idle>>20, peak>>20)
	}
	report(t, "8 Kernels and holders", "a hostile gateway: a 2 MB display_name, a 3 MB error JSON, a 3 MB error, a 3 MB input prompt, a 40 MB and a 300 MB frame",
		"each text cut where it entered, the cut said; the 40 MB frame arrived whole, the 300 MB one was dropped with a note saying so; the holder grew by %d MB (idle %d MB)",
		grew>>20, idle>>20)
}
