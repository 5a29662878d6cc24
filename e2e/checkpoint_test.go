package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

// checkpointReply is `checkpoint --json` and `rollback --json`.
type checkpointReply struct {
	Session    string `json:"session"`
	Checkpoint struct {
		Label string `json:"label"`
		Cell  int    `json:"cell"`
		PID   int    `json:"pid"`
	} `json:"checkpoint"`
	PID   int `json:"pid"`
	Cells int `json:"cells"`
	Notes []struct {
		Kind string `json:"kind"`
		Text string `json:"text"`
	} `json:"notes"`
}

func (e *env) checkpoint(args ...string) checkpointReply {
	e.t.Helper()
	out, _ := e.must(0, append(args, "--json")...)
	var r checkpointReply
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Notes) == 0 {
		e.t.Fatalf("%s --json: %v: %s", args[0], err, out)
	}
	return r
}

// TestCheckpointRollback: checkpoint, change, rollback — the value is
// back, the record says which cells were rolled back, and the
// checkpoint serves a second rollback; the listing shows it; a daemon
// SIGKILLed and replaced keeps it and it still rolls back; kill ends
// every checkpoint.
func TestCheckpointRollback(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "lab", "x = 1\nimport threading, time\n"+
		"threading.Thread(target=lambda: time.sleep(300), name='poller', daemon=True).start()")
	ck := e.checkpoint("checkpoint", "lab")
	if ck.Checkpoint.Label != "c1" || ck.Checkpoint.Cell != 1 || ck.Checkpoint.PID <= 0 {
		t.Fatalf("checkpoint --json: %+v", ck)
	}
	wantContains(t, "the checkpoint's note", ck.Notes[0].Text, "Checkpoint 'c1' of session 'lab' taken after cell 1",
		"Not copied", "1 thread: poller")
	e.must(0, "exec", "lab", "x = 2")
	e.must(0, "exec", "lab", "y = x * 10")
	old := e.session("lab").PID
	rb := e.checkpoint("rollback", "lab")
	wantContains(t, "the rollback's note", rb.Notes[0].Text, "rolled back to checkpoint 'c1' (after cell 1)", "Cells 2 to 3 are rolled back",
		"Not copied", "1 thread: poller")
	if v := e.runJSON("exec", "lab", "x").Value; v != "1" {
		t.Errorf("x after the rollback: %s, want 1", v)
	}
	// It ends after the rollback answered, while the session goes on.
	if !waitFor(10*time.Second, func() bool { return !proctest.Alive(old) }) {
		t.Errorf("the runtime rolled back from (pid %d) still runs", old)
	}
	if s := e.session("lab"); s.State == "dead" || s.PID != rb.PID {
		t.Errorf("after the rollback the session is %+v, the new runtime pid %d", s, rb.PID)
	}
	hist, _ := e.must(0, "history", "lab")
	wantContains(t, "the record", hist, "Checkpoint 'c1'", "rolled back to checkpoint 'c1'")
	var marked []string
	for _, line := range strings.Split(hist, "\n") {
		if strings.Contains(line, "done, rolled back ·") {
			marked = append(marked, strings.Fields(line)[2]) // "SEQ cell N · …"
		}
	}
	if strings.Join(marked, ",") != "2,3" {
		t.Errorf("the record marks cells %v rolled back, want 2 and 3:\n%s", marked, hist)
	}
	e.must(0, "exec", "lab", "x = 3")
	e.checkpoint("rollback", "lab", "c1")
	if v := e.runJSON("exec", "lab", "x").Value; v != "1" {
		t.Errorf("x after a second rollback to the same checkpoint: %s, want 1", v)
	}
	list, _ := e.must(0, "sessions", "lab")
	wantContains(t, "sessions lab", list, "checkpoint c1: after cell 1")

	// A new daemon is told the checkpoints by the holder.
	e.must(0, "exec", "lab", "x = 4")
	e.killDaemon()
	out, _ := e.must(0, "sessions", "lab", "--json")
	if !strings.Contains(out, `"label":"c1"`) && !strings.Contains(out, `"label": "c1"`) {
		t.Errorf("a new daemon's listing has no checkpoint c1: %s", out)
	}
	e.checkpoint("rollback", "lab")
	if v := e.runJSON("exec", "lab", "x").Value; v != "1" {
		t.Errorf("x after a rollback through a new daemon: %s, want 1", v)
	}
	e.must(0, "kill", "lab")
	if proctest.Alive(ck.Checkpoint.PID) {
		t.Error("kill left the checkpoint running")
	}
}

// TestCheckpointBounds: a session keeps at most 8 checkpoints: the ninth
// ends the oldest and says so; a label in use is replaced; a running
// cell is not checkpointed; a restart ends the checkpoints; a runtime
// that cannot fork is refused with its reason; stop ends them.
func TestCheckpointBounds(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "b", "n = 0")
	var first int
	for i := 1; i <= 8; i++ {
		r := e.checkpoint("checkpoint", "b", fmt.Sprintf("k%d", i))
		if i == 1 {
			first = r.Checkpoint.PID
		}
	}
	r := e.checkpoint("checkpoint", "b", "k9")
	wantContains(t, "the ninth checkpoint", r.Notes[0].Text, "Checkpoint 'k1' (after cell 1), the oldest, was ended")
	if proctest.Alive(first) {
		t.Error("the dropped checkpoint still runs")
	}
	r = e.checkpoint("checkpoint", "b", "k9")
	wantContains(t, "a label in use", r.Notes[0].Text, "It replaces the earlier checkpoint 'k9'")
	_, stderr := e.must(2, "rollback", "b", "k1")
	wantContains(t, "a rollback to a dropped checkpoint", stderr, `no checkpoint "k1"`)

	e.must(124, "exec", "b", "import time\nprint('started', flush=True)\ntime.sleep(30)", "-t", "0")
	_, stderr = e.must(2, "checkpoint", "b")
	wantContains(t, "a checkpoint during a cell", stderr, "taken between cells")
	e.must(0, "interrupt", "b")
	// A restart is a new life: the checkpoints end with the old one.
	last := e.checkpoint("checkpoint", "b", "k10").Checkpoint.PID
	e.must(0, "restart", "b")
	if proctest.Alive(last) {
		t.Error("restart left a checkpoint running")
	}
	if list, _ := e.must(0, "sessions", "b"); strings.Contains(list, "checkpoint") {
		t.Errorf("after a restart sessions still lists checkpoints:\n%s", list)
	}
	if ok, _ := runtimeFound(e, "node"); ok {
		e.must(0, "exec", "n", "1", "--runtime", "node")
		out, _ := e.must(2, "checkpoint", "n", "--json")
		var refusal struct{ Code, Error string }
		json.Unmarshal([]byte(out), &refusal)
		if refusal.Code != "no-fork" {
			t.Errorf("a checkpoint of node: %s", out)
		}
		wantContains(t, "a checkpoint of node", refusal.Error, "the node runtime cannot fork")
	}
	// stop ends every session, and their checkpoints with them.
	kept := e.checkpoint("checkpoint", "b").Checkpoint.PID
	e.must(0, "stop")
	if proctest.Alive(kept) {
		t.Error("stop left a checkpoint running")
	}
}

// TestCheckpointRuby: a Ruby session rolls back as a Python one does.
func TestCheckpointRuby(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if ok, _ := runtimeFound(e, "ruby"); !ok {
		t.Skip("ruby is not installed")
	}
	e.must(0, "exec", "rb", "x = [1, 2]", "--runtime", "ruby")
	ck := e.checkpoint("checkpoint", "rb", "two")
	e.must(0, "exec", "rb", "x << 3")
	e.checkpoint("rollback", "rb")
	if v := e.runJSON("exec", "rb", "x.size").Value; v != "2" {
		t.Errorf("x.size after the rollback: %s, want 2", v)
	}
	e.must(0, "kill", "rb")
	if proctest.Alive(ck.Checkpoint.PID) {
		t.Error("kill left the checkpoint running")
	}
}

// TestCheckpointHolderKilled: a session whose holder is SIGKILLed dies,
// and its checkpoints with it: the daemon ends them.
func TestCheckpointHolderKilled(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "hk", "x = 1")
	ck := e.checkpoint("checkpoint", "hk")
	gen := e.session("hk").Generation
	syscall.Kill(e.session("hk").Holder, syscall.SIGKILL)
	if !waitFor(10*time.Second, func() bool { return len(e.generation(gen)) == 0 }) {
		t.Errorf("the runtime or its checkpoint outlived its holder:%s", proctest.Describe(e.generation(gen)))
	}
	if proctest.Alive(ck.Checkpoint.PID) {
		t.Error("the checkpoint outlived its holder")
	}
	e.run("wait", "hk")
}

// TestCheckpointCost measures, for the reliability report, what a
// checkpoint and a rollback of a session holding 256 MB cost: the time
// each command takes (the CLI's start included) and the checkpoint's
// memory (PSS) once taken. Nothing is asserted of the numbers.
func TestCheckpointCost(t *testing.T) {
	needPython(t)
	if testing.Short() {
		t.Skip("a session of 256 MB: not in -short")
	}
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "big", "blob = b'x' * (256 << 20)\nlen(blob)")
	start := time.Now()
	e.checkpoint("checkpoint", "big")
	took := time.Since(start)
	var listed struct {
		Sessions []struct {
			Memory      uint64 `json:"memory"`
			Checkpoints []struct {
				Memory uint64 `json:"memory"`
			} `json:"checkpoints"`
		} `json:"sessions"`
	}
	out, _ := e.must(0, "sessions", "big", "--json")
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed.Sessions) != 1 || len(listed.Sessions[0].Checkpoints) != 1 {
		t.Fatalf("sessions big --json: %v: %s", err, out)
	}
	ckMem := listed.Sessions[0].Checkpoints[0].Memory
	if ckMem == 0 {
		t.Errorf("the checkpoint's memory is not listed: %s", out)
	}
	e.must(0, "exec", "big", "blob = None")
	start = time.Now()
	e.checkpoint("rollback", "big")
	rolled := time.Since(start)
	if v := e.runJSON("exec", "big", "len(blob)").Value; v != fmt.Sprint(256<<20) {
		t.Errorf("len(blob) after the rollback: %s", v)
	}
	t.Logf("checkpoint %v (PSS %d MB, the session %d MB), rollback %v", took, ckMem>>20, listed.Sessions[0].Memory>>20, rolled)
	report(t, "8 Kernels and holders", "`checkpoint` of a Python session holding 256 MB",
		"%d ms (the CLI's start included); the checkpoint's PSS %d MB, the session's %d MB", took.Milliseconds(), ckMem>>20, listed.Sessions[0].Memory>>20)
	report(t, "8 Kernels and holders", "`rollback` of that session after it dropped the 256 MB",
		"%d ms (the CLI's start included); the value is back", rolled.Milliseconds())
	e.must(0, "kill", "big")
}
