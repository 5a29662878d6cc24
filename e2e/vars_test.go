package e2e

import (
	"encoding/json"
	"testing"
)

// TestVarsRefusals: vars on a session that does not exist is refused
// (exit 2); on a runtime that cannot look without a cell it says so
// (exit 1, code no-look) and runs nothing; the MCP tool says the same in
// its words.
func TestVarsRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, stderr := e.must(2, "vars", "nosuch")
	wantContains(t, "vars on no session", stderr, "no live session named")
	// Every runtime installed here looks; the refusal is the others'
	// (cling, LFortran, MATLAB), where one is installed.
	rt := ""
	for _, name := range []string{"cpp", "lfortran", "matlab"} {
		if ok, _ := runtimeFound(e, name); ok {
			rt = name
			break
		}
	}
	if rt == "" {
		t.Skip("every runtime installed here looks: the refusal of one that cannot (cling, LFortran, MATLAB) is not tried (internal/driver/terminal's TestVars and jupyter's TestVarsOtherKernel hold it)")
	}
	e.must(0, "exec", "nv", "1", "--runtime", rt)
	out, _ := e.must(1, "vars", "nv", "--json")
	var r struct{ Code, Error string }
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Code != "no-look" {
		t.Errorf("vars on %s: %s (%v)", rt, out, err)
	}
	wantContains(t, "vars on "+rt, r.Error, "cannot look at its names without a cell")
	hist, _ := e.must(0, "history", "nv", "--json")
	wantLacks(t, "the record after a look", hist, `"cell":2`)
}
