package mcp

import (
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/render"
)

// TestModelVoiceNamesNoCommand: every step a refusal or a note can name
// is told to a model as a tool call, or as the user's doing when no tool
// does it — never as a command line or a flag it cannot type.
func TestModelVoiceNamesNoCommand(t *testing.T) {
	for _, do := range []string{api.DoWait, api.DoInterrupt, api.DoInput, api.DoKill, api.DoRestart, api.DoExec,
		api.DoHistory, api.DoRuntimes, api.DoSessions, api.DoAttach, api.DoKernels, api.DoStop} {
		a := api.Action{Do: do, Session: "s"}
		step := model.Step(a)
		if strings.Contains(step, "--") || strings.Contains(step, "`") || strings.Contains(step, "polyrepl "+do) {
			t.Errorf("the step %s is told a model as %q", do, step)
		}
		hint := render.Hint(api.ErrorReply{Hint: "check the name", Field: api.FieldGateway, Next: []api.Action{a}}, model)
		if strings.Contains(hint, "--") || strings.Contains(hint, "`") || !strings.Contains(hint, `(the "gateway" argument)`) {
			t.Errorf("a refusal naming %s is told a model as %q", do, hint)
		}
	}
	if got := render.Hint(api.ErrorReply{Hint: "check the gateway, its token and the kernel's name", Field: api.FieldGateway,
		Next: []api.Action{{Do: api.DoKernels}}}, model); !strings.Contains(got, "the user, at a terminal (no tool lists a gateway's kernels), lists the kernels the gateway offers") {
		t.Errorf("a gateway's refusal is told a model as %q", got)
	}
}

// A model is told how to widen a sandbox in arguments, and only as far
// as its server allows; a refusal by its sandbox says who can widen it.
func TestModelVoiceSandbox(t *testing.T) {
	ro := api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}
	note := api.Note{Kind: api.NoteSandbox, Session: "g", Cell: 2, Sandbox: &ro}
	free := render.Note(note, model)
	for _, want := range []string{`The session's sandbox (read-only, network off) refused this.`, `the kill tool (session "g"), then the exec tool with session "g"`,
		`"sandbox": "workspace-write" (writes in its cwd)`, `"network": "on"`, `"sandbox": "full" (no sandbox)`} {
		if !strings.Contains(free, want) {
			t.Errorf("unconfined server: the note lacks %q:\n%s", want, free)
		}
	}
	ceiling := modelVoice{ceiling: &api.Sandbox{Policy: api.SandboxWorkspaceWrite, Network: api.NetworkOff}}
	got := render.Note(note, ceiling)
	if !strings.Contains(got, `"sandbox": "workspace-write"`) || strings.Contains(got, `"network": "on"`) || strings.Contains(got, `"full"`) {
		t.Errorf("a server confined to workspace-write offers more than it allows:\n%s", got)
	}
	got = render.Note(note, modelVoice{ceiling: &ro})
	if want := "This server's sandbox (read-only, network off) is the most its sessions may have, set by the user where the server is registered: ask the user"; !strings.Contains(got, want) {
		t.Errorf("a server confined to read-only: %q, want %q", got, want)
	}
	for _, v := range []render.Voice{model, ceiling} {
		for _, text := range []string{render.Note(note, v),
			render.Hint(api.ErrorReply{Code: api.CodeSandbox, Field: "sandbox", Error: "full allows more than workspace-write"}, v),
			render.Hint(api.ErrorReply{Code: api.CodeSandbox, Error: "session 'etl' is outside your sandbox"}, v)} {
			if strings.Contains(text, "--") || strings.Contains(text, "`") {
				t.Errorf("a model is told a flag or a command: %q", text)
			}
		}
	}
	if got := render.Hint(api.ErrorReply{Code: api.CodeSandbox, Field: "sandbox"}, ceiling); !strings.Contains(got, `"sandbox": "read-only" always fits`) || !strings.Contains(got, "ask the user") {
		t.Errorf("a refused policy is told a model as %q", got)
	}
}
