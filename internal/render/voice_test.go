package render

import (
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
)

// TestHint: a refusal's steps and input, given as data, become a
// person's commands and flags here, and its words pass unchanged.
func TestHint(t *testing.T) {
	for _, tc := range []struct {
		e    api.ErrorReply
		want string
	}{
		{api.ErrorReply{Hint: "name a Jupyter kernel as the runtime: jupyter:NAME", Field: api.FieldRuntime},
			"name a Jupyter kernel as the runtime: jupyter:NAME (--runtime)"},
		{api.ErrorReply{Hint: "choose an installed kernel, or fix its kernel.json", Field: api.FieldRuntime, Next: []api.Action{{Do: api.DoRuntimes}}},
			"`polyrepl runtimes` lists them; choose an installed kernel, or fix its kernel.json (--runtime)"},
		{api.ErrorReply{Hint: "check the gateway, its token and the kernel's name", Field: api.FieldGateway, Next: []api.Action{{Do: api.DoKernels}}},
			"`polyrepl runtimes --gateway URL` lists the kernels the gateway offers; check the gateway, its token and the kernel's name (--gateway)"},
		{api.ErrorReply{Next: []api.Action{{Do: api.DoAttach, Session: "s"}}},
			"`polyrepl attach s` shows its record and sends it cells, with no terminal"},
		{api.ErrorReply{Field: api.FieldCwd}, "give --cwd"},
	} {
		if got := Hint(tc.e, People); got != tc.want {
			t.Errorf("Hint(%+v):\n got %q\nwant %q", tc.e, got, tc.want)
		}
		if got := Hint(tc.e, modelLike{}); strings.Contains(got, "--") || strings.Contains(got, "polyrepl ") {
			t.Errorf("Hint(%+v) for a model names a command: %q", tc.e, got)
		}
	}
}
