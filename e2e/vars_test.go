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
	needRuntime(t, e, "java", "openjdk-17-jdk-headless")
	e.must(0, "exec", "jv", "int x = 1;", "--runtime", "java")
	out, _ := e.must(1, "vars", "jv", "--json")
	var r struct{ Code, Error string }
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Code != "no-look" {
		t.Errorf("vars on java: %s (%v)", out, err)
	}
	wantContains(t, "vars on java", r.Error, "cannot look at its names without a cell")
	hist, _ := e.must(0, "history", "jv", "--json")
	wantLacks(t, "the record after a look", hist, `"cell":2`)
}
