package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 36's "no way out through polyrepl": a session's policy is part
// of it, and no caller reaches past its own — not a client that declares
// a ceiling, not a process with no_new_privs, not a process inside a
// sandboxed session's cell, whatever it sends. These tests make sessions
// by raw HTTP with spawn.sandbox (the CLI's flags are the edges'), and
// place callers by ancestry and cookie; the kernel's confinement of the
// runtimes is tested with it (sandbox_enforce_test.go).

// apiReply is one raw API call's status and body.
type apiReply struct {
	status int
	body   string
}

func (r apiReply) String() string {
	return fmt.Sprintf("%d %s", r.status, clip(strings.TrimSpace(r.body)))
}

// call sends one raw request to the daemon, with a declared ceiling if
// ceiling is not "".
func (e *env) call(method, path, body, ceiling string) apiReply {
	e.t.Helper()
	req, err := http.NewRequest(method, "http://polyrepl"+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if ceiling != "" {
		req.Header.Set("Polyrepl-Sandbox-Ceiling", ceiling)
	}
	resp, err := e.api().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return apiReply{resp.StatusCode, string(b)}
}

// spawnBody is an exec request's body: code, in a new session at cwd
// with policy sandbox (JSON, "" for none), in the env's world.
func (e *env) spawnBody(code, cwd, sandbox string) string {
	env, _ := json.Marshal(e.vars)
	sb := ""
	if sandbox != "" {
		sb = `,"sandbox":` + sandbox
	}
	return fmt.Sprintf(`{"code":%q,"spawn":{"cwd":%q,"env":%s%s}}`, code, cwd, env, sb)
}

// listed is the sessions a raw listing gives, by name, with their
// policies.
type listedSession struct {
	Name    string `json:"name"`
	Cwd     string `json:"cwd"`
	Sandbox *struct {
		Policy   string   `json:"policy"`
		Network  string   `json:"network"`
		Writable []string `json:"writable"`
	} `json:"sandbox"`
}

func listed(t *testing.T, r apiReply) map[string]listedSession {
	t.Helper()
	var v struct {
		Sessions []listedSession `json:"sessions"`
	}
	if r.status != 200 || json.Unmarshal([]byte(r.body), &v) != nil {
		t.Fatalf("listing: %s", r)
	}
	out := map[string]listedSession{}
	for _, s := range v.Sessions {
		out[s.Name] = s
	}
	return out
}

func policyOf(s listedSession) string {
	if s.Sandbox == nil {
		return "<none>"
	}
	return s.Sandbox.Policy + "/" + s.Sandbox.Network
}

// TestSandboxPolicyKept: a session's policy is made whole by the daemon,
// shown by sessions and in the record's created entry, kept across
// restart and across a daemon killed with SIGKILL; a different policy
// for the live session is refused; a bad one is refused naming it.
func TestSandboxPolicyKept(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "warm", "1") // a daemon, started by the CLI as a person's would be
	r := e.call("POST", "/v1/sessions/ro/exec", e.spawnBody("x = 1", e.home, `{"policy":"readonly","readable":["/opt/../srv/"]}`), "")
	if r.status != 200 {
		t.Fatalf("exec with a read-only policy: %s", r)
	}
	check := func(when string) {
		t.Helper()
		s := listed(t, e.call("GET", "/v1/sessions", "", ""))["ro"]
		if policyOf(s) != "read-only/off" {
			t.Errorf("%s: sessions shows the policy %s; want read-only/off", when, policyOf(s))
		}
	}
	check("created")
	if s := listed(t, e.call("GET", "/v1/sessions", "", ""))["warm"]; policyOf(s) != "full/on" {
		t.Errorf("a session that asked for none shows %s; want full/on", policyOf(s))
	}
	rec := e.call("GET", "/v1/sessions/ro/record", "", "")
	wantContains(t, "the record's created entry", rec.body, `"kind":"created"`, `"sandbox":{"policy":"read-only","network":"off","readable":["/srv"]}`)

	bad := e.call("POST", "/v1/sessions/bad/exec", e.spawnBody("1", e.home, `{"policy":"jail"}`), "")
	if bad.status != 400 || !strings.Contains(bad.body, `"field":"sandbox"`) || !strings.Contains(bad.body, "no sandbox policy") {
		t.Errorf("a bad policy: %s; want 400 naming the field sandbox", bad)
	}
	other := e.call("POST", "/v1/sessions/ro/exec", e.spawnBody("x", e.home, `{"policy":"workspace-write"}`), "")
	if other.status != 400 || !strings.Contains(other.body, `"field":"sandbox"`) || !strings.Contains(other.body, "runs under the sandbox read-only") {
		t.Errorf("a different policy for the live session: %s; want 400 naming the field sandbox", other)
	}
	same := e.call("POST", "/v1/sessions/ro/exec", e.spawnBody("x", e.home, `{"policy":"read-only","network":"off","readable":["/srv"]}`), "")
	unasked := e.call("POST", "/v1/sessions/ro/exec", e.spawnBody("x", e.home, ""), "")
	if same.status != 200 || unasked.status != 200 {
		t.Errorf("the same policy, and none: %s, %s; want both to run", same, unasked)
	}
	report(t, "13 Sandbox: no way out through polyrepl", "a different policy for a live session", "%d `%s`", other.status, clip(strings.TrimSpace(other.body)))

	// A refusal by the kernel, in the runtime's own words, gets a note
	// naming the policy: in a sandboxed session only.
	denied := `raise PermissionError(13, "Permission denied", "/etc/polyrepl-denied")`
	refused := e.call("POST", "/v1/sessions/ro/exec", fmt.Sprintf(`{"code":%q}`, denied), "")
	wantContains(t, "a PermissionError in a read-only session", refused.body, `"kind":"sandbox"`, `"sandbox":{"policy":"read-only"`, `"said":"PermissionError: [Errno 13] Permission denied`)
	if full := e.call("POST", "/v1/sessions/warm/exec", fmt.Sprintf(`{"code":%q}`, denied), ""); strings.Contains(full.body, `"kind":"sandbox"`) {
		t.Errorf("a refusal in a full session got a sandbox note: %s", full)
	}
	report(t, "13 Sandbox: no way out through polyrepl", "a cell of a read-only session raises PermissionError", "its result carries a sandbox note with the policy: %v", strings.Contains(refused.body, `"kind":"sandbox"`))

	if r := e.call("POST", "/v1/sessions/ro/restart", `{}`, ""); r.status != 200 {
		t.Fatalf("restart: %s", r)
	}
	check("restarted")

	pid := e.status().PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.must(0, "exec", "warm", "2") // starts the next daemon, which takes the sessions up
	check("after the daemon's SIGKILL")
	report(t, "13 Sandbox: no way out through polyrepl", "a session's policy across restart and a daemon's SIGKILL", "kept: %s", policyOf(listed(t, e.call("GET", "/v1/sessions", "", ""))["ro"]))
}

// TestSandboxCeilingHeader: a client that declares a ceiling sees and
// uses only the sessions within it, gets it as its new sessions' policy,
// is refused what is outside it, and cannot stop the daemon.
func TestSandboxCeilingHeader(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	work := filepath.Join(e.home, "work")
	os.MkdirAll(filepath.Join(work, "sub"), 0o700)
	e.must(0, "exec", "wide", "secret = 'sesame-4711'")
	if r := e.call("POST", "/v1/sessions/ws/exec", e.spawnBody("1", work, `{"policy":"workspace-write"}`), ""); r.status != 200 {
		t.Fatalf("a workspace-write session: %s", r)
	}
	ceiling := fmt.Sprintf(`{"sandbox":{"policy":"workspace-write"},"cwd":%q}`, work)
	got := listed(t, e.call("GET", "/v1/sessions", "", ceiling))
	if _, ok := got["wide"]; ok || len(got) != 1 {
		t.Errorf("under a workspace-write ceiling the listing shows %v; want ws alone", got)
	}
	refusals := map[string]apiReply{
		"exec":      e.call("POST", "/v1/sessions/wide/exec", e.spawnBody("secret", e.home, ""), ceiling),
		"wait":      e.call("POST", "/v1/sessions/wide/wait", `{}`, ceiling),
		"interrupt": e.call("POST", "/v1/sessions/wide/interrupt", `{}`, ceiling),
		"restart":   e.call("POST", "/v1/sessions/wide/restart", `{}`, ceiling),
		"kill":      e.call("POST", "/v1/sessions/wide/kill", `{}`, ceiling),
		"record":    e.call("GET", "/v1/sessions/wide/record", "", ceiling),
		"describe":  e.call("GET", "/v1/sessions/wide", "", ceiling),
		"glance":    e.call("GET", "/v1/sessions/wide/glance", "", ceiling),
		"complete":  e.call("POST", "/v1/sessions/wide/complete", `{"word":"se"}`, ceiling),
		"fork":      e.call("POST", "/v1/sessions/wide/fork", `{"new":"mine"}`, ceiling),
	}
	for what, r := range refusals {
		if r.status != 403 || !strings.Contains(r.body, `"code":"sandbox"`) || !strings.Contains(r.body, "outside your sandbox") {
			t.Errorf("%s of a full session under a ceiling: %s; want 403, code sandbox", what, r)
		}
	}
	report(t, "13 Sandbox: no way out through polyrepl", "a call naming a session outside the client's ceiling", "%s", refusals["exec"])
	// Unasked, a new session takes the ceiling's policy, at its own cwd.
	if r := e.call("POST", "/v1/sessions/mine/exec", e.spawnBody("1", filepath.Join(work, "sub"), ""), ceiling); r.status != 200 {
		t.Errorf("a new session under the ceiling: %s", r)
	}
	if s := listed(t, e.call("GET", "/v1/sessions", "", ceiling))["mine"]; policyOf(s) != "workspace-write/off" {
		t.Errorf("a new session under a workspace-write ceiling got %s", policyOf(s))
	}
	outsideCwd := e.call("POST", "/v1/sessions/far/exec", e.spawnBody("1", e.home, ""), ceiling)
	if outsideCwd.status != 403 || !strings.Contains(outsideCwd.body, "would be writable") || !strings.Contains(outsideCwd.body, "read-only") {
		t.Errorf("a new session outside the ceiling's workspace: %s; want 403 saying why and what works", outsideCwd)
	}
	report(t, "13 Sandbox: no way out through polyrepl", "a new session whose cwd is outside the ceiling's workspace", "%s", outsideCwd)
	wider := e.call("POST", "/v1/sessions/wider/exec", e.spawnBody("1", work, `{"policy":"full"}`), ceiling)
	if wider.status != 403 || !strings.Contains(wider.body, "full allows more than workspace-write") {
		t.Errorf("a full session asked for under the ceiling: %s", wider)
	}
	if r := e.call("POST", "/v1/sessions/ro/exec", e.spawnBody("1", e.home, `{"policy":"read-only"}`), ceiling); r.status != 200 {
		t.Errorf("a read-only session elsewhere under a workspace-write ceiling: %s", r)
	}
	stop := e.call("POST", "/v1/stop", "", ceiling)
	if stop.status != 403 || !strings.Contains(stop.body, "outside your sandbox") {
		t.Errorf("stop under a ceiling: %s", stop)
	}
	report(t, "13 Sandbox: no way out through polyrepl", "stopping the daemon under a ceiling", "%s", stop)
	if r := e.call("GET", "/v1/sessions", "", `{"sandbox":{"policy":"nope"},"cwd":"/"}`); r.status != 400 || !strings.Contains(r.body, `"field":"ceiling"`) {
		t.Errorf("a malformed ceiling: %s; want 400 naming it", r)
	}
	// Without a ceiling all is as before.
	if got := listed(t, e.call("GET", "/v1/sessions", "", "")); len(got) != 4 {
		t.Errorf("without a ceiling the listing shows %d sessions; want 4", len(got))
	}
}

// TestSandboxNoNewPrivsPeer: a client under setpriv --no-new-privs (as
// every sandboxed process is) that belongs to no sandboxed session gets
// read-only, network off, whatever it declares.
func TestSandboxNoNewPrivsPeer(t *testing.T) {
	needPython(t)
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "wide", "secret = 'sesame-4711'")
	nnp := runOpts{pre: []string{"setpriv", "--no-new-privs"}}
	out, stderr, code := e.runWith(nnp, "sessions", "--json")
	if code != 0 || strings.Contains(out, `"wide"`) {
		t.Errorf("sessions under no_new_privs: exit %d, %s%s; want wide hidden", code, out, stderr)
	}
	out, stderr, code = e.runWith(nnp, "exec", "wide", "print(secret)")
	if code == 0 || strings.Contains(out, "sesame-4711") || !strings.Contains(out+stderr, "outside your sandbox") {
		t.Errorf("exec in a full session under no_new_privs: exit %d, %s%s; want refused", code, out, stderr)
	}
	report(t, "13 Sandbox: no way out through polyrepl", "`setpriv --no-new-privs polyrepl exec wide …` (a full session)", "exit %d: %s", code, firstWords(stderr+out))
	out, stderr, code = e.runWith(nnp, "exec", "fresh", "1 + 1")
	if code != 0 {
		t.Errorf("a new session under no_new_privs: exit %d, %s%s", code, out, stderr)
	}
	if s := listed(t, e.call("GET", "/v1/sessions", "", ""))["fresh"]; policyOf(s) != "read-only/off" {
		t.Errorf("a session made under no_new_privs got %s; want read-only/off", policyOf(s))
	}
	// A process with no_new_privs inside a full session's cell is no
	// wider: placed in a full session, it gets read-only all the same.
	r := e.call("POST", "/v1/sessions/wide/exec", fmt.Sprintf(`{"code":%q,"timeout":60}`,
		fmt.Sprintf(`import subprocess; p = subprocess.run(["setpriv", "--no-new-privs", %q, "sessions", "--json"], capture_output=True, text=True); print(p.stdout, p.stderr)`, e.bin)), "")
	if r.status != 200 || strings.Contains(r.body, `\"wide\"`) || !strings.Contains(r.body, `\"fresh\"`) {
		t.Errorf("setpriv --no-new-privs polyrepl sessions from a full session's cell: %s; want wide hidden", r)
	}
	if _, stderr, code := e.runWith(nnp, "stop"); code == 0 || !strings.Contains(stderr, "outside your sandbox") {
		t.Errorf("stop under no_new_privs: exit %d, %s", code, stderr)
	}
	if e.status().PID == 0 {
		t.Error("the daemon stopped")
	}
}

// TestSandboxPeerInCell: a process started inside a sandboxed session's
// cell is placed in that session — as a child, after a double fork with
// its environment cleared, and by raw HTTP to the daemon's socket — and
// gets at most its policy; a holder refuses it.
func TestSandboxPeerInCell(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "wide", "secret = 'sesame-4711'")
	if r := e.call("POST", "/v1/sessions/ro/exec", e.spawnBody("import subprocess, socket, os, json", e.home, `{"policy":"read-only"}`), ""); r.status != 200 {
		t.Fatalf("a read-only session: %s", r)
	}
	cell := func(code string) string {
		t.Helper()
		r := e.call("POST", "/v1/sessions/ro/exec", fmt.Sprintf(`{"code":%q,"timeout":60}`, code), "")
		if r.status != 200 {
			t.Fatalf("cell: %s", r)
		}
		var v struct {
			Status string `json:"status"`
			Output string `json:"output"`
			Value  string `json:"value"`
		}
		json.Unmarshal([]byte(r.body), &v)
		if v.Status != "done" {
			t.Fatalf("cell %q: %s", code, r)
		}
		return v.Output + v.Value
	}
	bin := e.bin
	// A child of the runtime.
	out := cell(fmt.Sprintf(`p = subprocess.run([%q, "sessions", "--json"], capture_output=True, text=True); print(p.returncode, p.stdout, p.stderr)`, bin))
	if strings.Contains(out, `"wide"`) || !strings.Contains(out, `"ro"`) {
		t.Errorf("polyrepl sessions from inside the read-only cell shows the full session (or not its own): %s", clip(out))
	}
	out = cell(fmt.Sprintf(`p = subprocess.run([%q, "exec", "wide", "print(secret)"], capture_output=True, text=True); print(p.returncode, p.stdout, p.stderr)`, bin))
	if strings.Contains(out, "sesame-4711") || !strings.Contains(out, "outside your sandbox") {
		t.Errorf("polyrepl exec wide from inside the read-only cell: %s", clip(out))
	}
	report(t, "13 Sandbox: no way out through polyrepl", "`polyrepl exec other …` from inside a read-only cell (other is full)", "%s", firstWords(out))
	// A double fork, the environment cleared but for the world's
	// directories: no ancestry, no cookie; its process group and
	// process session still say whose it is.
	res := filepath.Join(strings.TrimSpace(cell(`print(os.environ["TMPDIR"])`)), "orphan.out") // a read-only cell writes only there
	world := fmt.Sprintf("XDG_RUNTIME_DIR=%s XDG_STATE_HOME=%s HOME=%s POLYREPL_TEST_TAG=%s", e.runtime, e.state, e.home, e.tag)
	script := fmt.Sprintf(`(env -i %s %s sessions --json > %s.tmp 2>&1; mv %s.tmp %s) &`, world, bin, res, res, res)
	cell(fmt.Sprintf(`subprocess.run(["sh", "-c", %q])`, script))
	var orphan []byte
	waitFor(30*time.Second, func() bool {
		b, err := os.ReadFile(res)
		orphan = b
		return err == nil
	})
	if len(orphan) == 0 || strings.Contains(string(orphan), `"wide"`) || !strings.Contains(string(orphan), `"ro"`) {
		t.Errorf("a double-forked, env -i polyrepl from the cell lists: %s", clip(string(orphan)))
	}
	report(t, "13 Sandbox: no way out through polyrepl", "a double-forked `env -i polyrepl sessions` from a read-only cell", "placed: the full session not listed: %v", !strings.Contains(string(orphan), `"wide"`))
	// Raw HTTP on the daemon's socket.
	sock := filepath.Join(e.socketDir(), "daemon.sock")
	raw := func(req string) string {
		return cell(fmt.Sprintf(`s = socket.socket(socket.AF_UNIX); s.connect(%q); s.sendall(%q.encode()); b = b""
while True:
    c = s.recv(65536)
    if not c: break
    b += c
print(b.decode(errors="replace"))`, sock, req))
	}
	out = raw("GET /v1/sessions HTTP/1.0\r\nHost: x\r\n\r\n")
	if strings.Contains(out, `"wide"`) || !strings.Contains(out, `"ro"`) {
		t.Errorf("raw HTTP from the cell lists: %s", clip(out))
	}
	body := `{"code":"print(secret)"}`
	out = raw(fmt.Sprintf("POST /v1/sessions/wide/exec HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\nPolyrepl-Sandbox-Ceiling: {\"sandbox\":{\"policy\":\"full\"},\"cwd\":\"/\"}\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
	if strings.Contains(out, "sesame-4711") || !strings.Contains(out, "403") {
		t.Errorf("raw HTTP exec in the full session from the cell, declaring full: %s", clip(out))
	}
	report(t, "13 Sandbox: no way out through polyrepl", "raw HTTP from a read-only cell to the daemon's socket, declaring a full ceiling", "%s", firstWords(out))
	out = raw("POST /v1/stop HTTP/1.0\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
	if !strings.Contains(out, "403") {
		t.Errorf("raw HTTP stop from the cell: %s", clip(out))
	}

	// A holder's socket: the cell is refused before a word; this test
	// process (no sandbox, no session) is told another daemon holds it.
	holders, _ := filepath.Glob(filepath.Join(e.socketDir(), "runtimes", "holders", "*"))
	if len(holders) == 0 {
		t.Fatal("no holder sockets found")
	}
	wideSock := ""
	for _, h := range holders {
		if strings.Contains(h, e.session("wide").Generation) {
			wideSock = h
		}
	}
	if wideSock == "" {
		t.Fatalf("no holder socket of wide among %v", holders)
	}
	out = cell(fmt.Sprintf(`s = socket.socket(socket.AF_UNIX); s.connect(%q); s.settimeout(20); print("got", len(s.recv(4096)))`, wideSock))
	if !strings.Contains(out, "got 0") {
		t.Errorf("a cell connecting to another session's holder got: %s; want nothing (refused)", clip(out))
	}
	c, err := net.Dial("unix", wideSock)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, _ := c.Read(make([]byte, 4096))
	c.Close()
	if n == 0 {
		t.Errorf("an unconfined peer of the holder was refused too")
	}
	if !waitFor(10*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(e.socketDir(), "daemon.log"))
		return strings.Contains(string(b), "refused a connection to its holder")
	}) {
		t.Errorf("the daemon log does not say the holder refused the cell")
	}
	report(t, "13 Sandbox: no way out through polyrepl", "a cell connects to another session's holder socket", "closed before a word (the holder logs why)")
	if _, err := exec.LookPath("setpriv"); err == nil {
		cmd := exec.Command("setpriv", "--no-new-privs", python, "-c", fmt.Sprintf(`import socket; s = socket.socket(socket.AF_UNIX); s.connect(%q); s.settimeout(20); print("got", len(s.recv(4096)))`, wideSock))
		cmd.Env = e.vars
		b, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(b), "got 0") {
			t.Errorf("a no_new_privs peer of a holder: %v %s; want nothing (refused)", err, b)
		}
	}
}

// firstWords is s's first non-empty line, clipped.
func firstWords(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return clip(l)
		}
	}
	return ""
}
