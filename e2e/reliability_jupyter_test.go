package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Kernels and holders (issue 33, items 4, 8 and 9): what a hostile
// kernel.json, a kernel or a gateway sends costs the call that asked
// for it, never the daemon, other sessions or the holder's memory.

// TestReliabilityKernelspecs: a kernel.json that is a named pipe, and
// one linked to /dev/zero, among the installed kernels. A plain Python
// session starts while they stay; a session of an unknown kernel is
// refused naming the bad files and what is wrong with each; `runtimes`
// lists them as unusable, saying why; the daemon lives on.
func TestReliabilityKernelspecs(t *testing.T) {
	needPython(t)
	e := newEnv(t)
	jp := shortTemp(t)
	t.Cleanup(func() { os.RemoveAll(jp) })
	for _, k := range []string{"x", "z"} {
		if err := os.MkdirAll(filepath.Join(jp, "kernels", k), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(jp, "kernels", "x", "kernel.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(jp, "kernels", "z", "kernel.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	e.setenv("JUPYTER_PATH", jp)

	start := time.Now()
	_, refusal, code := e.run("exec", "a", "--kernel", "nosuch", "1")
	took := time.Since(start)
	if code == 0 {
		t.Errorf("a session of an unknown kernel started: %s", refusal)
	}
	wantContains(t, "the unknown kernel's refusal", refusal, "nosuch", fifo, "named pipe", zero, "character device")

	r := e.runJSON("exec", "newone", "6*7")
	if r.code != 0 || r.Value != "42" {
		t.Errorf("a Python session beside the bad kernel.json files: %s", r)
	}
	out, stderr, code := e.run("runtimes")
	if code != 0 {
		t.Errorf("runtimes exited %d: %s", code, stderr)
	}
	wantContains(t, "runtimes", out, "jupyter:x", "named pipe", "jupyter:z", "character device")
	if len(out) > 200_000 {
		t.Errorf("runtimes printed %d bytes", len(out))
	}
	r = e.runJSON("exec", "newone", "1+1")
	if r.code != 0 || r.Value != "2" {
		t.Errorf("the daemon after the bad kernel.json files: %s", r)
	}
	report(t, "8 Kernels and holders", "a kernel.json that is a named pipe, another linked to /dev/zero",
		"`exec --kernel nosuch` refused in %.1f s naming both files (a named pipe, a character device); a Python session answered; `runtimes` lists both as unusable with the reason; the daemon lived",
		took.Seconds())
	if strings.Contains(out, strings.Repeat("\x00", 16)) {
		t.Errorf("runtimes shows bytes of /dev/zero")
	}
}
