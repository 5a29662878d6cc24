package cli

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
)

// The sandbox flags and $POLYREPL_SANDBOX become a new session's policy:
// directories absolute from the caller's cwd and existing, the policy's
// defaults filled in; a bad value is an error naming the choices.
func TestSandboxFlags(t *testing.T) {
	base := t.TempDir()
	os.Mkdir(filepath.Join(base, "data"), 0o700)
	os.WriteFile(filepath.Join(base, "file"), nil, 0o600)
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want *api.Sandbox
		err  string
	}{
		{name: "none", want: nil},
		{name: "policy", args: []string{"--sandbox", "workspace-write"},
			want: &api.Sandbox{Policy: api.SandboxWorkspaceWrite, Network: api.NetworkOff}},
		{name: "alias", args: []string{"--sandbox", "danger-full-access"}, want: &api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}},
		{name: "env", env: "read-only", want: &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}},
		{name: "flag over env", env: "read-only", args: []string{"--sandbox", "full"}, want: &api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}},
		{name: "env with network", env: "read-only", args: []string{"--network", "on"}, want: &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOn}},
		{name: "dirs", args: []string{"--sandbox", "read-only", "--writable", "data", "--readable", base, "--writable", base + "/data/", "--sandbox-best-effort"},
			want: &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff, Writable: []string{base + "/data", base + "/data"}, Readable: []string{base}, BestEffort: true}},
		{name: "bad policy", args: []string{"--sandbox", "bogus"}, err: `bad value for --sandbox: no sandbox policy "bogus": give one of read-only, workspace-write, full`},
		{name: "bad env", env: "nope", err: `$POLYREPL_SANDBOX: no sandbox policy "nope": give one of read-only, workspace-write, full`},
		{name: "bad network", args: []string{"--sandbox", "read-only", "--network", "maybe"}, err: `bad value for --network: no network setting "maybe": give on or off`},
		{name: "no such dir", args: []string{"--sandbox", "read-only", "--writable", "nosuch"}, err: "--writable " + base + "/nosuch: no such directory; give an existing one"},
		{name: "a file", args: []string{"--sandbox", "read-only", "--readable", "file"}, err: "--readable " + base + "/file: no such directory"},
		{name: "no policy", args: []string{"--network", "off", "--writable", "data"}, err: "--network and --writable without a sandbox policy: give --sandbox read-only or --sandbox workspace-write with them (or set $POLYREPL_SANDBOX)"},
		{name: "full network off", args: []string{"--sandbox", "full", "--network", "off"}, err: "--sandbox full: network off needs a sandbox"},
		{name: "full dirs", env: "full", args: []string{"--writable", "data"}, err: "$POLYREPL_SANDBOX full: the full policy already reads and writes everywhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f sandboxFlags
			fs := newFlagSet("exec")
			f.declare(fs, "a new session", "a new session's sandbox")
			_, err := parse(fs.FlagSet, tc.args)
			var got *api.Sandbox
			if err == nil {
				got, err = f.build(func(k string) string {
					if k == SandboxEnv {
						return tc.env
					}
					return ""
				}, base)
			}
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want %q", err, tc.err)
			case tc.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.err == "" && !reflect.DeepEqual(got, tc.want):
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A bad sandbox value is a usage error before anything is sent: no
// daemon is started.
func TestSandboxRefusedBeforeSending(t *testing.T) {
	rt := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", rt)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	for _, args := range [][]string{
		{"exec", "s", "1", "--sandbox", "bogus"},
		{"exec", "s", "1", "--sandbox", "read-only", "--network", "sideways"},
		{"exec", "s", "1", "--sandbox", "read-only", "--writable", "/nonexistent/dir"},
		{"exec", "s", "1", "--writable", "/tmp"},
		{"mcp", "--sandbox", "bogus"},
		{"mcp", "--network", "off"},
		{"setup", "codex", "--sandbox", "bogus"},
		{"setup", "codex", "--network", "off"},
		{"setup", "codex", "--sandbox", "full", "--network", "off"},
	} {
		_, stderr, status := run(args...)
		if status != ExitUsage || !strings.Contains(stderr, "polyrepl: error:") || !strings.Contains(stderr, "usage: polyrepl "+args[0]) {
			t.Errorf("%q: status %d, stderr %q; want a usage error", args, status, stderr)
		}
	}
	t.Setenv(SandboxEnv, "bogus")
	if _, stderr, status := run("exec", "s", "1"); status != ExitUsage || !strings.Contains(stderr, "$POLYREPL_SANDBOX") {
		t.Errorf("a bad $POLYREPL_SANDBOX: status %d, stderr %q", status, stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(rt, "polyrepl", "*")); len(m) > 0 {
		t.Errorf("something was started: %v", m)
	}
}

// setup --sandbox shows the flags in what it would register, and
// --dry-run changes nothing.
func TestSetupSandboxDryRun(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.toml")
	for _, client := range []string{"claude-code", "codex", "cursor", "claude-desktop"} {
		out, stderr, status := run("setup", client, "--file", file, "--sandbox", "workspace-write", "--network", "off", "--write", "--dry-run")
		flat := strings.Join(strings.Fields(out), " ")
		if status != ExitOK || !strings.Contains(flat, `"--sandbox", "workspace-write", "--network", "off"`) {
			t.Errorf("%s: status %d\n%s%s", client, status, out, stderr)
		}
		if _, err := os.Stat(file); err == nil {
			t.Fatalf("%s: --dry-run wrote %s", client, file)
		}
		out, _, _ = run("setup", client, "--sandbox", "read-only")
		if !strings.Contains(out, "--sandbox read-only: every session the agent creates through polyrepl has this sandbox") {
			t.Errorf("%s: the registration does not say its sandbox:\n%s", client, out)
		}
	}
}

// A refusal of a policy that came from $POLYREPL_SANDBOX says so, and
// how to leave it out; one from --sandbox is left as the daemon said it.
func TestSandboxFromEnvExplained(t *testing.T) {
	refused := &client.APIError{Status: 400, ErrorReply: api.ErrorReply{Code: api.CodeBadRequest, Field: "sandbox",
		Error: `session "etl" runs under the sandbox full, not read-only`, Hint: "leave the policy out to use the session as it is"}}
	f := sandboxFlags{}
	if _, err := f.build(func(string) string { return "read-only" }, "/"); err != nil {
		t.Fatal(err)
	}
	var ae *client.APIError
	if err := f.explain(refused); !errors.As(err, &ae) || ae.Hint != "the policy read-only came from $POLYREPL_SANDBOX; an empty $POLYREPL_SANDBOX leaves it out (`POLYREPL_SANDBOX= polyrepl exec …`); leave the policy out to use the session as it is" {
		t.Errorf("from the environment: %v (hint %q)", err, ae.Hint)
	}
	if refused.Hint != "leave the policy out to use the session as it is" {
		t.Errorf("the daemon's refusal was changed in place: %q", refused.Hint)
	}
	f = sandboxFlags{policy: "read-only"}
	if _, err := f.build(func(string) string { return "full" }, "/"); err != nil {
		t.Fatal(err)
	}
	if err := f.explain(refused); err != error(refused) {
		t.Errorf("from --sandbox: %v", err)
	}
}
