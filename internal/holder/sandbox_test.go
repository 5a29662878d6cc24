package holder

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/sandbox"
)

// A sandboxed session's holder says what the kernel enforces, part by
// part; its runtime is refused a write outside and a read of polyrepl's
// own directories, writes its private TMPDIR, and that directory goes
// with the holder.
func TestSandboxedSessionSaysWhatIsEnforced(t *testing.T) {
	needPython(t)
	if sandbox.KernelABI() < 6 {
		t.Skipf("this kernel has Landlock ABI %d: the test needs 6", sandbox.KernelABI())
	}
	w := newWorld(t)
	w.spawn.Spawn.Sandbox = &api.Sandbox{Policy: api.SandboxReadOnly}
	p, ev := w.start()
	e := p.Hello().Enforced
	if e == nil || e.Mechanism != "landlock" || e.ABI != sandbox.KernelABI() {
		t.Fatalf("hello's enforced: %+v", e)
	}
	held := map[string]api.EnforcedPart{}
	for _, part := range e.Parts {
		held[part.Part] = part
	}
	for _, n := range []string{api.PartWrite, api.PartSecrets, api.PartTCPConnect, api.PartSignal, api.PartPtrace} {
		if !held[n].Enforced {
			t.Errorf("part %s: %+v", n, held[n])
		}
	}
	if u := held[api.PartUnixPath]; sandbox.KernelABI() < 9 && (u.Enforced || !strings.Contains(u.Why, "ABI 9")) {
		t.Errorf("unix-path on ABI %d: %+v", sandbox.KernelABI(), u)
	}
	run(t, p, 1, 1, `
import os
def tr(name, f):
    try:
        f(); print(name, "ok")
    except PermissionError: print(name, "denied")
tr("outside", lambda: open(os.path.join(os.environ["HOME"], "x"), "w").write("x"))
tr("spool", lambda: os.listdir(`+strconv.Quote(w.spawn.SpoolDir)+`))
tr("tmp", lambda: open(os.path.join(os.environ["TMPDIR"], "x"), "w").write("x"))
print("TMPDIR", os.environ["TMPDIR"])
`)
	ev.until(t, "the cell's result", func() bool { return len(ev.done) == 1 })
	ev.mu.Lock()
	out := ev.out.String()
	if r := ev.done[0]; r.Error != nil {
		t.Errorf("the cell failed: %+v", r.Error)
	}
	ev.mu.Unlock()
	for _, want := range []string{"outside denied", "spool denied", "tmp ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("the cell printed %q, want %q", out, want)
		}
	}
	_, tmp, _ := strings.Cut(out, "TMPDIR ")
	tmp = strings.TrimSpace(tmp)
	if !strings.HasPrefix(tmp, sandbox.TempParent(filepath.Dir(w.spawn.SpoolDir))) {
		t.Fatalf("TMPDIR %q", tmp)
	}
	p.End()
	if waitGone(p.Holder()) {
		t.Fatal("the holder did not end")
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the private temporary directory outlived its holder: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(w.spawn.RuntimeDir, "sandbox-*")); len(left) > 0 {
		t.Errorf("the session's driver directory outlived its holder: %v", left)
	}
}

// A gateway's session is refused a local policy, before anything starts.
func TestSandboxedGatewaySessionRefused(t *testing.T) {
	w := newWorld(t)
	w.spawn.Spawn.Runtime = "python"
	w.spawn.Spawn.Gateway = "http://127.0.0.1:9"
	w.spawn.Spawn.Sandbox = &api.Sandbox{Policy: api.SandboxWorkspaceWrite}
	ex := &Reexec{}
	defer ex.Close()
	_, err := Start(context.Background(), ex, w.spawn)
	if err == nil || !strings.Contains(err.Error(), "the gateway's to confine") {
		t.Fatalf("a gateway session with a policy: %v", err)
	}
	var sbe *SandboxError
	if !errors.As(err, &sbe) {
		t.Errorf("the refusal is not said to be the sandbox's (the daemon would name the executable): %T %v", err, err)
	}
}
