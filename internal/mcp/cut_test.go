package mcp

import (
	"context"
	"encoding/json"
	"github.com/polyrepl/polyrepl/internal/api"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestQuoteCut(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, `"abc"`},
		{"abcdef", 3, `"abc…" (6 characters)`},
		{strings.Repeat("é", 5000), 2, `"éé…" (5,000 characters)`},
		{"a\nb\"c", 10, `"a\nb\"c"`},
		{"\xff\xfeabc", 2, "\"\ufffda…\" (5 characters)"}, // invalid bytes become one U+FFFD
	} {
		if got := quoteCut(c.s, c.n); got != c.want {
			t.Errorf("quoteCut(%.20q, %d) = %s, want %s", c.s, c.n, got, c.want)
		}
	}
}

// An error text quotes at most the head of each long argument name or
// value, plain or quoted, and says how long it was (issue 33 item 8).
func TestEchoCut(t *testing.T) {
	big := strings.Repeat("y", 50_000)
	args, _ := json.Marshal(map[string]any{"memory": big, "nested": []any{map[string]any{"k": "z" + big}}, big + "key": 1})
	for _, text := range []string{
		`Error: the "memory" argument: invalid memory size "` + big + `"`,
		"Error: the working directory /" + big + " does not exist",
		`exec: invalid arguments: json: unknown field "` + big + `key"`,
		"Error: unknown runtime z" + big + " and " + big,
		"Error: " + strings.Repeat("w", 20_000),                                                                       // not from the arguments: cut whole
		"Error: unknown runtime \"" + big[:4000] + "… [error cut: 50,019 characters in all; showing the first 4,000]", // the daemon cut it first
	} {
		got := echoCut(text, args)
		if utf8.RuneCountInString(got) > errorText+100 || strings.Contains(got, strings.Repeat("y", quoted+1)) {
			t.Errorf("echoCut(%.60q) kept %d characters: %.300q", text, len(got), got)
		}
		if strings.Contains(text, big[:quoted+1]) && !strings.Contains(got, "50,00") {
			t.Errorf("echoCut(%.60q) does not say how long the value was: %.300q", text, got)
		}
	}
	if got := echoCut(`Error: no session named "s"`, args); got != `Error: no session named "s"` {
		t.Errorf("a short error changed: %q", got)
	}
}

// Through the server: every refusal of a long argument, a long argument
// name or a long tool name quotes its head and its length, and a client
// with a 3 MB name labels its cells with 100 characters of it.
func TestLongInputsAreCut(t *testing.T) {
	f := newFixture(t, false)
	a := f.connect(testAgent)
	big := strings.Repeat("y", 1_000_000)
	for _, args := range []map[string]any{
		{"session": "v", "code": "1", "memory": big},
		{"session": "v", "code": "1", "cwd": "/" + big},
		{"session": "v", "code": "1", "runtime": big},
		{"session": "v", "code": "1", "exe": big},
		{"session": "v", "code": "1", "python": big},
		{"session": "v", "code": "1", "project": big},
		{"session": "v", "code": "1", "gateway": big, "runtime": "jupyter:x"},
		{"session": "v", "code": "1", big: 1},
		{"session": big, "code": "1"},
	} {
		res := a.call("exec", args)
		if !res.IsError || len(text(res)) > errorText*2 || strings.Contains(text(res), strings.Repeat("y", quoted+1)) {
			t.Errorf("exec with a 1 MB argument: error %v, %d bytes: %.300s", res.IsError, len(text(res)), text(res))
		}
	}
	res := a.call("history", map[string]any{"session": "v", "id": big})
	if !res.IsError || len(text(res)) > 1000 {
		t.Errorf("history with a 1 MB id: %.300s", text(res))
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	_, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: big, Arguments: map[string]any{}})
	if err == nil || len(err.Error()) > 1000 || !strings.Contains(err.Error(), "(1,000,000 characters)") || !strings.Contains(err.Error(), "exec, wait") {
		t.Errorf("a 1 MB tool name: %.300v", err)
	}

	if f.python == "" {
		t.Skip("the label: " + "needs Python")
	}
	long := f.connect(&mcp.Implementation{Name: strings.Repeat("n", 3_000_000), Version: "1"})
	long.ok("exec", map[string]any{"session": "lab", "code": "1"})
	hist := text(a.ok("history", map[string]any{"session": "lab"}))
	if strings.Contains(hist, strings.Repeat("n", api.LabelLimit+1)) || !strings.Contains(hist, "[label cut: 3,000,000 characters in all; showing the first 100]") {
		t.Errorf("the record labels a 3 MB client name as %.400s", hist)
	}
}
