package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

// forkReply is `fork --json`.
type forkReply struct {
	Session string `json:"session"`
	Info    struct {
		PID  int `json:"pid"`
		Fork *struct {
			From string `json:"from"`
			Cell int    `json:"cell"`
		} `json:"fork"`
	} `json:"info"`
	Notes []struct {
		Kind string `json:"kind"`
		Text string `json:"text"`
		Fork *struct {
			From         string   `json:"from"`
			Cell         int      `json:"cell"`
			Threads      []string `json:"threads"`
			Shared       []string `json:"shared"`
			ThreadsTotal int      `json:"threads_total"`
		} `json:"fork"`
	} `json:"notes"`
}

// TestFork: a fork holds the parent's names and from then on each
// changes only its own; the fork's record says whence, which thread was
// not copied and what is shared; the parent's record says it was forked;
// sessions shows the fork; killing the parent leaves the fork running,
// and a daemon SIGKILLed and replaced keeps both apart.
func TestFork(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "lab", "rows = list(range(100000))\nimport threading, time, socket\n"+
		"sock = socket.socket()\nloader = threading.Thread(target=lambda: time.sleep(300), name='loader', daemon=True)\nloader.start()")
	out, _ := e.must(0, "fork", "lab", "try", "--json")
	var r forkReply
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("fork --json: %v: %s", err, out)
	}
	if r.Session != "try" || r.Info.Fork == nil || r.Info.Fork.From != "lab" || r.Info.Fork.Cell != 1 || len(r.Notes) == 0 || r.Notes[0].Fork == nil {
		t.Fatalf("fork --json: %s", out)
	}
	created := r.Notes[0]
	wantContains(t, "the fork's creation line", created.Text, "Created session 'try' as a fork of 'lab' after its cell 1",
		"Not copied", "1 thread: loader", "Shared with 'lab'", "socket")
	if strings.Join(created.Fork.Threads, ",") != "loader" {
		t.Errorf("threads not copied: %v", created.Fork.Threads)
	}

	// Each goes on with its own copy.
	if v := e.runJSON("exec", "try", "rows.append(-1); len(rows), loader.is_alive()").Value; v != "(100001, False)" {
		t.Errorf("the fork: %s", v)
	}
	if v := e.runJSON("exec", "lab", "len(rows), loader.is_alive()").Value; v != "(100000, True)" {
		t.Errorf("the parent after the fork changed its copy: %s", v)
	}
	hist, _ := e.must(0, "history", "try")
	wantContains(t, "the fork's record", hist, "as a fork of 'lab' after its cell 1")
	hist, _ = e.must(0, "history", "lab")
	wantContains(t, "the parent's record", hist, "forked into 'try' after cell 1")
	list, _ := e.must(0, "sessions")
	wantContains(t, "sessions", list, "a fork of 'lab', taken after its cell 1")

	// The parent's end leaves the fork, though its runtime is the
	// parent's child; a new daemon keeps the two apart too.
	forkPID := e.session("try").PID
	e.killDaemon()
	e.must(0, "kill", "lab")
	if !proctest.Alive(forkPID) {
		t.Fatal("killing the parent after a daemon restart ended the fork")
	}
	if v := e.runJSON("exec", "try", "len(rows)").Value; v != "100001" {
		t.Errorf("the fork after its parent was killed: %s", v)
	}
	e.must(0, "kill", "try")
	if proctest.Alive(forkPID) {
		t.Error("the fork's runtime outlived kill")
	}
}

// TestForkRefused: what cannot be forked is refused with why, and
// nothing is made: a runtime whose process does not survive a fork, a
// running cell, a name a live session has, the session's own name.
func TestForkRefused(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "a", "x = 1")
	e.must(0, "exec", "b", "y = 2")
	_, stderr := e.must(2, "fork", "a", "b")
	wantContains(t, "a fork onto a live session", stderr, `session "b" exists`)
	_, stderr = e.must(2, "fork", "a", "a")
	wantContains(t, "a fork onto itself", stderr, "a name of its own")
	_, stderr = e.must(2, "fork", "nosuch", "c")
	wantContains(t, "a fork of nothing", stderr, `no session named "nosuch"`)
	e.must(124, "exec", "a", "import time\nprint('started', flush=True)\ntime.sleep(30)", "-t", "0")
	out, _ := e.must(2, "fork", "a", "c", "--json")
	var refusal struct{ Code, Error string }
	json.Unmarshal([]byte(out), &refusal)
	if refusal.Code != "no-fork" {
		t.Errorf("a fork during a cell: %s", out)
	}
	wantContains(t, "a fork during a cell", refusal.Error, "a fork is taken between cells")
	e.must(0, "interrupt", "a")
	if ok, _ := runtimeFound(e, "node"); ok {
		e.must(0, "exec", "n", "1", "--runtime", "node")
		_, stderr = e.must(2, "fork", "n", "m")
		wantContains(t, "a fork of node", stderr, "the node runtime cannot fork", "threads")
	}
	for _, s := range e.sessions() {
		if s.Name == "c" || s.Name == "m" {
			t.Errorf("a refused fork left session %s", s.Name)
		}
	}
}

// TestForkSandboxed: a fork of a sandboxed session is held to the same
// policy (it inherits the kernel's confinement), and goes on writing its
// temporary files after its parent ended: the parent's private places
// stay while the fork uses them, and go with the last of the two.
func TestForkSandboxed(t *testing.T) {
	needPython(t)
	needLandlock(t)
	t.Parallel()
	e := newEnv(t)
	outside := filepath.Join(e.home, "outside.txt")
	e.must(0, "exec", "box", "import os, tempfile\nx = 1", "--sandbox", "read-only")
	e.must(0, "fork", "box", "copy")
	tmpOf := func(name string) string {
		return e.runJSON("exec", name, "tempfile.gettempdir()").Value
	}
	tmp := tmpOf("copy")
	if tmp != tmpOf("box") {
		t.Errorf("the fork's temporary directory %s is not its parent's", tmp)
	}
	write := "f = tempfile.NamedTemporaryFile(); f.write(b'ok'); f.flush(); os.path.getsize(f.name)"
	e.must(0, "kill", "box")
	if v := e.runJSON("exec", "copy", write).Value; v != "2" {
		t.Errorf("the fork wrote a temporary file after its parent ended: %s", v)
	}
	r := e.runJSON("exec", "copy", "open('"+outside+"', 'w')")
	if r.Error == nil {
		t.Errorf("the fork of a read-only session wrote outside: %+v", r)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("the fork of a read-only session wrote " + outside)
	}
	list, _ := e.must(0, "sessions", "copy")
	wantContains(t, "the fork's sessions line", list, "read-only")
	e.must(0, "kill", "copy")
	if _, err := os.Stat(strings.Trim(tmp, "'")); !os.IsNotExist(err) {
		t.Errorf("the shared temporary directory %s stayed after the last holder ended: %v", tmp, err)
	}
}
