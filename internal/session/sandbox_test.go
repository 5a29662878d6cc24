package session

import (
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
)

func TestSandboxNote(t *testing.T) {
	ro := &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}
	full := &api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}
	for _, c := range []struct {
		name   string
		sb     *api.Sandbox
		output string
		err    *api.CellError
		said   string // "" for no note
	}{
		{"python's PermissionError", ro, "", &api.CellError{Type: "PermissionError", Message: "[Errno 13] Permission denied: '/etc/x'"}, "PermissionError: [Errno 13] Permission denied: '/etc/x'"},
		{"a shell's words", ro, "ok\nsh: 1: cannot create /etc/x: Permission denied\nmore", nil, "sh: 1: cannot create /etc/x: Permission denied"},
		{"R's words", ro, "Warning: cannot open file '/x': Operation not permitted", nil, "Warning: cannot open file '/x': Operation not permitted"},
		{"node's EACCES", ro, "", &api.CellError{Type: "Error", Message: "EACCES: permission denied, open '/x'"}, "Error: EACCES: permission denied, open '/x'"},
		{"a refused connect", ro, "", &api.CellError{Type: "ConnectionRefusedError", Message: "[Errno 111] Connection refused"}, "ConnectionRefusedError: [Errno 111] Connection refused"},
		{"in a traceback only", ro, "", &api.CellError{Type: "OSError", Message: "wrapped", Traceback: "line 1\nPermissionError: denied\nline 3"}, "PermissionError: denied"},
		{"an unrelated error", ro, "", &api.CellError{Type: "ZeroDivisionError", Message: "division by zero"}, ""},
		{"a full session", full, "Permission denied", nil, ""},
		{"a session of an older daemon", nil, "Permission denied", nil, ""},
		{"a long line is cut", ro, "Permission denied " + strings.Repeat("x", 1000), nil, "Permission denied xxx"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Session{Name: "s", Spawn: api.Spawn{Sandbox: c.sb}}
			n := sandboxNote(s, 3, c.output, c.err)
			if c.said == "" {
				if n != nil {
					t.Fatalf("a note: %+v", n)
				}
				return
			}
			if n == nil || n.Kind != api.NoteSandbox || n.Cell != 3 || n.Sandbox == nil || n.Sandbox.Policy != api.SandboxReadOnly || !strings.HasPrefix(n.Said, c.said) {
				t.Fatalf("note %+v; want one saying %q", n, c.said)
			}
			if len(n.Said) > maxRefusalLine+100 {
				t.Fatalf("the quoted line is %d bytes", len(n.Said))
			}
		})
	}
}

func TestSameAndOtherPolicy(t *testing.T) {
	a := api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff, Readable: []string{"/a", "/b"}}
	b := a
	b.Readable = []string{"/b", "/a", "/a"}
	b.BestEffort = true
	if !samePolicy(a, b) {
		t.Error("the same directories in another order, or best effort, made a different policy")
	}
	c := a
	c.Network = api.NetworkOn
	if samePolicy(a, c) {
		t.Error("network on is the same as off")
	}
	s := &Session{Name: "s", Spawn: api.Spawn{Sandbox: &a}}
	if err := otherPolicy(s, api.Spawn{}); err != nil {
		t.Errorf("no policy asked conflicts: %v", err)
	}
	err := otherPolicy(s, api.Spawn{Sandbox: &c})
	if e, ok := err.(*Error); !ok || e.Field != api.FieldSandbox || !strings.Contains(e.Error(), "runs under the sandbox read-only, network off") {
		t.Errorf("a different policy: %v", err)
	}
	if err := otherPolicy(s, api.Spawn{Sandbox: &c, SandboxDefault: true}); err != nil {
		t.Errorf("a client's default ($POLYREPL_SANDBOX) conflicts with a live session: %v", err)
	}
	old := &Session{Name: "o"}
	if err := otherPolicy(old, api.Spawn{Sandbox: &api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}}); err != nil {
		t.Errorf("full asked of a session of an older daemon (no policy: full): %v", err)
	}
}

func TestSandboxFor(t *testing.T) {
	ww := api.Ceiling{Sandbox: api.Sandbox{Policy: api.SandboxWorkspaceWrite, Network: api.NetworkOff}, Cwd: "/w"}
	ro := api.Ceiling{Sandbox: api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}, Cwd: "/"}
	under := func(cs ...api.Ceiling) api.Client { return api.Client{Reach: &api.Reach{Ceilings: cs}} }
	for _, c := range []struct {
		name   string
		sp     api.Spawn
		asker  api.Client
		policy string
		err    string
	}{
		{"none asked, no ceiling: full", api.Spawn{Cwd: "/x"}, api.Client{}, api.SandboxFull, ""},
		{"none asked: the ceiling's", api.Spawn{Cwd: "/w/sub"}, under(ww), api.SandboxWorkspaceWrite, ""},
		{"none asked: the narrowest ceiling's", api.Spawn{Cwd: "/w"}, under(ww, ro), api.SandboxReadOnly, ""},
		{"none asked, cwd outside the workspace", api.Spawn{Cwd: "/x"}, under(ww), "", "would be writable"},
		{"full asked under a ceiling", api.Spawn{Cwd: "/w", Sandbox: &api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}}, under(ww), "", "full allows more than workspace-write"},
		{"read-only asked under workspace-write", api.Spawn{Cwd: "/x", Sandbox: &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}}, under(ww), api.SandboxReadOnly, ""},
		{"a gateway's kernel sandboxed", api.Spawn{Cwd: "/x", Gateway: "http://g", Sandbox: &api.Sandbox{Policy: api.SandboxReadOnly}}, api.Client{}, "", "cannot confine it"},
		{"a gateway's kernel under a ceiling", api.Spawn{Cwd: "/w", Gateway: "http://g"}, under(ww), "", "cannot confine it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp := c.sp
			err := sandboxFor(&sp, c.asker)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("sandboxFor: %v; want an error with %q", err, c.err)
				}
				return
			}
			if err != nil || sp.Sandbox == nil || sp.Sandbox.Policy != c.policy {
				t.Fatalf("sandboxFor: %v, %+v; want %s", err, sp.Sandbox, c.policy)
			}
		})
	}
}
