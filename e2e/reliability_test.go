package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The reliability suite (issue 7): every scenario reports its outcome, and
// `POLYREPL_RELIABILITY_REPORT=1 go test ./e2e -count=1` writes
// them to docs/reliability.md. POLYREPL_LONG=1 runs the long variants.

// long reports whether the long variants were asked for.
func long() bool { return os.Getenv("POLYREPL_LONG") != "" }

type finding struct{ section, scenario, result string }

var (
	findingsMu sync.Mutex
	findings   []finding
)

// report records a scenario's outcome for docs/reliability.md.
func report(t *testing.T, section, scenario, format string, a ...any) {
	findingsMu.Lock()
	defer findingsMu.Unlock()
	result := fmt.Sprintf(format, a...)
	if t.Failed() {
		result = "FAILED: " + result
	}
	findings = append(findings, finding{section, scenario, result})
}

// writeReliability writes docs/reliability.md from this run's findings,
// if asked to.
func writeReliability() error {
	if os.Getenv("POLYREPL_RELIABILITY_REPORT") == "" || len(findings) == 0 {
		return nil
	}
	// Sections sort by their leading number, "10 …" after "9 …", and
	// two sections given one number stay apart.
	order := func(section string) int {
		n, _ := strconv.Atoi(section[:strings.Index(section+" ", " ")])
		return n
	}
	sort.SliceStable(findings, func(i, j int) bool {
		a, b := findings[i].section, findings[j].section
		if order(a) != order(b) {
			return order(a) < order(b)
		}
		return a < b
	})
	var b strings.Builder
	b.WriteString("# Reliability\n\n")
	b.WriteString("Written by the reliability suite (`e2e/reliability_test.go`) from its last run:\n\n")
	fmt.Fprintf(&b, "    POLYREPL_RELIABILITY_REPORT=1 go test ./e2e -count=1   # %s\n\n", map[bool]string{true: "POLYREPL_LONG=1: long variants", false: "the CI variants"}[long()])
	fmt.Fprintf(&b, "Run on %s, %s.\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), machine())
	section := ""
	for _, f := range findings {
		if f.section != section {
			section = f.section
			fmt.Fprintf(&b, "\n## %s\n\n| scenario | result |\n| --- | --- |\n", section[strings.Index(section, " ")+1:])
		}
		fmt.Fprintf(&b, "| %s | %s |\n", strings.ReplaceAll(f.scenario, "|", "\\|"), strings.ReplaceAll(f.result, "|", "\\|"))
	}
	b.WriteString(`
## Fuzzing

Fuzz targets, with their seed corpora in the f.Add calls (run as plain tests by ` + "`go test ./...`" + `), explored for 5 s each in CI by ` + "`.ci/fuzz`" + ` (longer: ` + "`FUZZTIME=10m .ci/fuzz`" + `):
`)
	for _, target := range []string{
		"`internal/daemon` FuzzDecode — request bodies",
		"`internal/api` FuzzValidateName — session names",
		"`internal/driver` FuzzSplitter — the worker framing: output split at the end marker across any reads",
		"`internal/bound` FuzzHeadTail, FuzzSink — head/tail cutting, never splitting a UTF-8 character",
		"`internal/bound` FuzzHeadTailLines — head/tail cutting at line ends",
		"`internal/setup` FuzzEdit — an MCP client's config file edited: only polyrepl's entry changes",
		"`internal/plain` FuzzText — terminal-escape stripping",
		"`internal/record` FuzzEntryOutput — a record entry's bounded output",
		"`internal/record` FuzzLoad — a record's file with any bytes between good lines: no panic, the lines after them read, no seq given twice",
		"`internal/driver/worker` FuzzEvent — a worker's event lines (hello, results)",
		"`internal/driver/worker` FuzzCompleted — a worker's completion event of any bytes: taken or dropped, delivered only to the completion asked for",
		"`internal/sandbox` FuzzParseLink — a /proc stat line of a peer's process: its parent, group, process session and start time, or refused",
		"`internal/daemon` FuzzDeclaredCeiling — a client's declared sandbox ceiling: a narrower policy at an absolute directory, or refused naming it",
		"`internal/driver/python` FuzzParseProbe — what an executable printed when asked whether it is a Python",
		"`internal/driver/terminal` FuzzSplitter — the terminal family's framing: a REPL's stream split at marks, prompts dropped, across any reads",
		"`internal/driver/terminal` FuzzCellNames — cell file paths in a REPL's output rewritten to `<cell N>`, across any reads",
		"`internal/client` FuzzReadStream — the client's reader of streamed replies",
		"`internal/paths` FuzzParseKeeper — the state directory's daemon.json: where its daemon listens",
		"`internal/holder` FuzzDecodeHello — a holder's hello, its runtime's facts held to their bounds",
		"`internal/holder` FuzzCall — a call to a holder's Service: run, or refused with its code",
		"`internal/mcp` FuzzCheckLine — a line of the MCP server's input: taken as the SDK takes it, or refused with a JSON-RPC error",
		"`internal/plain` FuzzRuneCount — characters of any bytes counted 32 at a time: as utf8.RuneCount counts them",
		"`internal/plain` FuzzSimple — whether any bytes are plain text, 32 and 8 at a time: as a look at each byte says",
		"`internal/mcp` FuzzReadEnvelope — a JSON-RPC line's envelope (id, method, an answer) as the MCP server's line guard reads it: as the SDK's decoder reads it, without a panic",
		"`internal/mcp` FuzzInspectImage — an image's header read before it is decoded: its format, size and the memory decoding needs",
		"`internal/cli` FuzzReadLine — an answer on standard input: its first line whole, or refused with its real length",
		"`internal/driver/jupyter` FuzzDecodeSpec — a kernel.json's bytes",
		"`internal/driver/jupyter` FuzzStreamText — a kernel's stream message read piece by piece, checked against encoding/json",
		"`internal/driver/jupyter` FuzzDecodeSpooledWS — a gateway's frame spooled to disk, in each framing",
		"`internal/driver/python` FuzzVarsPath — a vars path of any text: lines or an error in words, nothing run, nothing printed",
		"`internal/driver/jupyter` FuzzLookAnswer — a kernel's answer to a look: at most the lines a look carries, each bounded, or an error",
		"`internal/driver/ghci` FuzzParseVars — GHCi's `:show bindings`: lines bounded, a thunk never read as a value",
		"`internal/driver/octave` FuzzParseVars — Octave's `whos` and previews as the look prints them",
		"`internal/driver/clojure` FuzzParseVars — the Clojure look's lines",
		"`internal/driver/gnuplot` FuzzParseVars — gnuplot's `show variables` and `show functions`",
		"`internal/driver/sh` FuzzParseVars — dash's `set` and `export -p`, quoted as dash quotes them",
	} {
		b.WriteString("- " + target + "\n")
	}
	b.WriteString(`
## Not covered yet

- Memory limits through systemd are tested against a stand-in busctl in the VM above (it makes the scope's cgroup as systemd would): no test machine runs systemd, so the real D-Bus call is not made by any test.
- Sandboxes on other kernels: this machine's kernel offers Landlock ABI 7, so the rules for ABI 9 (unix sockets by path) and ABI 10 (UDP by Landlock itself), and the refusals of a kernel with less than ABI 6, are unit-tested against the parts table but have not run; the Seatbelt profile for macOS is unit-tested as text and has never run on a Mac.
- A sandboxed cell can still connect to pathname unix sockets other than polyrepl's (ssh-agent's, docker.sock, the D-Bus session bus) on a kernel before Landlock ABI 9; the creation line says so.
- The view is tested in full in Chromium; in Firefox (Debian's firefox-esr, driven by puppeteer-core over WebDriver BiDi) its core path is tested — load with the token, a running cell's output, a decoded figure, interrupt, and a cell sent with Shift-Enter recorded as the person's via view (TestViewPageFirefox) — but not questions, export, restarts or the 10 MB record. Its MCP App is tested in a host built on the official ext-apps bridge, not in an agent client.
- vars: a Python ` + "`__repr__`" + ` that catches every exception in an endless loop, or stays in C code, keeps the worker past the look's time (the holder stops waiting after 10 s; the session is busy until it returns); an R promise made by ` + "`delayedAssign`" + ` is forced by a look. Julia's look has never run (no Julia here); cpp, lfortran and matlab, and Jupyter kernels other than ipykernel and IRkernel, cannot look.
`)
	return os.WriteFile(filepath.Join(moduleRoot, "docs", "reliability.md"), []byte(b.String()), 0o644)
}

func machine() string {
	n := 0
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		n = strings.Count(string(b), "processor\t:")
	}
	return fmt.Sprintf("%d cores", n)
}

// api is a raw HTTP client of the env's daemon, for requests the CLI
// would never send.
func (e *env) api() *http.Client {
	sock := filepath.Join(e.socketDir(), "daemon.sock")
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}, Timeout: 60 * time.Second}
}

// snapshot is what must not change when a bad input is refused.
func (e *env) snapshot() string {
	var b strings.Builder
	for _, s := range e.sessions() {
		fmt.Fprintf(&b, "%s %s %s %d %v;", s.Name, s.Generation, s.State, s.Cells, s.Names)
	}
	return b.String()
}

// TestReliabilityBadInputs sends malformed and hostile requests to the
// API and the CLI: each is refused with a clear error, and nothing
// changes.
func TestReliabilityBadInputs(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	r := e.runJSON("exec", "ok", "x = 1")
	gen := r.Generation
	before := e.snapshot()
	c := e.api()
	big := strings.Repeat("a", 3<<20)
	huge := strings.Repeat("a", 100<<20)
	exec := func(code string) string {
		return fmt.Sprintf(`{"code":%q,"spawn":{"cwd":%q,"env":[]}}`, code, e.home)
	}
	cases := []struct {
		what, method, path, body string
		status                   int
		says                     string
	}{
		{"a name with /", "POST", "/v1/sessions/a%2Fb/exec", exec("1"), 400, "invalid session name"},
		{"the name ..", "POST", "/v1/sessions/%2E%2E/exec", exec("1"), 400, "invalid session name"},
		{"a name with NUL", "POST", "/v1/sessions/a%00b/exec", exec("1"), 400, "invalid session name"},
		{"a 10 KB name", "POST", "/v1/sessions/" + strings.Repeat("n", 10240) + "/exec", exec("1"), 400, "limit is 64"},
		{"a name with a space", "POST", "/v1/sessions/a%20b/exec", exec("1"), 400, "invalid session name"},
		{"a name starting with -", "POST", "/v1/sessions/-x/exec", exec("1"), 400, "invalid session name"},
		{"a negative timeout", "POST", "/v1/sessions/ok/exec", `{"code":"1","timeout":-1}`, 400, "timeout"},
		{"a huge timeout", "POST", "/v1/sessions/ok/exec", `{"code":"1","timeout":1e300}`, 400, "timeout"},
		{"a timeout of the wrong type", "POST", "/v1/sessions/ok/exec", `{"code":"1","timeout":"soon"}`, 400, "malformed request"},
		{"100 MB of code", "POST", "/v1/sessions/ok/exec", exec(huge), 400, "over"},
		{"3 MB of code", "POST", "/v1/sessions/ok/exec", exec(big), 400, "limit is 2097152 bytes"},
		{"empty code", "POST", "/v1/sessions/ok/exec", `{"code":""}`, 400, "empty"},
		{"code of spaces", "POST", "/v1/sessions/ok/exec", `{"code":"  \n\t"}`, 400, "empty"},
		{"code with NUL", "POST", "/v1/sessions/ok/exec", `{"code":"1\u0000"}`, 400, "NUL"},
		{"code of the wrong type", "POST", "/v1/sessions/ok/exec", `{"code":12}`, 400, "malformed request"},
		{"malformed JSON", "POST", "/v1/sessions/ok/exec", `{"code":`, 400, "malformed request"},
		{"an unknown field", "POST", "/v1/sessions/ok/exec", `{"code":"1","sudo":true}`, 400, "unknown field"},
		{"two JSON objects", "POST", "/v1/sessions/ok/exec", `{"code":"1"}{"code":"2"}`, 400, "after the JSON object"},
		{"a JSON array", "POST", "/v1/sessions/ok/exec", `[1,2]`, 400, "malformed request"},
		{"no body", "POST", "/v1/sessions/ok/exec", ``, 400, "malformed request"},
		{"the wrong generation (exec)", "POST", "/v1/sessions/ok/exec", `{"code":"x = 2","generation":"000000000000"}`, 410, "generation"},
		{"the wrong generation (wait)", "POST", "/v1/sessions/ok/wait", `{"generation":"000000000000"}`, 410, "generation"},
		{"the wrong generation (interrupt)", "POST", "/v1/sessions/ok/interrupt", `{"generation":"000000000000"}`, 410, "generation"},
		{"the wrong generation (restart)", "POST", "/v1/sessions/ok/restart", `{"generation":"000000000000"}`, 410, "generation"},
		{"the wrong generation (kill)", "POST", "/v1/sessions/ok/kill", `{"generation":"000000000000"}`, 410, "generation"},
		{"a relative working directory", "POST", "/v1/sessions/new1/exec", `{"code":"1","spawn":{"cwd":"rel/dir","env":[]}}`, 400, "not an absolute path"},
		{"a missing working directory", "POST", "/v1/sessions/new2/exec", `{"code":"1","spawn":{"cwd":"/no/such/dir","env":[]}}`, 400, "does not exist"},
		{"an unknown runtime", "POST", "/v1/sessions/new3/exec", `{"code":"1","spawn":{"runtime":"cobol","cwd":"/","env":[]}}`, 400, "unknown runtime"},
		{"another runtime for a live session", "POST", "/v1/sessions/ok/exec", `{"code":"1","spawn":{"runtime":"r","cwd":"/","env":[]}}`, 400, "not r"},
		{"a missing executable", "POST", "/v1/sessions/new4/exec", `{"code":"1","spawn":{"exe":"/no/such/python","cwd":"/","env":[]}}`, 400, "cannot start"},
		{"a relative project", "POST", "/v1/sessions/new5/exec", `{"code":"1","spawn":{"runtime":"python","project":"p","cwd":"/","env":[]}}`, 400, "not an absolute path"},
		{"wait on no session", "POST", "/v1/sessions/nobody/wait", `{}`, 404, "no session"},
		{"GET on exec", "GET", "/v1/sessions/ok/exec", ``, 405, ""},
		{"an unknown path", "POST", "/v1/nope", `{}`, 404, ""},
		{"history from -1", "GET", "/v1/sessions/ok/record?since=-1", ``, 400, "invalid position"},
		{"an entry that is not a number", "GET", "/v1/sessions/ok/record/abc", ``, 400, "invalid entry"},
		{"an entry that does not exist", "GET", "/v1/sessions/ok/record/99999", ``, 404, "no entry 99999"},
		{"a raw attach without upgrade", "GET", "/v1/sessions/ok/raw", ``, 400, "upgrade"},
		{"a raw attach to a Python session", "GET", "/v1/sessions/ok/raw", ``, 400, "runs python over pipes"},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest(tc.method, "http://polyrepl"+tc.path, strings.NewReader(tc.body))
		if tc.what == "a raw attach to a Python session" {
			req.Header.Set("Upgrade", "polyrepl-raw")
			req.Header.Set("Connection", "Upgrade")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Errorf("%s: %v", tc.what, err)
			report(t, "2 Hostile and malformed input: API", tc.what, "the request failed: %v", err)
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.says) {
			t.Errorf("%s: %d %s; want %d saying %q", tc.what, resp.StatusCode, body, tc.status, tc.says)
		}
		msg := strings.TrimSpace(string(body))
		if len(msg) > 140 {
			msg = msg[:140] + "…"
		}
		report(t, "2 Hostile and malformed input: API", tc.what, "%d `%s`", resp.StatusCode, msg)
	}
	cli := []struct {
		what string
		args []string
		says string
	}{
		{"exec with no arguments", []string{"exec"}, "exec takes"},
		{"a session name with /", []string{"exec", "a/b", "1"}, "invalid session name"},
		{"a negative -t", []string{"exec", "ok", "1", "-t", "-1"}, "timeout"},
		{"-t 1e9", []string{"exec", "ok", "1", "-t", "1e9"}, "timeout"},
		{"-t not a number", []string{"exec", "ok", "1", "-t", "soon"}, "bad value for -t: the timeout must be a number of seconds"},
		{"an unknown flag", []string{"exec", "ok", "1", "--sudo"}, "unknown flag --sudo"},
		{"an unknown command", []string{"frobnicate"}, "unknown command"},
		{"an entry id of another session", []string{"history", "ok", "other#3"}, "belongs to session"},
		{"an unknown export format", []string{"export", "ok", "--format", "pdf"}, "unknown format"},
		{"kill of no session", []string{"kill", "nobody"}, "no session"},
		{"attach with no terminal", []string{"attach", "ok"}, "needs a terminal"},
	}
	for _, tc := range cli {
		_, stderr, code := e.run(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.says) {
			t.Errorf("polyrepl %s: exit %d, %q; want 2 saying %q", strings.Join(tc.args, " "), code, stderr, tc.says)
		}
		first, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n")
		report(t, "3 Hostile and malformed input: CLI", "`polyrepl "+strings.Join(tc.args, " ")+"` ("+tc.what+")", "exit %d: %s", code, first)
	}
	if after := e.snapshot(); after != before {
		t.Errorf("the bad inputs changed the sessions:\nbefore %s\nafter  %s", before, after)
	}
	if g := e.session("ok").Generation; g != gen {
		t.Errorf("the session was replaced")
	}
	report(t, "2 Hostile and malformed input: API", "**all of the above**", "%d API and %d CLI inputs refused; sessions unchanged: %v", len(cases), len(cli), e.snapshot() == before)
}

// TestReliabilityFaults: a client that goes away mid-call, one that sends
// half a request and stalls, and a socket deleted under the daemon.
func TestReliabilityFaults(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "f", "import time")

	// A client that disconnects mid-call: the cell goes on, and wait has it.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://polyrepl/v1/sessions/f/exec",
		strings.NewReader(`{"code":"time.sleep(1.5)\nprint('finished')\n'late'","timeout":30}`))
	_, err := e.api().Do(req)
	cancel()
	r := e.runJSON("wait", "f", "-t", "10")
	if err == nil || r.Status != "done" || r.Output != "finished\n" || r.Value != "'late'" {
		t.Errorf("after a client went away mid-call: %v (its call: %v)", r, err)
	}
	report(t, "4 Faults", "a client disconnects mid-call", "the cell ran on; `wait` returned it whole (%s, output %q)", r.Status, r.Output)

	// Half a request, then silence: cut off after the body timeout, and
	// the daemon answers others meanwhile.
	conn, err := net.Dial("unix", filepath.Join(e.socketDir(), "daemon.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/sessions/f/exec HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"code\":")
	t0 := time.Now()
	if r := e.runJSON("exec", "f", "1+1"); r.Value != "2" {
		t.Errorf("while a request stalls: %v", r)
	}
	answered := time.Since(t0)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	cut := time.Since(t0)
	if err != nil || resp.StatusCode != 400 {
		t.Errorf("a stalled half request: %v %v, want a 400 after the body timeout", resp, err)
	}
	report(t, "4 Faults", "a client sends half a request and stalls", "others answered meanwhile (%s); the stalled one was cut off with 400 after %s", answered.Round(time.Millisecond), cut.Round(time.Second))

	// The socket file is deleted under the running daemon.
	pid := e.status().PID
	os.Remove(filepath.Join(e.socketDir(), "daemon.sock"))
	ok := waitFor(10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(e.socketDir(), "daemon.sock"))
		return err == nil
	})
	st := e.status()
	if !ok || st.PID != pid || e.session("f").State != "idle" {
		t.Errorf("after the socket was deleted: rebound %v, daemon %d (was %d)", ok, st.PID, pid)
	}
	report(t, "4 Faults", "the socket file is deleted under the running daemon", "the daemon bound it again within %s; same daemon (pid unchanged: %v), session kept", "2 s", st.PID == pid)
}
