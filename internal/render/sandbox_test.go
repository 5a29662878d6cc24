package render

import (
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// abi7 is what this machine's kernel enforces of workspace-write with
// network off.
var abi7 = &api.Enforced{Mechanism: "landlock", ABI: 7, Parts: []api.EnforcedPart{
	{Part: api.PartWrite, Enforced: true}, {Part: api.PartSecrets, Enforced: true},
	{Part: api.PartTCPConnect, Enforced: true}, {Part: api.PartTCPBind, Enforced: true},
	{Part: api.PartUDP, Why: "Landlock ABI 10"}, {Part: api.PartSignal, Enforced: true}, {Part: api.PartPtrace, Enforced: true},
}}

// The creation line and `sessions` say the policy and exactly what is
// enforced, part by part, for every shape of Enforced: never just
// "sandboxed", and nothing new for a full session.
func TestSandboxSaysWhatIsEnforced(t *testing.T) {
	ww := &api.Sandbox{Policy: api.SandboxWorkspaceWrite, Network: api.NetworkOff}
	for _, tc := range []struct {
		name string
		s    *api.Sandbox
		e    *api.Enforced
		want string
	}{
		{"none", nil, nil, ""},
		{"full", &api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}, nil, ""},
		{"abi 7", ww, abi7,
			"sandbox workspace-write, network off (Landlock ABI 7: writes, secrets, TCP connect/bind, signals, ptrace; not enforced: UDP — needs Landlock ABI 10)"},
		{"all held", &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOn},
			&api.Enforced{Mechanism: "landlock", ABI: 10, Parts: []api.EnforcedPart{{Part: api.PartWrite, Enforced: true}, {Part: api.PartUnixPath, Enforced: true}}},
			"sandbox read-only, network on (Landlock ABI 10: writes, unix sockets by path)"},
		{"old kernel, best effort", &api.Sandbox{Policy: api.SandboxReadOnly, BestEffort: true},
			&api.Enforced{Mechanism: "landlock", ABI: 3, Parts: []api.EnforcedPart{{Part: api.PartWrite, Enforced: true},
				{Part: api.PartTCPConnect, Why: "Landlock ABI 4"}, {Part: api.PartTCPBind, Why: "Landlock ABI 4"}, {Part: api.PartSignal, Why: "Landlock ABI 6"}}},
			"sandbox read-only, network off (Landlock ABI 3: writes; not enforced: TCP connect/bind — needs Landlock ABI 4; signals — needs Landlock ABI 6 (accepted: best effort))"},
		{"no mechanism", &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff, BestEffort: true},
			&api.Enforced{Parts: []api.EnforcedPart{{Part: api.PartWrite, Why: "this kernel has no Landlock"}}},
			"sandbox read-only, network off (nothing is enforced by the kernel; not enforced: writes — this kernel has no Landlock (accepted: best effort))"},
		{"reasons said once", ww, &api.Enforced{Mechanism: "landlock", ABI: 7, Parts: []api.EnforcedPart{
			{Part: api.PartWrite, Enforced: true}, {Part: api.PartUDP, Why: "needs Landlock ABI 10; this kernel has ABI 7"},
			{Part: api.PartUnixPath, Why: "needs Landlock ABI 9; this kernel has ABI 7"},
			{Part: api.PartPolyrepl, Why: "Landlock ABI 9; this kernel has ABI 7 to keep a runtime from polyrepl's sockets: the daemon's peer check guards them"}}},
			"sandbox workspace-write, network off (Landlock ABI 7: writes; not enforced: UDP — needs Landlock ABI 10; unix sockets by path — needs Landlock ABI 9; polyrepl's sockets guarded by its peer checks instead)"},
		{"network on", &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOn}, &api.Enforced{Mechanism: "landlock", ABI: 7, Parts: []api.EnforcedPart{
			{Part: api.PartWrite, Enforced: true}, {Part: api.PartTCPConnect, Why: "network on: the policy allows it"}, {Part: api.PartUDP, Why: "network on: the policy allows it"}}},
			"sandbox read-only, network on (Landlock ABI 7: writes)"},
		{"seatbelt", ww, &api.Enforced{Mechanism: "seatbelt", Parts: []api.EnforcedPart{{Part: api.PartWrite, Enforced: true}}},
			"sandbox workspace-write, network off (Seatbelt: writes)"},
		{"not reported", ww, nil, "sandbox workspace-write, network off (what the kernel enforces of it was not reported)"},
		{"dirs", &api.Sandbox{Policy: api.SandboxWorkspaceWrite, Network: api.NetworkOff, Writable: []string{"/a", "/b", "/c", "/d", "/e"}, Readable: []string{"/r"}},
			&api.Enforced{Mechanism: "landlock", ABI: 7},
			"sandbox workspace-write, network off, also writable: /a, /b, /c, and 2 more, also readable: /r (Landlock ABI 7: no part of the policy)"},
	} {
		if got := Sandbox(tc.s, tc.e); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestCreatedSaysTheSandbox(t *testing.T) {
	n := api.Note{Kind: api.NoteCreated, Session: "g", Runtime: "python", Version: "3.11.2", Cwd: "/w",
		Sandbox: &api.Sandbox{Policy: api.SandboxWorkspaceWrite, Network: api.NetworkOff}, Enforced: abi7}
	want := "Created session 'g' (python 3.11.2, cwd /w). Sandbox workspace-write, network off (Landlock ABI 7: writes, secrets, TCP connect/bind, signals, ptrace; not enforced: UDP — needs Landlock ABI 10)."
	if got := Note(n, People); got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
	n.Sandbox, n.Enforced = &api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}, nil
	if got := Note(n, People); got != "Created session 'g' (python 3.11.2, cwd /w)." {
		t.Errorf("a full session's creation line says more: %q", got)
	}
}

func TestSessionsShowTheSandbox(t *testing.T) {
	now := time.Now()
	s := api.SessionInfo{Name: "etl", Runtime: "python", Version: "3.11.2", PID: 42, State: api.StateIdle, Created: now, LastActive: now, Cwd: "/w",
		Sandbox: &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}, Enforced: abi7}
	var b strings.Builder
	Session(&b, s, now, People)
	if want := "\n    sandbox read-only, network off (Landlock ABI 7: writes,"; !strings.Contains(b.String(), want) {
		t.Errorf("the listing lacks %q:\n%s", want, b.String())
	}
	b.Reset()
	s.Sandbox, s.Enforced = nil, nil
	Session(&b, s, now, People)
	if strings.Contains(b.String(), "sandbox") {
		t.Errorf("a full session's listing speaks of a sandbox:\n%s", b.String())
	}
}

// A NoteSandbox is one line after the runtime's own error: the policy
// that refused and how to widen it, a flag for a person, an argument for
// a model.
func TestSandboxNote(t *testing.T) {
	ro := &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}
	r := api.CellResult{Session: "g", Cell: 2, Status: api.StatusError,
		Error: &api.CellError{Type: "PermissionError", Message: "[Errno 13] Permission denied: '/etc/x'", Traceback: "Traceback (most recent call last):\nPermissionError: [Errno 13] Permission denied: '/etc/x'"},
		Notes: []api.Note{{Kind: api.NoteSandbox, Session: "g", Cell: 2, Sandbox: ro}}}
	var b strings.Builder
	Result(&b, r, PeopleStyle)
	got := b.String()
	wantPeople := "PermissionError: [Errno 13] Permission denied: '/etc/x'\n[The session's sandbox (read-only, network off) refused this. A live session's policy cannot change: `polyrepl kill g`, then `polyrepl exec g CODE` giving --sandbox workspace-write (writes in its cwd), --writable DIR, --readable DIR, --network on or --sandbox full (no sandbox), starts one that allows more.]\n"
	if !strings.HasSuffix(got, wantPeople) {
		t.Errorf("people:\n got %q\nwant it to end %q", got, wantPeople)
	}
	for _, tc := range []struct {
		s    *api.Sandbox
		part string
		want string
	}{
		{ro, "", `giving "sandbox": "workspace-write" (writes in its cwd), "network": "on" or "sandbox": "full" (no sandbox), starts one`},
		{ro, api.PartWrite, `giving "sandbox": "workspace-write" (writes in its cwd), starts one`},
		{ro, api.PartTCPConnect, `giving "network": "on", starts one`},
		{ro, api.PartSecrets, "refused this. Ask the user."},
		{&api.Sandbox{Policy: api.SandboxWorkspaceWrite, Network: api.NetworkOn}, api.PartTCPConnect, `giving "sandbox": "full" (no sandbox), starts one`},
	} {
		n := api.Note{Kind: api.NoteSandbox, Session: "g", Sandbox: tc.s, Why: tc.part}
		got := Note(n, modelLike{})
		if !strings.Contains(got, tc.want) || strings.Contains(got, "--") {
			t.Errorf("model, part %q:\n got %q\nwant it to hold %q", tc.part, got, tc.want)
		}
	}
}

// A CodeSandbox refusal is worded for each reader: what it can ask for
// instead, and who can widen its sandbox.
func TestSandboxRefusal(t *testing.T) {
	asked := api.ErrorReply{Code: api.CodeSandbox, Field: "sandbox", Error: "workspace-write allows more than read-only, this client's sandbox"}
	if got := Hint(asked, People); !strings.Contains(got, "--sandbox read-only always fits") || !strings.Contains(got, "outside this one") {
		t.Errorf("people: %q", got)
	}
	if got := Hint(asked, modelLike{}); !strings.Contains(got, `"sandbox": "read-only" always fits`) || strings.Contains(got, "--") {
		t.Errorf("model: %q", got)
	}
	asked.Hint = "ask for a policy within your own sandbox, or leave it out to get yours"
	if got := Hint(asked, People); !strings.HasPrefix(got, asked.Hint+" (--sandbox read-only always fits); a wider sandbox needs") {
		t.Errorf("people, with the daemon's hint: %q", got)
	}
	outside := api.ErrorReply{Code: api.CodeSandbox, Error: "session 'etl' is outside your sandbox", Hint: "use another session name"}
	if got := Hint(outside, People); got != "use another session name; "+People.Confined() {
		t.Errorf("people, a session outside: %q", got)
	}
}
