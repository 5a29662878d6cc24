package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
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
	txt := text(res)
	if !slices.Contains(r.Runtimes, "python") {
		t.Errorf("structured runtimes %v lack python", r.Runtimes)
	}
	wantContains(t, "runtimes text", txt, "Runtimes here", "- python 3.", "("+f.python+")")
	wantLacks(t, "runtimes text", txt, "Limits: ")
	if !slices.Contains(r.Runtimes, "julia") {
		wantContains(t, "runtimes text", txt, "Not installed: ", "julia")
	}
	for _, name := range r.Runtimes {
		if strings.HasPrefix(name, "jupyter:") {
			wantContains(t, "a kernel's line", txt, fmt.Sprintf("- %s: a Jupyter kernel, ", name))
		}
	}
	b, _ := json.Marshal(res.StructuredContent)
	if n := len(txt) + len(b); n > 2500 {
		t.Errorf("the runtimes tool costs %d characters (%d text, %d structured), want under 2,500:\n%s\n%s", n, len(txt), len(b), txt, b)
	}
	wantLacks(t, "runtimes text", txt, cliAdvice...)

	res = a.ok("runtimes", map[string]any{"name": "python"})
	var one runtimeFacts
	structured(t, res, &one)
	if !one.Found || one.Name != "python" || !one.Forks {
		t.Errorf("python whole: %+v, want it found, forking", one)
	}
	wantContains(t, "python whole", text(res), "python: "+f.python+", Python 3", "Limits: ", "Needs: ")
	wantLacks(t, "python whole", text(res), cliAdvice[1:]...) // limits may quote code in backticks
	if res := a.call("runtimes", map[string]any{"name": "cobol"}); !res.IsError || !strings.Contains(text(res), "without a name lists them") {
		t.Errorf("runtimes cobol: %s, want an error naming the runtimes", text(res))
	}
}
