package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

// The reliability suite (issue 7): every scenario reports its outcome, and
// `POLYREPL_RELIABILITY_REPORT=1 go test ./e2e -run Reliability` writes
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
	sort.SliceStable(findings, func(i, j int) bool { return findings[i].section < findings[j].section })
	var b strings.Builder
	b.WriteString("# Reliability\n\n")
	b.WriteString("Written by the reliability suite (`e2e/reliability_test.go`) from its last run:\n\n")
	fmt.Fprintf(&b, "    POLYREPL_RELIABILITY_REPORT=1 go test ./e2e -run Reliability -count=1   # %s\n\n", map[bool]string{true: "POLYREPL_LONG=1: long variants", false: "the CI variants"}[long()])
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
		"`internal/plain` FuzzText — terminal-escape stripping",
		"`internal/record` FuzzEntryOutput — a record entry's bounded output",
		"`internal/driver/worker` FuzzEvent — a worker's event lines (hello, results)",
		"`internal/driver/terminal` FuzzSplitter — the terminal family's framing: a REPL's stream split at marks, prompts dropped, across any reads",
		"`internal/driver/terminal` FuzzCellNames — cell file paths in a REPL's output rewritten to `<cell N>`, across any reads",
		"`internal/client` FuzzReadStream — the client's reader of streamed replies",
	} {
		b.WriteString("- " + target + "\n")
	}
	b.WriteString(`
## Not covered yet

- Memory limits through systemd are tested against a stand-in busctl in the VM above (it makes the scope's cgroup as systemd would): no test machine runs systemd, so the real D-Bus call is not made by any test.
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
		{"-t not a number", []string{"exec", "ok", "1", "-t", "soon"}, "invalid"},
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

// TestReliabilityFloods floods a session: a gigabyte of output (256 MB
// where the disk has less than 4 GB free), one 100 MB line without a newline, invalid UTF-8
// and terminal escapes. Replies stay bounded and valid, the daemon stays
// small, the session usable, and the whole output is where the reply says.
func TestReliabilityFloods(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "flood", "import sys")
	pid := e.status().PID
	// A gigabyte where the disk has room for its spool file and then some
	// (CI machines' disks vary), else a quarter of one.
	mb := 1024
	var fs syscall.Statfs_t
	if syscall.Statfs(e.stateDir(), &fs) == nil && int64(fs.Bavail)*fs.Bsize < 4<<30 && !long() {
		mb = 256
		t.Logf("less than 4 GB free for the state directory: flooding with %d MB", mb)
	}
	for _, tc := range []struct {
		what, code string
		bytes      int64
	}{
		{fmt.Sprintf("a cell printing %d MB in lines", mb),
			fmt.Sprintf("line = 'x' * 1023 + '\\n'\nblock = line * 1024\nfor _ in range(%d): sys.stdout.write(block)", mb), int64(mb) << 20},
		{"a cell printing one 100 MB line with no newline",
			"chunk = 'y' * (1 << 20)\nfor _ in range(100): sys.stdout.write(chunk)", 100 << 20},
	} {
		t0 := time.Now()
		r := e.runJSON("exec", "flood", tc.code, "-t", "300")
		took := time.Since(t0)
		var size int64 = -1
		if r.OutputCut != nil {
			if fi, err := os.Stat(r.OutputCut.File); err == nil {
				size = fi.Size()
			}
		}
		mem, _ := proctest.RSS(pid)
		if r.Status != "done" || r.OutputCut == nil || int64(r.OutputCut.Total) != tc.bytes || size != tc.bytes || len([]rune(r.Output)) > 30100 {
			t.Errorf("%s: status %s, %d characters in the reply, cut %+v, file of %d bytes", tc.what, r.Status, len([]rune(r.Output)), r.OutputCut, size)
		}
		if mem > 200<<20 {
			t.Errorf("%s: the daemon holds %d MB", tc.what, mem>>20)
		}
		report(t, "1 Load and floods", tc.what, "%s in %s; the reply carried %d characters and said where the rest is; the spool file holds all %d bytes; daemon RSS %d MB",
			r.Status, took.Round(100*time.Millisecond), len([]rune(r.Output)), size, mem>>20)
		if r.OutputCut != nil {
			os.Remove(r.OutputCut.File)
		}
	}
	r := e.runJSON("exec", "flood", `sys.stdout.buffer.write(b'bad \xff\xfe bytes, \x1b[31mred\x1b[0m, \x1b]0;title\x07a title\n10%\r100%\n'); sys.stdout.flush()`)
	want := "bad \ufffd bytes, red, a title\n100%\n" // a run of invalid bytes is one U+FFFD
	if r.Output != want {
		t.Errorf("invalid UTF-8 and escapes: %q, want %q", r.Output, want)
	}
	report(t, "1 Load and floods", "a cell printing invalid UTF-8, colour and title escapes and a carriage-return progress line", "reply %q: valid UTF-8, escapes removed, the progress line collapsed", r.Output)
	if r = e.runJSON("exec", "flood", "6*7"); r.Value != "42" {
		t.Errorf("after the floods: %v", r)
	}
	report(t, "1 Load and floods", "the session after the floods", "usable: `6*7` gave %s", r.Value)
}

// TestReliabilityLeaks creates, uses and kills 200 sessions and counts
// what the daemon holds before and after.
func TestReliabilityLeaks(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "warm", "1")
	e.must(0, "kill", "warm")
	count := func(dir string) int {
		es, _ := os.ReadDir(dir)
		return len(es)
	}
	out := filepath.Join(e.stateDir(), "output")
	before := e.status()
	runtimeFiles, outFiles := count(e.socketDir()), count(out)
	n := 200
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("leak%d", i)
		if r := e.runJSON("exec", name, fmt.Sprintf("x = %d\nprint(x)", i)); r.Output != fmt.Sprintf("%d\n", i) {
			t.Fatalf("session %d: %v", i, r)
		}
		e.must(0, "kill", name)
	}
	// The last kill's reaping and closing may still be under way: poll
	// until the daemon is back to its size or the upper bound passes.
	var after statusReply
	var procs int
	settled := func() bool {
		after, procs = e.status(), len(e.tagged())
		return after.FDs <= before.FDs+2 && after.Goroutines <= before.Goroutines+5 && procs == 1 &&
			count(e.socketDir()) == runtimeFiles && count(out) == outFiles
	}
	if !waitFor(10*time.Second, settled) {
		t.Errorf("after %d sessions: fds %d→%d, goroutines %d→%d, processes %d (the daemon alone is 1), runtime dir %d→%d files, output dir %d→%d",
			n, before.FDs, after.FDs, before.Goroutines, after.Goroutines, procs, runtimeFiles, count(e.socketDir()), outFiles, count(out))
	}
	records, _ := filepath.Glob(filepath.Join(e.stateDir(), "records", "*.jsonl"))
	report(t, "1 Load and floods", fmt.Sprintf("%d sessions created, used and killed in a loop", n),
		"daemon fds %d→%d, goroutines %d→%d, processes left besides the daemon %d, runtime-dir files %d→%d, spool files %d→%d (each name keeps its record, by design: %d records)",
		before.FDs, after.FDs, before.Goroutines, after.Goroutines, procs-1, runtimeFiles, count(e.socketDir()), outFiles, count(out), len(records))
}

// TestReliabilityLoad runs 50 clients against 10 sessions (for 30 s, 5
// minutes with POLYREPL_LONG): every reply must be its own request's, nothing lost
// or duplicated, and each session's record complete and in order. It runs
// alone (not in parallel), so the other tests' timing is not disturbed.
// `go test -short` skips it, for quick local runs.
func TestReliabilityLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("the 30 s load soak is skipped with -short")
	}
	needPython(t)
	e := newEnv(t)
	const sessions, clients = 10, 50
	dur := 30 * time.Second
	if long() {
		dur = 5 * time.Minute
	}
	for s := 0; s < sessions; s++ {
		e.must(0, "exec", fmt.Sprintf("load%d", s), "0")
	}
	c := e.api()
	type sent struct{ client, n int }
	var (
		mu                  sync.Mutex
		done                = map[string][]sent{}
		replies, busy, errs int
		bad                 []string
	)
	deadline := time.Now().Add(dur)
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Now().Before(deadline); n++ {
				name := fmt.Sprintf("load%d", (i+n)%sessions)
				body := fmt.Sprintf(`{"code":"print('c%d-%d')\n%d","client":{"who":"c%d","how":"cli"},"spawn":{"cwd":"/","env":[]}}`, i, n, i*1000000+n, i)
				resp, err := c.Post("http://polyrepl/v1/sessions/"+name+"/exec", "application/json", strings.NewReader(body))
				if err != nil {
					mu.Lock()
					errs++
					bad = append(bad, err.Error())
					mu.Unlock()
					continue
				}
				var r cellResult
				derr := json.NewDecoder(resp.Body).Decode(&r)
				resp.Body.Close()
				mu.Lock()
				switch {
				case resp.StatusCode == 409:
					busy++
				case derr != nil || resp.StatusCode != 200:
					errs++
					bad = append(bad, fmt.Sprintf("%s: %d %v", name, resp.StatusCode, derr))
				case r.Output != fmt.Sprintf("c%d-%d\n", i, n) || r.Value != fmt.Sprint(i*1000000+n) || r.Session != name:
					bad = append(bad, fmt.Sprintf("client %d request %d to %s got %s/%q/%q", i, n, name, r.Session, r.Output, r.Value))
				default:
					replies++
					done[name] = append(done[name], sent{i, n})
				}
				mu.Unlock()
				if resp.StatusCode == 409 {
					time.Sleep(2 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	c.Transport.(*http.Transport).CloseIdleConnections()
	if len(bad) > 0 {
		t.Errorf("%d replies were wrong or failed, e.g. %s", len(bad), bad[0])
	}
	// Every cell is in its session's record once, in order; the record
	// keeps the last 300, and its seqs account for all.
	lost, dup := 0, 0
	for s := 0; s < sessions; s++ {
		name := fmt.Sprintf("load%d", s)
		out, _ := e.must(0, "history", name, "--json")
		var rec struct {
			Entries []entry `json:"entries"`
			Dropped int     `json:"dropped"`
		}
		json.Unmarshal([]byte(out), &rec)
		seen := map[string]int{}
		lastSeq := 0
		for _, en := range rec.Entries {
			if en.Seq <= lastSeq {
				t.Errorf("%s: entry %d after %d", name, en.Seq, lastSeq)
			}
			lastSeq = en.Seq
			if en.Kind == "cell" && en.Status != "done" {
				t.Errorf("%s: entry %s is %s", name, en.ID, en.Status)
			}
			seen[en.Code]++
		}
		if got, want := rec.Dropped+len(rec.Entries), len(done[name])+2; got != want {
			t.Errorf("%s: the record accounts for %d entries, want %d (2 + the %d cells)", name, got, want, len(done[name]))
		}
		// Every kept cell is one that was answered, once; with the count
		// above, none is missing.
		answered := map[string]bool{}
		for _, d := range done[name] {
			answered[fmt.Sprintf("print('c%d-%d')\n%d", d.client, d.n, d.client*1000000+d.n)] = true
		}
		for code, n := range seen {
			switch {
			case code == "0":
			case !answered[code]:
				lost++ // in the record, but its reply was lost
			case n > 1:
				dup++
			}
		}
	}
	if lost+dup > 0 {
		t.Errorf("records: %d cells with no answer, %d duplicated", lost, dup)
	}
	report(t, "1 Load and floods", fmt.Sprintf("%d concurrent clients driving %d sessions for %s", clients, sessions, dur),
		"%d cells run (%.0f/s), %d busy refusals retried, %d wrong or lost replies, %d transport errors; each record accounts for every cell, in order: %d recorded cells without an answer, %d duplicated",
		replies, float64(replies)/dur.Seconds(), busy, len(bad)-errs, errs, lost, dup)
}

// TestReliabilityDaemonKilled SIGKILLs the daemon with a cell running: the
// next call starts a new daemon, which ends the orphaned runtimes and
// reports every lost session, and the record marks the running cell dead.
func TestReliabilityDaemonKilled(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "idle1", "kept = 1")
	if r := e.runJSON("exec", "busy1", "import time; time.sleep(100)", "-t", "0.5"); r.Status != "running" {
		t.Fatalf("the long cell: %v", r)
	}
	old := e.status().PID
	runtimes := len(e.tagged()) - 1
	syscall.Kill(old, syscall.SIGKILL)
	waitFor(5*time.Second, func() bool { return proctest.State(old) == 0 })
	r := e.runJSON("exec", "idle1", "1")
	lost := strings.Join(r.notesOf("lost"), "\n")
	wantContains(t, "the loss after the daemon was killed", lost, "lost when the daemon that owned it ended", "kept")
	r2 := e.runJSON("exec", "busy1", "1")
	wantContains(t, "the busy session's loss", strings.Join(r2.notesOf("lost"), "\n"), "lost when the daemon")
	var dead entry
	for _, en := range e.history("busy1") {
		if en.Kind == "cell" && strings.Contains(en.Code, "sleep(100)") {
			dead = en
		}
	}
	if dead.Status != "dead" || !strings.Contains(dead.Text, "daemon ended") {
		t.Errorf("the cell running when the daemon died: %+v", dead)
	}
	left := len(e.tagged())
	if left != 3 { // the new daemon and the two new sessions
		t.Errorf("after recovery: %d processes, want the new daemon and two sessions:%s", left, proctest.Describe(e.tagged()))
	}
	report(t, "4 Faults", "the daemon is SIGKILLed with a cell running",
		"the next call started a new daemon, which ended the %d orphaned runtimes and reported both sessions lost (%q); the running cell's entry is marked dead", runtimes, strings.SplitN(lost, ".", 2)[0])
}

// TestReliabilitySecrets passes a secret in the caller's environment: it
// reaches the session, and no log line, record or transcript.
func TestReliabilitySecrets(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	secret := "s3cr3t-" + e.tag
	r := e.runJSONWith(runOpts{extra: []string{"POLYREPL_TEST_SECRET=" + secret}}, "exec", "env", "import os; os.environ['POLYREPL_TEST_SECRET'] == '"+secret+"'")
	if r.Value != "True" {
		t.Fatalf("the secret did not reach the session: %v", r)
	}
	e.must(0, "exec", "env", "1")
	e.must(0, "kill", "env")
	var found []string
	checked := 0
	for _, root := range []string{e.socketDir(), e.stateDir()} {
		filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() || fi.Mode()&os.ModeSocket != 0 {
				return nil
			}
			b, _ := os.ReadFile(path)
			checked++
			// The transcript and record hold the code, which names it here;
			// the value itself must appear nowhere but in that code.
			if n := strings.Count(string(b), secret); n > strings.Count(string(b), "== '"+secret) {
				found = append(found, path)
			}
			return nil
		})
	}
	if len(found) > 0 {
		t.Errorf("the caller's environment was written to %s", strings.Join(found, ", "))
	}
	// Every directory polyrepl made is private, every file it wrote too.
	var loose []string
	for _, root := range []string{e.socketDir(), filepath.Join(e.stateDir())} {
		filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
			switch {
			case err != nil:
			case fi.IsDir() && fi.Mode().Perm() != 0o700, !fi.IsDir() && fi.Mode().Perm()&0o077 != 0:
				loose = append(loose, fmt.Sprintf("%s %v", path, fi.Mode().Perm()))
			}
			return nil
		})
	}
	if len(loose) > 0 {
		t.Errorf("open to others: %s", strings.Join(loose, ", "))
	}
	report(t, "5 Who gets in", "the modes of the socket directory and state files", "every directory 0700 and every file and socket closed to others (%d open: %v)", len(loose), loose)
	report(t, "5 Who gets in", "the caller's environment passed with exec", "reached the session; found in %d of the %d log, record, transcript and state files", len(found), checked)
}

// TestReliabilityDiskFull runs the daemon with a file-size limit, as a
// full state disk behaves for it (writes fail): cells still run and
// return, and each reply says what could not be saved.
func TestReliabilityDiskFull(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) is not installed")
	}
	e.startDaemonUnder("the daemon under a file-size limit", prlimit, "--fsize=65536", e.bin, "daemon")
	big := strings.Repeat("# padding\n", 8000) + "x = 42"
	r := e.runJSON("exec", "full", big)
	saves := strings.Join(r.notesOf("save"), "\n")
	if r.Status != "done" || !strings.Contains(saves, "transcript") {
		t.Errorf("a cell whose transcript cannot be written: %v", r)
	}
	r = e.runJSON("exec", "full", "print('z' * 200000)")
	saves2 := strings.Join(r.notesOf("save"), "\n")
	if r.Status != "done" || r.OutputCut == nil || !strings.Contains(saves2, "could not be saved") {
		t.Errorf("a cell whose whole output cannot be spooled: %v", r)
	}
	for i := 0; i < 12; i++ {
		r = e.runJSON("exec", "full", "print('w' * 9000)")
	}
	var saves3 string
	for _, n := range r.notesOf("save") {
		if strings.Contains(n, "record") {
			saves3 = n
		}
	}
	if r.Status != "done" || !strings.Contains(saves3, "record could not be saved") {
		t.Errorf("a cell whose record entry cannot be saved: %v", r)
	}
	if r := e.runJSON("exec", "full", "x"); r.Value != "42" {
		t.Errorf("the session after the failed writes: %v", r)
	}
	report(t, "4 Faults", "the state disk is full (the daemon under a 64 KB file-size limit)",
		"cells ran and returned; replies said: %q; %q; %q", firstLine(saves), firstLine(saves2), firstLine(saves3))
}

// startDaemonUnder starts the env's daemon through a command that sets
// up its surroundings first (argv ends by running `polyrepl daemon`), and
// waits until it answers. It keeps the command's exit status and what it
// printed (the foreground daemon logs to stderr), so that a daemon that
// would not start, or died during the test, says why.
func (e *env) startDaemonUnder(what string, argv ...string) {
	e.t.Helper()
	out := filepath.Join(e.home, "daemon-under.out")
	f, err := os.Create(out)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = e.vars
	cmd.Dir = e.home
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Start()
	f.Close()
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	exited := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	up := waitFor(10*time.Second, func() bool {
		if exited() {
			return true
		}
		_, _, code := e.run("status")
		return code == 0
	})
	switch {
	case exited():
		e.t.Fatalf("%s exited before it answered (%v); it printed:\n%s", what, waitErr, tail(out, 20))
	case !up:
		e.t.Fatalf("%s did not answer within 10 s (it still runs); it printed:\n%s", what, tail(out, 20))
	}
	// Runs before the env's teardown stops the daemon.
	e.t.Cleanup(func() {
		if e.t.Failed() && exited() {
			e.t.Logf("%s exited during the test (%v); it printed:\n%s", what, waitErr, tail(out, 20))
		}
	})
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	if len(l) > 160 {
		l = l[:160] + "…"
	}
	return l
}

// TestReliabilityMemory limits sessions' memory, with --memory and with
// the daemon's default, each way the machine allows. By rlimit (asked for
// with $POLYREPL_MEMORY_BY) a cell going over fails inside the runtime and
// the session stays. By cgroup (the best way, where there is one: a cgroup
// v1 memory group here and in CI, as root) the kernel kills the session,
// which is reported as killed for memory, and the next exec says what was
// lost.
func TestReliabilityMemory(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.setenv("POLYREPL_MEMORY", "1G")
	e.setenv("POLYREPL_MEMORY_BY", "rlimit")
	e.must(0, "exec", "dflt", "1")
	r := e.runJSON("exec", "small", "--memory", "300M", "x = bytearray(600 * 1024 * 1024)")
	if r.Status != "error" || r.Error == nil || r.Error.Type != "MemoryError" {
		t.Fatalf("600 MB in a 300 MB session: %v, want MemoryError", r)
	}
	if r := e.runJSON("exec", "small", "y = bytearray(100 * 1024 * 1024); len(y)"); r.Value != "104857600" {
		t.Errorf("the session after going over its limit: %v", r)
	}
	if st := e.status(); !strings.Contains(st.Memory, "sessions limited to 1.0 GB") || !strings.Contains(st.Memory, "rlimit") {
		t.Errorf("status says of memory %q, want the default and the rlimit", st.Memory)
	}
	small, dflt := e.session("small"), e.session("dflt")
	if small.MemoryLimit != 300<<20 || dflt.MemoryLimit != 1<<30 || small.LimitBy != "rlimit" {
		t.Errorf("limits listed: small %d by %q, default %d; want 300 MiB by rlimit and the daemon's 1 GiB", small.MemoryLimit, small.LimitBy, dflt.MemoryLimit)
	}
	// A limit asked of a session that already runs cannot take effect:
	// the reply says so, and how to apply it.
	if r := e.runJSON("exec", "dflt", "--memory", "300M", "2"); r.Status != "done" || len(r.notesOf("info")) != 1 ||
		!strings.Contains(r.notesOf("info")[0], "the memory limit of 300 MB asked for (it has a limit of 1.0 GB (rlimit)) did not take effect") ||
		!strings.Contains(r.notesOf("info")[0], "`polyrepl kill dflt`") {
		t.Errorf("--memory on a running session: %v, want a note that it did not take effect", r)
	}
	if _, stderr, code := e.run("exec", "bad", "--memory", "lots", "1"); code != 2 || !strings.Contains(stderr, "invalid memory size") {
		t.Errorf("--memory lots: exit %d, %s", code, stderr)
	}
	report(t, "4 Faults", "per-session memory limits by rlimit (`exec --memory 300M`, the daemon's $POLYREPL_MEMORY=1G, $POLYREPL_MEMORY_BY=rlimit)",
		"a cell allocating 600 MB got %s and the session went on; sessions list each limit and how it is held", r.Error.Type)

	c := newEnv(t)
	c.must(0, "exec", "big", "--memory", "200M", "kept_name = 1")
	by := c.session("big").LimitBy
	if !strings.HasPrefix(by, "cgroup") {
		t.Skipf("no cgroup to hold memory limits with here (held by %s: %s), so a session killed for memory is not tested", by, c.status().Memory)
	}
	if st := c.status(); !strings.Contains(st.Memory, "no default limit") || !strings.Contains(st.Memory, by+" ") {
		t.Errorf("status says of memory %q, want no default and %s", st.Memory, by)
	}
	// A child going over: the kernel kills the largest process, the child;
	// the runtime lives on and the reply says what happened.
	r = c.runJSON("exec", "big", "import subprocess, sys\nsubprocess.run([sys.executable, '-c', \"chunks = [b'x' * (50 << 20) for _ in range(20)]\"]).returncode")
	if oom := r.notesOf("info"); r.Status != "done" || r.Value != "-9" || len(oom) != 1 || !strings.Contains(oom[0], "killed 1 process(es) of this session during this cell for going over its memory limit of 200 MB") {
		t.Errorf("a child going over a %s limit: %v, want the child killed, the session alive and a note saying why", by, r)
	}
	childNote := r.notesOf("info")
	r = c.runJSON("exec", "big", "chunks = [b'x' * (50 << 20) for _ in range(20)]")
	if r.Status != "dead" {
		t.Fatalf("1 GB in a 200 MB session held by %s: %v, want the session dead", by, r)
	}
	wantContains(t, "the reply of a cell killed for memory", r.String(), "killed by the kernel for going over its memory limit of 200 MB ("+by+")")
	dead := c.session("big")
	if dead.State != "dead" || dead.Death == nil || dead.Death.By != "memory" {
		t.Errorf("sessions after the kill: %+v, want dead by memory", dead)
	}
	r = c.runJSON("exec", "big", "1")
	if lost := r.notesOf("lost"); r.Status != "done" || len(lost) != 1 || !strings.Contains(lost[0], "memory limit") || !strings.Contains(lost[0], "kept_name") {
		t.Errorf("the exec after a kill for memory: %v, want a fresh session and a note of what was lost and why", r)
	}
	report(t, "4 Faults", "per-session memory limits by cgroup (`exec --memory 200M`, the default way where the machine allows)",
		"held by %s here; a child process allocating 1 GB was killed and the reply said %q; a cell allocating 1 GB: the kernel killed the session, reported as %q; the next exec started afresh and said what was lost",
		by, childNote, dead.Death.Cause)
}

// TestReliabilityMemoryCgroupV2 puts internal/limit's TestCgroupV2InVM (a
// real Linux kernel under qemu, with the unified hierarchy these machines
// lack) in the report. go test ./... runs it in its own package, so this
// runs only when the report is being written.
func TestReliabilityMemoryCgroupV2(t *testing.T) {
	if os.Getenv("POLYREPL_RELIABILITY_REPORT") == "" {
		t.Skip("internal/limit runs TestCgroupV2InVM itself; this only reports it")
	}
	cmd := exec.Command("go", "test", "-count=1", "-v", "-run", "^TestCgroupV2InVM$", "./internal/limit")
	cmd.Dir = moduleRoot
	b, err := cmd.CombinedOutput()
	out := string(b)
	var passed []string
	var took string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if _, sub, ok := strings.Cut(line, "--- PASS: TestInVM/"); ok {
			passed = append(passed, strings.Fields(sub)[0])
		}
		if _, rest, ok := strings.Cut(line, "booted, tested and stopped in "); ok {
			took = rest
		}
	}
	switch {
	case err != nil:
		t.Errorf("TestCgroupV2InVM failed: %v\n%s", err, out)
	case len(passed) == 0:
		t.Skipf("TestCgroupV2InVM did not run here:\n%s", out)
	}
	report(t, "4 Faults", "per-session memory limits by cgroup v2, in a VM (a Linux kernel under qemu; internal/limit TestCgroupV2InVM)",
		"a 256 MB process under a 64 MB limit killed and reported as an out-of-memory kill, one within it untouched, the group removed after; cases passed: %s (delegated: a cgroup marked trusted.delegate; systemd: not delegated, a scope asked of a stand-in busctl; nothing_delegated: the rlimit); the VM booted, tested and stopped in %s",
		strings.Join(passed, ", "), took)
}

// TestReliabilityReadOnlyState runs the daemon with its state directory
// read-only (a bind mount in a mount namespace of its own): cells still
// run and return, and replies say what could not be saved.
func TestReliabilityReadOnlyState(t *testing.T) {
	needPython(t)
	t.Parallel()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	if err := exec.Command("unshare", "-m", "true").Run(); err != nil {
		t.Skipf("cannot make a mount namespace here (needs CAP_SYS_ADMIN): %v", err)
	}
	e := newEnv(t)
	e.must(0, "exec", "ro", "1")
	e.must(0, "stop")
	e.startDaemonUnder("the daemon with a read-only state directory", "unshare", "-m", "sh", "-c",
		`mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && exec "$2" daemon`, "sh", e.state, e.bin)
	r := e.runJSON("exec", "ro", "x = 6 * 7\nx")
	notes := strings.Join(r.notesOf("save"), "\n")
	if r.Value != "42" || !strings.Contains(notes, "transcript") || !strings.Contains(notes, "record could not be saved") {
		t.Errorf("a cell with the state read-only: %v", r)
	}
	r2 := e.runJSON("exec", "ro", "print('v' * 100000)")
	notes2 := strings.Join(r2.notesOf("save"), "\n")
	if r2.Status != "done" || r2.OutputCut == nil || !strings.Contains(notes2, "could not be saved") {
		t.Errorf("a long output with the state read-only: %v", r2)
	}
	report(t, "4 Faults", "the state directory is read-only (a read-only bind mount under the daemon)",
		"cells ran and returned (`x` = %s); replies said: %q", r.Value, firstLine(notes))
}
