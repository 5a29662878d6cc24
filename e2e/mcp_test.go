package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/polyrepl/polyrepl/internal/proc/proctest"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// e2eAgent is how the tests' MCP client introduces itself.
var e2eAgent = &mcp.Implementation{Name: "e2e-agent", Title: "E2E Agent", Version: "1.0"}

// mcpServer is one `polyrepl mcp` process and the SDK client session
// talking to it.
type mcpServer struct {
	t      *testing.T
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	stderr *testenv.Buffer // for failure messages
	closed bool
}

// mcpCommand is `polyrepl mcp` in the env's world.
func (e *env) mcpCommand() (*exec.Cmd, *testenv.Buffer) {
	cmd := exec.Command(e.bin, "mcp")
	cmd.Env = append([]string{}, e.vars...)
	cmd.Dir = e.home
	stderr := &testenv.Buffer{}
	cmd.Stderr = stderr
	return cmd, stderr
}

// startMCP launches `polyrepl mcp` with the SDK's CommandTransport. The
// client session is closed at cleanup, before the harness's teardown
// looks for leftover processes.
func (e *env) startMCP() *mcpServer {
	return e.startMCPWith(e.vars)
}

// startMCPWith is startMCP with the environment env only, as a client
// that starts its servers with a few variables does.
func (e *env) startMCPWith(env []string) *mcpServer {
	t := e.t
	t.Helper()
	cmd, stderr := e.mcpCommand()
	cmd.Env = append([]string{}, env...)
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cs, err := mcp.NewClient(e2eAgent, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to polyrepl mcp: %v\nstderr: %s", err, stderr.String())
	}
	s := &mcpServer{t: t, cmd: cmd, cs: cs, stderr: stderr}
	t.Cleanup(s.close)
	return s
}

// close ends the client session, which closes the server's stdin, and
// checks that the server exited by itself.
func (s *mcpServer) close() {
	if s.closed {
		return
	}
	s.closed = true
	if err := s.cs.Close(); err != nil {
		s.t.Logf("closing the MCP client session: %v", err)
	}
	if ps := s.cmd.ProcessState; ps == nil {
		s.t.Errorf("polyrepl mcp is still running after its client closed the session")
		s.cmd.Process.Kill()
		s.cmd.Wait()
	} else if !ps.Exited() || ps.ExitCode() != 0 {
		s.t.Errorf("polyrepl mcp ended with %v after its client closed the session, want exit 0; stderr:\n%s", ps, clip(s.stderr.String()))
	}
}

// call calls a tool that must succeed and decodes its structured content
// into out (if not nil). It returns the text content.
func (s *mcpServer) call(tool string, args map[string]any, out any) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		s.t.Fatalf("%s %v: %v\nstderr: %s", tool, args, err, clip(s.stderr.String()))
	}
	txt := toolText(res)
	if res.IsError {
		s.t.Fatalf("%s %v: tool error: %s", tool, args, txt)
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %v: structured content %s: %v", tool, args, b, err)
		}
	}
	return txt
}

// cell calls exec, wait or interrupt and returns the cell result.
func (s *mcpServer) cell(tool string, args map[string]any) (cellResult, string) {
	s.t.Helper()
	var r cellResult
	txt := s.call(tool, args, &r)
	return r, txt
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPPersistentSession runs a session through the real `polyrepl mcp`
// over stdio: define, reuse, timeout then wait, interrupt. The server
// starts the daemon itself, exits when its client goes, and the daemon
// and the session outlive it.
func TestMCPPersistentSession(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	s := e.startMCP()

	if got := s.cs.InitializeResult().ServerInfo.Name; got != "polyrepl" {
		t.Errorf("server name %q, want polyrepl", got)
	}
	r, txt := s.cell("exec", map[string]any{"session": "e2e", "code": "x = 6*7"})
	if r.Status != "done" || r.Cell != 1 {
		t.Fatalf("exec x = 6*7: %v", r)
	}
	wantContains(t, "first exec text", txt, "Created session 'e2e'")

	r, txt = s.cell("exec", map[string]any{"session": "e2e", "code": "x + 1"})
	if r.Status != "done" || r.Cell != 2 {
		t.Errorf("exec x + 1: %v, want cell 2 done", r)
	}
	wantContains(t, "exec x + 1 text", txt, "Out[2]: 43")

	r, txt = s.cell("exec", map[string]any{"session": "e2e", "timeout": 1,
		"code": "import time\nprint('before-sleep')\ntime.sleep(2)\nprint('after-sleep')\nx"})
	if r.Status != "running" || !strings.HasPrefix(txt, "before-sleep\n[Cell 3 is still running") || len(r.notesOf("running")) != 1 {
		t.Errorf("exec timeout 1 of a 2 s cell: %v, %q, want running with output before-sleep and a running note", r, txt)
	}
	r, txt = s.cell("wait", map[string]any{"session": "e2e"})
	if r.Status != "done" || txt != "after-sleep\nOut[3]: 42" {
		t.Errorf("wait: %v, %q, want done with output after-sleep and value 42", r, txt)
	}

	r, _ = s.cell("exec", map[string]any{"session": "e2e", "code": "time.sleep(100)", "timeout": 0.5})
	if r.Status != "running" {
		t.Fatalf("exec timeout 0.5 of sleep(100): %v, want running", r)
	}
	r, _ = s.cell("interrupt", map[string]any{"session": "e2e"})
	if r.Status != "interrupted" {
		t.Errorf("interrupt: %v, want interrupted", r)
	}
	if _, txt = s.cell("exec", map[string]any{"session": "e2e", "code": "x"}); txt != "Out[5]: 42" {
		t.Errorf("x after interrupt: %q, want Out[5]: 42", txt)
	}

	txt = s.call("sessions", nil, nil)
	wantContains(t, "sessions text", txt, "e2e", "names:", "x")

	pid := s.cmd.Process.Pid
	s.close()
	if proctest.State(pid) != 0 {
		t.Errorf("polyrepl mcp (pid %d) is still alive after its client closed the session", pid)
	}
	// The daemon and the session outlive the MCP server.
	if got := e.session("e2e"); got.State != "idle" || !slices.Contains(got.Names, "x") {
		t.Errorf("after the MCP server exited: session %+v, want e2e idle with the name x", got)
	}
}

// jsonRPC is the envelope every line on the server's stdout must be.
type jsonRPC struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// TestMCPStdoutPure records every byte `polyrepl mcp` writes to stdout
// while a cell's background thread writes to fd 1 and sys.stdout after its
// call returned: all of it must be JSON-RPC.
func TestMCPStdoutPure(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)

	cmd, stderr := e.mcpCommand()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	t.Cleanup(func() {
		if !exited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})

	// A tee: every raw line goes to the record and on to the client.
	var (
		mu    sync.Mutex
		lines []string
	)
	pr, pw := io.Pipe()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		defer pw.Close()
		br := bufio.NewReader(stdout)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				mu.Lock()
				lines = append(lines, string(line))
				mu.Unlock()
				pw.Write(line) // fails once the client has gone; keep recording
			}
			if err != nil {
				return
			}
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cs, err := mcp.NewClient(e2eAgent, nil).Connect(ctx, &mcp.IOTransport{Reader: pr, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connecting to polyrepl mcp: %v\nstderr: %s", err, stderr.String())
	}
	s := &mcpServer{t: t, cmd: cmd, cs: cs, stderr: stderr}

	noise := "import os, sys, threading, time\n" +
		"def _noise():\n" +
		"    for i in range(10):\n" +
		"        os.write(1, b'NOISE-FD1 %d\\n' % i)\n" +
		"        print('NOISE-PRINT', i)\n" +
		"        sys.stdout.flush()\n" +
		"        time.sleep(0.1)\n" +
		"threading.Thread(target=_noise, daemon=True).start()\n" +
		"'started'"
	r, txt := s.cell("exec", map[string]any{"session": "pure", "code": noise})
	if r.Status != "done" || !strings.Contains(txt, "Out[1]: 'started'") {
		t.Fatalf("exec of the noisy cell: %v, %q", r, txt)
	}
	// The thread goes on printing for about a second: wait until the
	// record holds its last lines (reading the record moves no client's
	// place in it).
	printed := func() bool {
		out, _, _ := e.run("log", "pure")
		return strings.Contains(out, "NOISE-PRINT 9") && strings.Contains(out, "NOISE-FD1 9")
	}
	if !waitFor(30*time.Second, printed) {
		t.Fatalf("the noisy thread's last lines never reached the record")
	}
	r, txt = s.cell("exec", map[string]any{"session": "pure", "code": "1+1"})
	if r.Status != "done" || !strings.HasSuffix(txt, "Out[2]: 2") {
		t.Errorf("exec 1+1 after the noise: %v, %q", r, txt)
	}
	// What the thread printed after its cell is not lost: the next reply
	// carries it.
	wantContains(t, "reply after the noise", txt, "NOISE-PRINT 9", "NOISE-FD1 9")

	if err := cs.Close(); err != nil {
		t.Logf("closing the client session: %v", err)
	}
	select {
	case <-copied:
	case <-time.After(30 * time.Second):
		t.Fatalf("polyrepl mcp kept its stdout open 30 s after its client closed the session")
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		exited = true
		if err != nil {
			t.Errorf("polyrepl mcp: %v; stderr:\n%s", err, clip(stderr.String()))
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("polyrepl mcp did not exit within 30 s of its client closing the session")
	}

	mu.Lock()
	defer mu.Unlock()
	if len(lines) < 3 {
		t.Errorf("recorded only %d lines of stdout, want the replies to initialize, tools/call and tools/call", len(lines))
	}
	for i, line := range lines {
		var m jsonRPC
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		err := dec.Decode(&m)
		if err == nil && dec.More() {
			err = io.ErrUnexpectedEOF
		}
		if err != nil || m.JSONRPC != "2.0" || (m.Method == "" && m.ID == nil) ||
			(m.Method == "" && m.Result == nil && m.Error == nil) || !strings.HasSuffix(line, "\n") {
			t.Errorf("stdout line %d is not one JSON-RPC 2.0 message (%v): %q", i+1, err, clip(line))
		}
	}
	all := strings.Join(lines, "")
	for _, raw := range []string{"\nNOISE-FD1", "\nNOISE-PRINT"} {
		if strings.Contains("\n"+all, raw) {
			t.Errorf("the background thread's text reached the MCP server's stdout as raw text (%q)", strings.TrimSpace(raw))
		}
	}
}

// listedNames reads the names a sessions listing's text gives a
// session: the "names:" line under its own.
func listedNames(txt, session string) []string {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(session) + `  .*\n(?:    .*\n)*?    names: (.*)$`).FindStringSubmatch(txt)
	if m == nil {
		return nil
	}
	return strings.Split(m[1], ", ")
}

// TestMCPSharesSessionsWithCLI shows that an agent's session and a
// person's are the same: names set on either side are seen on the other,
// the listing through MCP shows the CLI's session, and the CLI is told
// which agent keeps a session busy.
func TestMCPSharesSessionsWithCLI(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	s := e.startMCP()

	s.cell("exec", map[string]any{"session": "shared", "code": "x = 41"})
	out, _ := e.must(0, "exec", "shared", "x+1")
	if !regexp.MustCompile(`Out\[\d+\]: 42\n`).MatchString(out) {
		t.Errorf("polyrepl exec shared 'x+1' printed %q, want Out[…]: 42", out)
	}

	e.must(0, "exec", "shared", "y = 'set-by-cli'")
	if _, txt := s.cell("exec", map[string]any{"session": "shared", "code": "y"}); !strings.HasSuffix(txt, "'set-by-cli'") {
		t.Errorf("y through MCP: %q, want 'set-by-cli'", txt)
	}

	e.must(0, "exec", "clisess", "z = 3")
	var list struct {
		Sessions []sessionInfo `json:"sessions"`
	}
	txt := s.call("sessions", nil, &list)
	byName := map[string]sessionInfo{}
	for _, si := range list.Sessions {
		byName[si.Name] = si
	}
	if _, ok := byName["clisess"]; !ok {
		t.Errorf("sessions through MCP: %+v, want clisess", list.Sessions)
	}
	if _, ok := byName["shared"]; !ok {
		t.Errorf("sessions through MCP: %+v, want shared", list.Sessions)
	}
	// The names are in the text, on a line under each session's.
	if names := listedNames(txt, "clisess"); !slices.Contains(names, "z") {
		t.Errorf("sessions text: clisess has the names %v, want z:\n%s", names, txt)
	}
	if names := listedNames(txt, "shared"); !slices.Contains(names, "x") || !slices.Contains(names, "y") {
		t.Errorf("sessions text: shared has the names %v, want x and y:\n%s", names, txt)
	}

	// A cell the agent runs keeps the session busy for the CLI, which is
	// told who sent it.
	r, _ := s.cell("exec", map[string]any{"session": "shared", "code": "import time\ntime.sleep(3)", "timeout": 0.5})
	if r.Status != "running" {
		t.Fatalf("exec timeout 0.5 of sleep(3): %v, want running", r)
	}
	_, errOut, code := e.run("exec", "shared", "1")
	if code == 0 {
		t.Errorf("polyrepl exec on a session busy with the agent's cell: exit 0, want a refusal")
	}
	wantContains(t, "busy refusal", errOut, "busy", "E2E Agent via mcp")
	s.cell("interrupt", map[string]any{"session": "shared"})
}
