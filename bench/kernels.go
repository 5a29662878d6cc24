package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
)

// The rows of this file time `1+1` through polyrepl to a python3 Jupyter
// kernel: one on this machine (runtime jupyter:python3, ZeroMQ) and one a
// Jupyter Server gateway runs (REST and the channels WebSocket, on
// loopback). They are measured in the trivial cell's interleaved run, not
// in a run of their own, so that they are paired sample by sample with
// the jupyter_client row (the same kernel driven by the protocol's own
// Python client) and with the native python session: the machine's drift
// hits all of them alike. The report shows them twice: in the round-trip
// table, as routes to the in-process client, and in a small table of
// their own (kernelsMarkdown) whose ratio is to jupyter_client, the
// reference they are meant to be compared with.

// kernelRuntime is the kernel both rows run.
const kernelRuntime = api.JupyterPrefix + "python3"

// gatewayVar marks the Jupyter Server the harness starts. The kernels it
// starts inherit its environment but run in process groups of their own,
// so killing the server's group would miss them: every process carrying
// the mark is killed instead.
const gatewayVar = "POLYREPL_BENCH_GATEWAY"

// gatewayServer is a Jupyter Server on a free loopback port, with a token.
type gatewayServer struct {
	cmd    *exec.Cmd
	url    string
	token  string
	mark   string // gatewayVar=VALUE
	log    string
	exited chan struct{} // closed when the server has exited
}

// startGateway starts jupyter-server with a random token and waits until
// its REST API answers an authorized request, or says why it cannot. Once
// started, the server is the world's, so that close ends it whatever
// happens after.
func startGateway(w *world) (*gatewayServer, string) {
	bin, err := exec.LookPath("jupyter-server")
	if err != nil {
		return nil, "jupyter-server is not installed (Debian: jupyter-server)"
	}
	// A port the kernel picks for a listener closed at once: another
	// process could take it before the server does, and port_retries=0
	// makes the server fail then rather than answer elsewhere.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err.Error()
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var b [16]byte
	rand.Read(b[:])
	dir := filepath.Join(w.root, "gateway")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err.Error()
	}
	g := &gatewayServer{
		url: fmt.Sprintf("http://127.0.0.1:%d", port), token: hex.EncodeToString(b[:]),
		mark: gatewayVar + "=" + w.tag, log: filepath.Join(dir, "jupyter-server.log"), exited: make(chan struct{}),
	}
	args := []string{"--no-browser", "--ServerApp.ip=127.0.0.1", fmt.Sprintf("--ServerApp.port=%d", port),
		"--ServerApp.port_retries=0", "--ServerApp.token=" + g.token, "--ServerApp.root_dir=" + dir}
	if os.Getuid() == 0 {
		args = append(args, "--allow-root")
	}
	lf, err := os.Create(g.log)
	if err != nil {
		return nil, err.Error()
	}
	defer lf.Close() // the child has its own copy
	g.cmd = w.command(append([]string{bin}, args...)...)
	g.cmd.Env = append(slices.Clone(w.env), g.mark)
	g.cmd.Stdout, g.cmd.Stderr = lf, lf
	// Its own process group, so that one signal ends the server and any
	// helper it forked.
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := g.cmd.Start(); err != nil {
		return nil, err.Error()
	}
	go func() { g.cmd.Wait(); close(g.exited) }()
	w.mu.Lock()
	w.gw = g
	w.mu.Unlock()

	t0 := time.Now()
	hc := &http.Client{Timeout: 2 * time.Second}
	for deadline := t0.Add(60 * time.Second); ; {
		if g.answers(hc) {
			logf("jupyter-server answered on %s after %s", g.url, time.Since(t0).Round(time.Millisecond))
			return g, ""
		}
		select {
		case <-g.exited:
			why := fmt.Sprintf("jupyter-server exited before answering on %s; its log: %s", g.url, g.logTail())
			w.stopGateway()
			return nil, why
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			why := fmt.Sprintf("jupyter-server did not answer GET %s/api/kernelspecs within 60s; its log: %s", g.url, g.logTail())
			w.stopGateway()
			return nil, why
		}
	}
}

// answers says whether GET /api/kernelspecs with the token gives 200.
func (g *gatewayServer) answers(hc *http.Client) bool {
	rq, err := http.NewRequest("GET", g.url+"/api/kernelspecs", nil)
	if err != nil {
		return false
	}
	rq.Header.Set("Authorization", "token "+g.token)
	resp, err := hc.Do(rq)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (g *gatewayServer) logTail() string {
	b, _ := os.ReadFile(g.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}

// stopGateway kills the server's process group, then every process that
// carries its mark (its kernels), until none is left or 5 s have passed.
// The world lets go of the server first, so a second call (from close)
// does nothing.
func (w *world) stopGateway() {
	w.mu.Lock()
	g := w.gw
	w.gw = nil
	w.mu.Unlock()
	if g == nil {
		return
	}
	syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-g.exited:
	case <-time.After(5 * time.Second):
		logf("jupyter-server (pid %d) did not exit within 5s of SIGKILL", g.cmd.Process.Pid)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		left := procsWith(g.mark, true)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			// close's sweep of the tag names them as left behind.
			logf("processes of the gateway still alive 5s after SIGKILL:\n  %s", strings.Join(left, "\n  "))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kernelRows makes the rows of `1+1` through polyrepl, Go client
// in-process, to a session of jupyter:python3 here and to one on a
// gateway the harness starts. Each session is created (its kernel
// started) before the run, so a row times a cell's round trip alone; the
// creation is logged. A row that cannot run here is skipped with why.
// done kills the sessions and stops the gateway, so that neither weighs
// on the sections after.
func kernelRows(ctx context.Context, w *world, cl *client.Client) (alts []*alt, done func()) {
	var names []string
	add := func(key, label, name string, req api.ExecRequest) error {
		t0 := time.Now()
		r, err := cl.Exec(ctx, name, req)
		if err == nil && (r.Status != api.StatusDone || r.Value != "2") {
			err = fmt.Errorf("the first cell gave status %s, value %q, output %q, error %v", r.Status, r.Value, clip(r.Output), r.Error)
		}
		if err != nil {
			return err
		}
		names = append(names, name)
		logf("%s: the session was created and its first `1+1` answered in %s", name, time.Since(t0).Round(time.Millisecond))
		alts = append(alts, &alt{key: key, label: label,
			run: func(int) (float64, error) { return clientExec(ctx, cl, name, req, valueIs("2")) }})
		return nil
	}

	req := w.execReq(cellTrivial)
	req.Spawn.Runtime, req.Spawn.Exe = kernelRuntime, ""
	if err := add("kernel:local", fmt.Sprintf("polyrepl, Go client in-process: `%s` session (ipykernel on this machine, ZeroMQ)", kernelRuntime),
		"jk-local", req); err != nil {
		w.skip(kernelRuntime+" polyrepl session row", fmt.Sprintf("cannot create the session (Debian: python3-ipykernel): %v", err))
	}

	if g, why := startGateway(w); why != "" {
		w.skip("Jupyter Server gateway row", why)
	} else {
		gw := w.execReq(cellTrivial)
		gw.Spawn.Runtime, gw.Spawn.Exe = kernelRuntime, ""
		// The token goes in the session's environment, as a person's
		// shell would hold it; http:// to loopback needs no GatewayHTTP.
		gw.Spawn.Gateway = g.url
		gw.Spawn.Env = append(slices.Clone(gw.Spawn.Env), "POLYREPL_GATEWAY_TOKEN="+g.token)
		if err := add("kernel:gateway", fmt.Sprintf("polyrepl, Go client in-process: `%s` session on a Jupyter Server gateway (REST + WebSocket, loopback)", kernelRuntime),
			"jk-gateway", gw); err != nil {
			w.skip("Jupyter Server gateway row", fmt.Sprintf("cannot create the session on %s (Debian: python3-ipykernel): %v; the server's log: %s", g.url, err, g.logTail()))
			w.stopGateway()
		}
	}

	done = func() {
		for _, name := range names {
			if err := w.kill(ctx, cl, name); err != nil {
				logf("killing %s: %v", name, err)
			}
		}
		w.stopGateway()
	}
	return alts, done
}

// kernelsMarkdown is the small table of the kernel rows against the
// jupyter_client row, from the trivial cell's run; "" if it has no
// kernel row.
func kernelsMarkdown(trivial []*alt) string {
	var rows []*alt
	for _, key := range []string{"jupyter", "kernel:local", "kernel:gateway", "client"} {
		if a := find(trivial, key); a != nil {
			rows = append(rows, a)
		}
	}
	if find(trivial, "kernel:local") == nil && find(trivial, "kernel:gateway") == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Jupyter kernels: `1+1` through polyrepl against jupyter_client\n\n")
	b.WriteString("The same samples as the round-trip table above, divided pair by pair by the jupyter_client row's.\n\n")
	b.WriteString(latencyTable(rows, "jupyter", "jupyter_client"))
	b.WriteString("\nAll the kernels are Debian's python3 ipykernel. The jupyter_client row's time includes a pipe round trip ")
	b.WriteString("to its Python driver process (the ping row above); each polyrepl row's includes an HTTP round trip to the daemon ")
	b.WriteString("over its Unix socket (the `Status` row above). The gateway is `jupyter-server` on 127.0.0.1, started by the harness; ")
	b.WriteString("the last row is polyrepl's own python session, for scale.\n\n")
	return b.String()
}
