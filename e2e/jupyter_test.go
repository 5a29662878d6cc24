package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

// kernelRow is what the Jupyter tests run in one kernel's language,
// beyond the conformance suite: a sleep to interrupt, a cell that
// outlives its timeout, a plot, a flood of output, a read of input.
type kernelRow struct {
	runtime string
	sleep   string // sleeps a minute
	late    string // sleeps 2 s, prints "late", then shows 7
	lateVal check  // what late's wait gives
	plot    string
	flood   string // prints 100 MiB of 'x'
	input   string // prints "before", asks "name? "; its value is the answer
	answer  check  // what the answer "Bob" gives
	// eofStatus is the cell's status when end of file answers it.
	eofStatus string
	define    string // x = 1
	useX      check
}

var pythonKernel = kernelRow{
	runtime:   "jupyter:python3",
	sleep:     "import time\ntime.sleep(60)",
	late:      "import time\ntime.sleep(2)\nprint('late')\n7",
	lateVal:   check{value: "7", output: "late\n"},
	plot:      "import matplotlib\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()",
	flood:     "import sys\nfor _ in range(100):\n    sys.stdout.write('x' * (1 << 20))",
	input:     "print('before')\ninput('name? ')",
	answer:    check{value: "'Bob'", output: "name? Bob\n"},
	eofStatus: "error", // EOFError
	define:    "x = 1",
	useX:      check{code: "x + 1", value: "2"},
}

var irKernel = kernelRow{
	runtime:   "jupyter:ir",
	sleep:     "Sys.sleep(60)",
	late:      "Sys.sleep(2)\ncat('late\\n')\n7",
	lateVal:   check{output: "late\n[1] 7\n"}, // IRkernel's values are displays
	plot:      "plot(1:10)",
	flood:     `for (i in 1:100) cat(strrep("x", 1048576))`,
	input:     "cat('before\\n')\npaste('hi', readline('name? '))",
	answer:    check{output: "name? Bob\n[1] \"hi Bob\"\n"},
	eofStatus: "done", // IRkernel reads an empty line
	define:    "x <- 1",
	useX:      check{code: "x + 1", output: "[1] 2\n"},
}

// TestJupyterKernels runs the kernel rows on this machine's python3
// and ir kernels.
func TestJupyterKernels(t *testing.T) {
	t.Parallel()
	for _, k := range []struct {
		row     kernelRow
		install string
	}{{pythonKernel, "python3-ipykernel"}, {irKernel, "r-cran-irkernel"}} {
		t.Run(k.row.runtime, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			needRuntime(t, e, k.row.runtime, k.install)
			kernelRows(t, e, k.row, true)
		})
	}
}

// kernelRows runs row in a new session of e; args go with every exec (a
// gateway's). flood says whether to print 100 MiB.
func kernelRows(t *testing.T, e *env, row kernelRow, flood bool, args ...string) {
	t.Helper()
	s := "k-" + strings.ReplaceAll(row.runtime, ":", "-")
	run := func(code string, more ...string) cellResult {
		t.Helper()
		return e.runJSON(append(append([]string{"exec", s, code, "--runtime", row.runtime}, args...), more...)...)
	}
	if r := run(row.define); r.Status != "done" {
		t.Fatalf("defining x: %s", clip(r.String()))
	}
	useX := func(what string) {
		t.Helper()
		if r := run(row.useX.code); r.Status != "done" || r.Value != row.useX.value || r.Output != row.useX.output {
			t.Errorf("%s: %q gave %s; want value %q, output %q", what, row.useX.code, clip(r.String()), row.useX.value, row.useX.output)
		}
	}

	// Interrupt in a sleep: the cell ends interrupted, x stays.
	if r := run(row.sleep, "-t", "0.5"); r.Status != "running" {
		t.Fatalf("a sleep: want running after 0.5 s, got %s", clip(r.String()))
	}
	out, errOut := e.must(0, "interrupt", s)
	wantContains(t, "interrupt", out+errOut, "interrupted")
	useX("after the interrupt")

	// A timeout, then wait collects the rest.
	if r := run(row.late, "-t", "0.3"); r.Status != "running" || r.code != 124 {
		t.Errorf("a cell past its timeout: %s, want running and exit 124", clip(r.String()))
	}
	if r := e.runJSON("wait", s, "-t", "30"); r.Status != "done" || r.Value != row.lateVal.value || !strings.HasSuffix(r.Output, row.lateVal.output) {
		t.Errorf("wait after the timeout: %s; want value %q, output ending %q", clip(r.String()), row.lateVal.value, row.lateVal.output)
	}

	// A plot comes back as a PNG file.
	_, errOut = e.must(0, append(append([]string{"exec", s, row.plot}, args...), "-t", "60")...)
	wantContains(t, "a plot", errOut, "[image 1: ", " PNG")

	// Input: the cell's question comes back at once; code is refused
	// while it waits; the answer gives the cell its value.
	r := run(row.input, "-t", "20")
	if r.Status != "input" || r.code != 3 || !strings.Contains(r.String(), `"text":"name? "`) || r.Output != "before\n" {
		t.Errorf("a cell asking for input: %s; want status input, exit 3, the prompt, what it printed before", clip(r.String()))
	}
	if _, errOut, code := e.run("exec", s, row.useX.code); code != 2 || !strings.Contains(errOut, "waits for input") {
		t.Errorf("exec while the cell waits for input: exit %d, %q; want refused", code, errOut)
	}
	if info := e.session(s); info.Running == nil || info.Running.Input == nil || info.Running.Input.Text != "name? " {
		t.Errorf("sessions does not show the question: %+v", info.Running)
	}
	r = e.runJSON("input", s, "Bob", "-t", "20")
	if r.Status != "done" || r.Value != row.answer.value || !strings.HasSuffix(r.Output, row.answer.output) {
		t.Errorf("the answer: %s; want value %q, output ending %q", clip(r.String()), row.answer.value, row.answer.output)
	}
	// End of file, and an interrupt during the wait.
	if r := run(row.input, "-t", "20"); r.Status != "input" {
		t.Fatalf("asking again: %s", clip(r.String()))
	}
	if r := e.runJSON("input", s, "--eof", "-t", "20"); r.Status != row.eofStatus {
		t.Errorf("end of file: %s; want status %s", clip(r.String()), row.eofStatus)
	}
	if r := run(row.input, "-t", "20"); r.Status != "input" {
		t.Fatalf("asking a third time: %s", clip(r.String()))
	}
	out, errOut = e.must(0, "interrupt", s)
	wantContains(t, "interrupt during input", out+errOut, "interrupted")
	useX("after the input")

	if flood {
		floodRow(t, e, s, row.flood, args...)
		useX("after the flood")
	}
}

// floodRow prints 100 MiB in session s: the reply is bounded, the whole
// is saved, and the daemon stays small.
func floodRow(t *testing.T, e *env, s, code string, args ...string) {
	t.Helper()
	stop := peakRSS(e.status().PID)
	r := e.runJSON(append(append([]string{"exec", s, code}, args...), "-t", "300")...)
	peak := stop()
	const total = 100 << 20
	if r.Status != "done" {
		t.Fatalf("100 MiB of output: %s", clip(r.String()))
	}
	if c := r.OutputCut; c == nil || c.Total != total || c.Head+c.Tail > 30000 {
		t.Errorf("output_cut %+v, want total %d and at most 30,000 kept", c, total)
	} else if fi, err := os.Stat(c.File); err != nil || fi.Size() != total {
		t.Errorf("the saved output %s: %v, want all %d bytes", c.File, err, total)
	}
	if peak >= 100<<20 {
		t.Errorf("the daemon's RSS reached %d MB during the flood, want under 100 MB", peak>>20)
	}
}

// jupyterServer starts Debian's Jupyter Server on a free loopback port
// with a token, or skips; it and every kernel it started end with the
// test, before the env's own check for leftovers.
func jupyterServer(t *testing.T, e *env) (url, token string, pid int, kill func()) {
	t.Helper()
	bin, err := exec.LookPath("jupyter-server")
	if err != nil {
		t.Skip("no jupyter-server (Debian: jupyter-server)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	token, mark := newTag(), "POLYREPL_TEST_GATEWAY="+newTag()
	args := []string{"--no-browser", "--ServerApp.ip=127.0.0.1", fmt.Sprintf("--ServerApp.port=%d", port),
		"--ServerApp.port_retries=0", "--ServerApp.token=" + token, "--ServerApp.root_dir=" + e.home,
		// The server's own limit on output (1 MB/s by default) would drop
		// most of the flood row's 100 MiB before polyrepl sees it.
		"--ServerApp.iopub_data_rate_limit=0", "--ServerApp.iopub_msg_rate_limit=0"}
	if os.Getuid() == 0 {
		args = append(args, "--allow-root")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append([]string(nil), e.vars...), mark)
	logf, err := os.Create(filepath.Join(e.home, "jupyter-server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill = func() {
		once.Do(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			// Its kernels are in process groups of their own.
			waitFor(5*time.Second, func() bool {
				left := proctest.WithVar(mark)
				for _, p := range left {
					syscall.Kill(p.PID, syscall.SIGKILL)
				}
				return len(left) == 0
			})
			logf.Close()
		})
	}
	t.Cleanup(kill)
	url = fmt.Sprintf("http://127.0.0.1:%d", port)
	up := waitFor(60*time.Second, func() bool {
		rq, _ := http.NewRequest("GET", url+"/api/kernelspecs", nil)
		rq.Header.Set("Authorization", "token "+token)
		resp, err := http.DefaultClient.Do(rq)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	if !up {
		b, _ := os.ReadFile(logf.Name())
		t.Fatalf("jupyter-server did not answer on %s within 60 s:\n%s", url, b)
	}
	return url, token, cmd.Process.Pid, kill
}

// gatewayKernels asks the server which kernels it runs.
func gatewayKernels(t *testing.T, url, token string) string {
	t.Helper()
	rq, _ := http.NewRequest("GET", url+"/api/kernels", nil)
	rq.Header.Set("Authorization", "token "+token)
	resp, err := http.DefaultClient.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestJupyterGateway runs the conformance suite and the kernel rows
// through a real Jupyter Server, then kills the session (its kernel is
// deleted there), kills the daemon (the session lives on), and kills the
// server mid-cell (the session is reported lost, with what to do).
func TestJupyterGateway(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "jupyter:python3", "python3-ipykernel")
	url, token, pid, kill := jupyterServer(t, e)
	e.setenv("POLYREPL_GATEWAY_TOKEN", token)
	gw := []string{"--gateway", url}

	conform(t, e, pythonRow("jupyter:python3", nil), gw...)
	if got := gatewayKernels(t, url, token); got != "[]" {
		t.Errorf("after kill, the gateway still runs kernels: %s", got)
	}
	kernelRows(t, e, pythonKernel, true, gw...)
	if found, _ := runtimeFound(e, "jupyter:ir"); found {
		conform(t, e, irRow(), gw...)
		kernelRows(t, e, irKernel, false, gw...) // R prints 100 MiB slowly: its flood runs here only
	}

	// sessions says where the kernel runs.
	info := e.session("k-jupyter-python3")
	if !strings.HasPrefix(info.Where, url+" (kernel ") {
		t.Errorf("sessions says the kernel runs at %q, want %s (kernel …)", info.Where, url)
	}

	// The daemon's death does not end a gateway session.
	e.setenv("POLYREPL_GATEWAY", url)
	e.must(0, "exec", "gw", "--kernel", "python3", "y = 41")
	e.killDaemon()
	r := e.runJSON("exec", "gw", "y + 1")
	if r.Status != "done" || r.Value != "42" {
		t.Errorf("after the daemon's death: %s", clip(r.String()))
	}
	report(t, "4 Faults", "the daemon SIGKILLed with a session on a Jupyter gateway", "the next exec read the kernel's y: %s %q", r.Status, r.Value)

	// The server stalled mid-cell (SIGSTOP): found by the WebSocket's
	// pings, reported within the call.
	e.must(0, "exec", "stall", "--kernel", "python3", "z = 1")
	code := "import time\nfor i in range(600):\n    print(i, flush=True)\n    time.sleep(0.1)"
	if r := e.runJSON("exec", "stall", code, "-t", "1"); r.Status != "running" {
		t.Fatalf("a long cell: %s", clip(r.String()))
	}
	syscall.Kill(pid, syscall.SIGSTOP)
	start := time.Now()
	r = e.runJSON("wait", "stall", "-t", "90")
	syscall.Kill(pid, syscall.SIGCONT)
	stalled := time.Since(start)
	if r.Status != "dead" || !strings.Contains(r.stderr+fmt.Sprint(r.raw), "ping went unanswered") {
		t.Errorf("wait on a stalled gateway: %s; want dead, saying a ping went unanswered", clip(r.String()))
	}
	cause := ""
	if r.Error != nil {
		cause = r.Error.Message
	}
	report(t, "4 Faults", "the Jupyter Server under a gateway session stopped (SIGSTOP) mid-cell", "`wait` answered %s after %s: %s", r.Status, stalled.Round(time.Second), cause)

	// The server killed mid-cell: reported within the call, with what to do.
	if r := e.runJSON("exec", "gw", code, "-t", "1"); r.Status != "running" {
		t.Fatalf("a long cell: %s", clip(r.String()))
	}
	kill()
	start = time.Now()
	r = e.runJSON("wait", "gw", "-t", "60")
	if r.Status != "dead" || !strings.Contains(r.stderr+fmt.Sprint(r.raw), "went away") {
		t.Errorf("wait after the server's death: %s; want dead, saying the gateway went away", clip(r.String()))
	}
	d := time.Since(start)
	if d > 40*time.Second {
		t.Errorf("the lost gateway was reported after %s; want it within the call", d)
	}
	cause = ""
	if r.Error != nil {
		cause = r.Error.Message
	}
	report(t, "4 Faults", "the Jupyter Server under a gateway session SIGKILLed mid-cell", "`wait` answered %s after %s: %s", r.Status, d.Round(time.Second), cause)
}

// TestGatewayRefusals: a wrong token, no token, a closed port and
// http:// to another host each give a clear error at once, and make no
// session.
func TestGatewayRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "jupyter:python3", "python3-ipykernel")
	url, token, _, _ := jupyterServer(t, e)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + l.Addr().String()
	l.Close()
	tokenFile := filepath.Join(e.home, "token")
	os.WriteFile(tokenFile, []byte(token+"\n"), 0o644)
	for _, c := range []struct {
		what, gateway string
		env           []string
		want          string
	}{
		{"a wrong token", url, []string{"POLYREPL_GATEWAY_TOKEN=wrong"}, "is not the server's"},
		{"no token", url, nil, "set $POLYREPL_GATEWAY_TOKEN"},
		{"a closed port", closed, []string{"POLYREPL_GATEWAY_TOKEN=x"}, "cannot reach the gateway"},
		{"http:// to another host", "http://192.0.2.1:8888", nil, "unencrypted"},
		{"a token file others can read", url, []string{"POLYREPL_GATEWAY_TOKEN_FILE=" + tokenFile}, "chmod 600"},
		{"a kernel the gateway lacks", url, []string{"POLYREPL_GATEWAY_TOKEN=" + token}, "has no kernel named"},
	} {
		kernel := "python3"
		if strings.Contains(c.what, "lacks") {
			kernel = "nosuchkernel"
		}
		start := time.Now()
		out, errOut, code := e.runWith(runOpts{extra: c.env}, "exec", "refused", "1", "--kernel", kernel, "--gateway", c.gateway)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.what, code, out, errOut, c.want)
		}
		d := time.Since(start)
		if d > 15*time.Second {
			t.Errorf("%s: the refusal took %s", c.what, d)
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(errOut, "polyrepl: error: "), "\n")
		report(t, "3 Hostile and malformed input: CLI", "a Jupyter gateway: "+c.what, "exit %d after %s: %s", code, d.Round(time.Millisecond), first)
	}
	if ss := e.sessions(); len(ss) != 0 {
		t.Errorf("refused gateways made sessions: %+v", ss)
	}
	os.Chmod(tokenFile, 0o600)
	if r := e.runJSONWith(runOpts{extra: []string{"POLYREPL_GATEWAY_TOKEN_FILE=" + tokenFile}},
		"exec", "byfile", "6*7", "--kernel", "python3", "--gateway", url); r.Value != "42" {
		t.Errorf("with the token from a 0600 file: %s", clip(r.String()))
	}
}

// TestKernelThatCannotStart: a kernelspec whose program is missing, and
// one whose program exits at once, are reported as such, by runtimes and
// by exec, with what they printed.
func TestKernelThatCannotStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := filepath.Join(e.home, "jupyter")
	for name, argv := range map[string]string{
		"missing": `["no-such-kernel-program", "-f", "{connection_file}"]`,
		"exits":   `["/bin/sh", "-c", "echo the kernel gives up; exit 3", "{connection_file}"]`,
	} {
		os.MkdirAll(filepath.Join(dir, "kernels", name), 0o755)
		os.WriteFile(filepath.Join(dir, "kernels", name, "kernel.json"),
			[]byte(`{"argv": `+argv+`, "display_name": "`+name+`", "language": "python"}`), 0o644)
	}
	e.setenv("JUPYTER_PATH", dir)
	out, _ := e.must(0, "runtimes")
	wantContains(t, "runtimes", out, "jupyter:missing", "no-such-kernel-program (cannot start)", "jupyter:exits")
	_, errOut, code := e.run("exec", "m", "1", "--kernel", "missing")
	if code != 2 || !strings.Contains(errOut, "no-such-kernel-program") || !strings.Contains(errOut, "kernel.json") {
		t.Errorf("a kernel whose program is missing: exit %d, %q", code, errOut)
	}
	_, errOut, code = e.run("exec", "x", "1", "--kernel", "exits")
	if code != 2 || !strings.Contains(errOut, "exited with status 3") || !strings.Contains(errOut, "the kernel gives up") {
		t.Errorf("a kernel that exits at once: exit %d, %q", code, errOut)
	}
	_, errOut, code = e.run("exec", "n", "1", "--kernel", "nosuch")
	if code != 2 || !strings.Contains(errOut, `no Jupyter kernel named "nosuch"`) || !strings.Contains(errOut, "missing") {
		t.Errorf("an unknown kernel: exit %d, %q", code, errOut)
	}
}

// TestMCPKernel: an agent makes a kernel session through the MCP exec
// tool's runtime argument, and its runtimes tool lists the kernels.
func TestMCPKernel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "jupyter:python3", "python3-ipykernel")
	s := e.startMCP()
	defer s.close()
	r, text := s.cell("exec", map[string]any{"session": "kj", "code": "6*7", "runtime": "jupyter:python3"})
	if r.Status != "done" || !strings.HasSuffix(text, "\n42") || !strings.Contains(text, "jupyter:python3") {
		t.Errorf("exec on jupyter:python3: %s\n%s", clip(r.String()), text)
	}
	r, text = s.cell("exec", map[string]any{"session": "kj", "code": "input('who? ')"})
	if r.Status != "input" || !strings.Contains(text, `"who? "`) || !strings.Contains(text, "input tool") {
		t.Errorf("a question through MCP: %s\n%s", clip(r.String()), text)
	}
	r, text = s.cell("input", map[string]any{"session": "kj", "text": "Bob"})
	if r.Status != "done" || !strings.Contains(text, "'Bob'") {
		t.Errorf("the input tool's answer: %s\n%s", clip(r.String()), text)
	}
	var list struct {
		Runtimes []string `json:"runtimes"`
	}
	text = s.call("runtimes", map[string]any{}, &list)
	if !slices.Contains(list.Runtimes, "jupyter:python3") || !strings.Contains(text, "- jupyter:python3: a Jupyter kernel, \"") {
		t.Errorf("the runtimes tool does not list jupyter:python3 with its display name: %+v\n%s", list.Runtimes, text)
	}
}

// TestJupyterSecret: an answer to a password prompt is shown as [hidden]
// and is in no file under the state or socket directories.
func TestJupyterSecret(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "jupyter:python3", "python3-ipykernel")
	r := e.runJSON("exec", "sec", "--kernel", "python3", "import getpass\npw = getpass.getpass('pw: ')\nlen(pw)")
	if r.Status != "input" || !strings.Contains(r.String(), `"password":true`) {
		t.Fatalf("getpass: %s; want status input, a password prompt", clip(r.String()))
	}
	const secret = "hunter2-c0rrect-h0rse"
	r = e.runJSON("input", "sec", secret)
	if r.Status != "done" || r.Value != fmt.Sprint(len(secret)) || !strings.Contains(r.Output, "[hidden]") || strings.Contains(r.String(), secret) {
		t.Errorf("the answer: %s; want its length, [hidden] in the output, the secret nowhere", clip(r.String()))
	}
	e.must(0, "history", "sec")
	wantNowhere(t, e, secret)
}
