package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/holder"
	"github.com/polyrepl/polyrepl/internal/state"
)

// alice and bob are the clients of the tests; both hear activity.
var (
	alice = api.Client{Who: "alice", How: "cli"}
	bob   = api.Client{Who: "bob", How: "cli"}
	carol = api.Client{Who: "carol", How: "mcp", Conn: "mcp-1"}
)

// newTestManager is the one place a test Manager is made: its state and
// runtime directories are temporary, and when the test ends every session
// is stopped and no process of any is left.
func newTestManager(t testing.TB) *Manager {
	t.Helper()
	base := t.TempDir()
	if err := os.Chmod(base, 0o700); err != nil { // the state dir's parent must be private
		t.Fatal(err)
	}
	st, err := state.Open(filepath.Join(base, "polyrepl", "state"))
	if err != nil {
		t.Fatal(err)
	}
	runtimeDir := t.TempDir()
	m := NewManager(Config{State: st, RuntimeDir: runtimeDir, Holders: holder.InProcess{}})
	testDirs.Store(m, managerDirs{state: st, runtime: runtimeDir})
	t.Cleanup(func() {
		defer testDirs.Delete(m)
		m.StopAll("the test ended")
		for _, f := range fakes.in(runtimeDir) {
			f.waitExited(t)
			if f.alive() {
				t.Errorf("the fake runtime of generation %s was left running", f.gen)
			}
		}
	})
	return m
}

// managerDirs are the directories newTestManager gave a manager, so tests
// need not know its fields.
type managerDirs struct {
	state   *state.Dir
	runtime string
}

var testDirs sync.Map // *Manager → managerDirs

func dirsOf(m *Manager) managerDirs {
	d, _ := testDirs.Load(m)
	return d.(managerDirs)
}

// startedIn counts the runtime processes m has started.
func startedIn(m *Manager) int { return len(fakes.in(dirsOf(m).runtime)) }

// req is an exec request for the fake runtime from alice.
func req(code string) api.ExecRequest { return reqBy(alice, code) }

// reqBy is req sent by client c.
func reqBy(c api.Client, code string) api.ExecRequest {
	return api.ExecRequest{Code: code, Client: c, Spawn: api.Spawn{Runtime: fakeRuntime, Cwd: "/"}}
}

// execOK runs a cell that must be answered without error.
func execOK(t *testing.T, m *Manager, name string, r api.ExecRequest) api.CellResult {
	t.Helper()
	res, err := m.Exec(context.Background(), name, r, nil)
	if err != nil {
		t.Fatalf("exec %q in %s: %v", r.Code, name, err)
	}
	return res
}

// reply is what a call made in the background answered.
type reply struct {
	r   api.CellResult
	err error
}

// execAsync runs a cell in the background; the channel gets its reply.
func execAsync(ctx context.Context, m *Manager, name string, r api.ExecRequest) <-chan reply {
	ch := make(chan reply, 1)
	go func() {
		res, err := m.Exec(ctx, name, r, nil)
		ch <- reply{res, err}
	}()
	return ch
}

// await returns the reply of a background call.
func await(t *testing.T, ch <-chan reply) reply {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no reply within 10s")
		return reply{}
	}
}

// startBlocked runs a cell that blocks in the background, and returns
// once the runtime has it, with the session's fake and the pending reply.
func startBlocked(t *testing.T, m *Manager, name string, r api.ExecRequest) (*fakeProc, <-chan reply) {
	t.Helper()
	ch := execAsync(context.Background(), m, name, r)
	f := waitFake(t, m, name)
	for f.WaitRun(t).Code != r.Code { // skip the cells run before
	}
	return f, ch
}

// waitFake returns the fake runtime of name's live session, waiting for
// the session to be listed.
func waitFake(t *testing.T, m *Manager, name string) *fakeProc {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, i := range m.List(false) {
			if i.Name == name && i.State != Dead {
				return fakeOf(t, i.Generation)
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("session %s was not created", name)
	return nil
}

// codeOf is the Code of err, a *Error, or "" if it is none.
func codeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// wantCode fails unless err is a *Error with code; it returns it.
func wantCode(t *testing.T, err error, code string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("got error %v (code %q), want code %q", err, codeOf(err), code)
	}
	return e
}

// kinds lists the kinds of notes, in order.
func kinds(notes []api.Note) []string {
	out := make([]string, 0, len(notes))
	for _, n := range notes {
		out = append(out, n.Kind)
	}
	return out
}

// count is how many notes are of kind.
func count(notes []api.Note, kind string) int {
	n := 0
	for _, x := range notes {
		if x.Kind == kind {
			n++
		}
	}
	return n
}

// describe is Describe of a session that must exist.
func describe(t *testing.T, m *Manager, name string) api.SessionInfo {
	t.Helper()
	i, err := m.Describe(name, api.Client{})
	if err != nil {
		t.Fatalf("describe %s: %v", name, err)
	}
	return i
}
