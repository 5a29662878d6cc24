package driver

import (
	"slices"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/sandbox"
)

// A sandboxed runtime's command gets its private temporary directory;
// through the trampoline it runs the holder's own binary, and ExeOf is
// still the runtime's executable.
func TestLaunchCommandSandboxed(t *testing.T) {
	sb := sandbox.Spec{Policy: api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}, Tmp: "/tmp/private"}
	l := Launch{Runtime: "sh", Spec: Spec{Exe: "sh", Cwd: "/", Env: []string{"PATH=/usr/bin:/bin", "TMPDIR=/tmp"},
		Cookie: "C=1", Sandbox: &sb}, Args: []string{"-i"}}
	cmd, err := l.Command()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(cmd.Env, "TMPDIR=/tmp/private") || slices.Index(cmd.Env, "TMPDIR=/tmp/private") < slices.Index(cmd.Env, "TMPDIR=/tmp") {
		t.Errorf("env: %v", cmd.Env)
	}
	if sandbox.Trampoline != (cmd.Path == sandbox.Self()) || !strings.HasSuffix(ExeOf(cmd), "/sh") {
		t.Errorf("path %s, args %q, exe %s", cmd.Path, cmd.Args, ExeOf(cmd))
	}
	l.Trampoline = true
	cmd, err = l.Command()
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Path != sandbox.Self() || cmd.Args[1] != sandbox.Command || !strings.HasSuffix(ExeOf(cmd), "/sh") || cmd.Args[len(cmd.Args)-1] != "-i" {
		t.Errorf("through the trampoline: path %s, args %q, exe %s", cmd.Path, cmd.Args, ExeOf(cmd))
	}
	l.Spec.Sandbox = nil
	if cmd, _ := l.Command(); cmd.Path != ExeOf(cmd) || slices.Contains(cmd.Env, "TMPDIR=/tmp/private") {
		t.Errorf("unsandboxed: %s %v", cmd.Path, cmd.Env)
	}
}
