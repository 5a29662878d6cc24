package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
)

// The runtimes tool surveys runtimes as a new session of this server
// would find them (its environment: $POLYREPL_PYTHON here): one short
// line each, the data once, asked again from the daemon's survey; given
// a name, one runtime whole with its limits (issue 35 item 11).
func TestRuntimesTool(t *testing.T) {
	f := newFixture(t, true)
	a := f.connect(testAgent)
	res := a.ok("runtimes", nil)
	var r leanRuntimes
	structured(t, res, &r)
	byName := map[string]leanRuntime{}
	for _, x := range r.Runtimes {
		byName[x.Name] = x
	}
	py := byName["python"]
	if py.Path != f.python || !strings.HasPrefix(py.Version, "3.") {
		t.Errorf("python: %+v, want %s with its version", py, f.python)
	}
	txt := text(res)
	wantContains(t, "runtimes text", txt, "Runtimes here", "- python 3.")
	wantLacks(t, "runtimes text", txt, "Limits: ")
	if _, found := byName["julia"]; !found {
		wantContains(t, "runtimes text", txt, "Not installed: ", "julia")
	}
	for name, x := range byName {
		if strings.HasPrefix(name, "jupyter:") && x.Problem == "" {
			wantContains(t, "a kernel's line", txt, fmt.Sprintf("- %s: a Jupyter kernel, %q", name, x.Display))
		}
	}
	b, _ := json.Marshal(res.StructuredContent)
	if n := len(txt) + len(b); n > 2500 {
		t.Errorf("the runtimes tool costs %d characters (%d text, %d structured), want under 2,500:\n%s\n%s", n, len(txt), len(b), txt, b)
	}
	wantLacks(t, "runtimes text", txt, cliAdvice...)

	res = a.ok("runtimes", map[string]any{"name": "python"})
	var one api.RuntimeInfo
	structured(t, res, &one)
	if !one.Found || one.Exe != f.python || one.Limits == "" {
		t.Errorf("python whole: %+v, want it found with its limits", one)
	}
	wantContains(t, "python whole", text(res), "python: "+f.python+", Python 3", "Limits: ", "Needs: ")
	wantLacks(t, "python whole", text(res), cliAdvice[1:]...) // limits may quote code in backticks
	if res := a.call("runtimes", map[string]any{"name": "cobol"}); !res.IsError || !strings.Contains(text(res), "without a name lists them") {
		t.Errorf("runtimes cobol: %s, want an error naming the runtimes", text(res))
	}
}
