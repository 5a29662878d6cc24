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
