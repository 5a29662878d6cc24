package mcp

// The test fixture: an in-process daemon, the MCP server under test and
// MCP clients connected to it in memory.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
	"github.com/polyrepl/polyrepl/internal/daemon"
	"github.com/polyrepl/polyrepl/internal/proc/proctest"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// callTimeout bounds every tool call, so a hang fails instead of stalling
// the suite. It is an upper bound, never an expectation.
const callTimeout = 60 * time.Second

// testAgent is how the test's MCP client introduces itself.
var testAgent = &mcp.Implementation{Name: "test-agent", Title: "Test Agent", Version: "1.0"}

// fixture is one test's world: an in-process daemon on private XDG
// directories and the MCP server under test, talking to it through a
// client that never starts a daemon of its own.
type fixture struct {
	t      testing.TB
	srv    *Server
	client *client.Client
	cwd    string // where the server "runs": new sessions start here
	python string // "" if the machine has none
	tag    string // carried in the environment of every session process
}

// newFixture starts a daemon in this process and the MCP server. With
// needPython, it skips the test on a machine without Python.
func newFixture(t testing.TB, needPython bool) *fixture {
	t.Helper()
	py, why := testenv.Python()
	if needPython && py == "" {
		t.Skip(why)
	}
	runtimeDir, stateDir, cwd := testenv.ShortDir(t), testenv.ShortDir(t), testenv.ShortDir(t)
	t.Setenv("XDG_RUNTIME_DIR", runtimeDir)
	t.Setenv("XDG_STATE_HOME", stateDir)

	logs := &testenv.Buffer{}
	prevOut, prevFlags := log.Writer(), log.Flags()
	log.SetOutput(logs)

	d, err := daemon.Listen()
	if err != nil {
		log.SetOutput(prevOut)
		t.Fatalf("daemon.Listen: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve() }()

	var buf [8]byte
	rand.Read(buf[:])
	f := &fixture{t: t, cwd: cwd, python: py, tag: hex.EncodeToString(buf[:])}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "POLYREPL_") {
			env = append(env, kv)
		}
	}
	env = append(env, "POLYREPL_TEST_TAG="+f.tag)
	if py != "" {
		env = append(env, "POLYREPL_PYTHON="+py)
	}
	f.client = client.New()
	f.client.AutoStart = false
	f.srv = New(f.client, cwd, env)

	t.Cleanup(func() {
		d.Stop("the test ended", false)
		select {
		case <-served:
		case <-time.After(30 * time.Second):
			t.Errorf("the daemon did not stop within 30 s")
		}
		var left []string
		for deadline := time.Now().Add(5 * time.Second); ; {
			left = tagged(f.tag)
			if len(left) == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if len(left) > 0 {
			t.Errorf("session processes left after the daemon stopped:\n  %s", strings.Join(left, "\n  "))
		}
		log.SetOutput(prevOut)
		log.SetFlags(prevFlags)
		if t.Failed() {
			t.Logf("daemon log:\n%s", logs.String())
		}
	})
	return f
}

// tagged lists the live processes whose environment carries tag.
func tagged(tag string) []string {
	var out []string
	for _, p := range proctest.WithVar("POLYREPL_TEST_TAG=" + tag) {
		out = append(out, fmt.Sprintf("pid %d: %s", p.PID, p.Cmdline))
	}
	return out
}

// agent is one MCP client connected to the server under test.
type agent struct {
	t  testing.TB
	cs *mcp.ClientSession

	mu       sync.Mutex
	progress []mcp.ProgressNotificationParams
}

// connect attaches a new MCP client, introducing itself as impl.
func (f *fixture) connect(impl *mcp.Implementation) *agent {
	t := f.t
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := f.srv.Connect(ctx, st)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	a := &agent{t: t}
	c := mcp.NewClient(impl, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.progress = append(a.progress, *req.Params)
		},
	})
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	a.cs = cs
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return a
}

func (a *agent) progressSeen() []mcp.ProgressNotificationParams {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.progress)
}

// call calls a tool and fails the test on a protocol error.
func (a *agent) call(tool string, args any) *mcp.CallToolResult {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		a.t.Fatalf("%s %v: protocol error: %v", tool, args, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its result.
func (a *agent) ok(tool string, args any) *mcp.CallToolResult {
	a.t.Helper()
	res := a.call(tool, args)
	if res.IsError {
		a.t.Fatalf("%s %v: tool error: %s", tool, args, text(res))
	}
	return res
}

// cell calls exec, wait or interrupt and decodes the cell result.
func (a *agent) cell(tool string, args any) (api.CellResult, string) {
	a.t.Helper()
	res := a.ok(tool, args)
	var r api.CellResult
	structured(a.t, res, &r)
	return r, text(res)
}

// text joins a result's text content.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structured decodes a result's structured content into v.
func structured(t testing.TB, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.StructuredContent == nil {
		t.Fatalf("no structured content; text: %s", text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	// Decode into a zero value, so nothing from an earlier result stays.
	rv := reflect.ValueOf(v).Elem()
	rv.SetZero()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

func notesOf(r api.CellResult, kind string) []string {
	var out []string
	for _, n := range r.Notes {
		if n.Kind == kind {
			out = append(out, n.Text)
		}
	}
	return out
}

func wantContains(t *testing.T, what, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(text, s) {
			t.Errorf("%s lacks %q:\n%s", what, s, text)
		}
	}
}

func wantLacks(t *testing.T, what, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(text, s) {
			t.Errorf("%s has %q, which it should not:\n%s", what, s, text)
		}
	}
}

// cliAdvice is what text for a model must not carry: the CLI's commands
// and flags (the model has tools, not a shell prompt of ours), or the
// remains of a botched rewrite of them.
var cliAdvice = []string{"`", "polyrepl exec", "polyrepl wait", "polyrepl interrupt", "polyrepl kill", ")-)", ")polyrepl", "standard input"}

// mustStart runs a trivial cell so the session exists before a timed step.
func (a *agent) mustStart(session string) {
	a.t.Helper()
	if r, _ := a.cell("exec", map[string]any{"session": session, "code": "0"}); r.Status != api.StatusDone {
		a.t.Fatalf("exec 0 in %s: status %q, want done", session, r.Status)
	}
}
