package mcp

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
)

// update rewrites the golden files from what the server says now:
// go test ./internal/mcp -run TestGolden -update
var update = flag.Bool("update", false, "rewrite the golden MCP exchanges in testdata/golden")

// exchange is one tool call of a golden script, by one of its agents.
type exchange struct {
	agent    string // "a" or "b": two MCP connections
	tool     string
	args     map[string]any
	parallel bool // called at once with the parallel exchanges next to it
}

// TestGolden replays, for each tool, a success and a refusal and compares
// the text a model reads with testdata/golden/NAME.txt. Times, durations,
// pids, generations and paths are masked; the words are exact. Every
// reply in them names tools and arguments, never CLI commands or flags.
func TestGolden(t *testing.T) {
	scripts := []struct {
		name    string
		calls   []exchange
		maxWait float64      // polyrepl mcp --max-wait
		sandbox *api.Sandbox // polyrepl mcp --sandbox
	}{
		{"exec", []exchange{
			{"a", "exec", map[string]any{"session": "g", "code": "x = 6 * 7\nprint('hello')\nx"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "1/0"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "2", "runtime": "cobol"}, false},
			{"a", "exec", map[string]any{"session": "g2", "code": "2", "runtime": "cobol"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "y = 1", "memory": "300M"}, false},
		}, 0, nil},
		{"wait", []exchange{
			{"a", "exec", map[string]any{"session": "g", "code": "import time\ntime.sleep(3)\nprint('slept')", "timeout": 0.2}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "1"}, false},
			{"a", "wait", map[string]any{"session": "g"}, false},
			{"a", "wait", map[string]any{"session": "g"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "time.sleep(1)\n'late'", "timeout": 0}, false},
			{"a", "wait", map[string]any{"session": "g", "timeout": 0}, false},
			{"a", "wait", map[string]any{"session": "g"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "1", "timeout": -1}, false},
			{"a", "wait", map[string]any{"session": "nosuch"}, false},
		}, 0, nil},
		{"interrupt", []exchange{
			{"a", "exec", map[string]any{"session": "g", "code": "0"}, false},
			{"a", "interrupt", map[string]any{"session": "g"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "import time\nprint('working', flush=True)\ntime.sleep(60)", "timeout": 1}, false},
			{"a", "interrupt", map[string]any{"session": "g"}, false},
			{"a", "interrupt", map[string]any{"session": "nosuch"}, false},
		}, 0, nil},
		{"kill", []exchange{
			{"a", "exec", map[string]any{"session": "g", "code": "kept = 1"}, false},
			{"a", "kill", map[string]any{"session": "g"}, false},
			{"a", "wait", map[string]any{"session": "g"}, false},
			{"b", "wait", map[string]any{"session": "g"}, false},
			{"a", "kill", map[string]any{"session": "nosuch"}, false},
		}, 0, nil},
		{"restart", []exchange{
			{"a", "exec", map[string]any{"session": "g", "code": "kept = 1"}, false},
			{"a", "restart", map[string]any{"session": "g"}, false},
			{"a", "restart", map[string]any{"session": "nosuch"}, false},
		}, 0, nil},
		{"death", []exchange{
			{"a", "exec", map[string]any{"session": "g", "code": "kept = 1"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "import os\nos._exit(3)"}, false},
			{"a", "wait", map[string]any{"session": "g"}, false},
			{"b", "exec", map[string]any{"session": "g", "code": "'fresh'"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "'again'"}, false},
		}, 0, nil},
		{"history", []exchange{
			{"a", "exec", map[string]any{"session": "g", "code": "print('for the record')"}, false},
			{"b", "exec", map[string]any{"session": "g", "code": "'from b'"}, false},
			{"a", "history", map[string]any{"session": "g"}, false},
			{"a", "history", map[string]any{"session": "g", "id": "g#2"}, false},
			{"a", "history", map[string]any{"session": "nosuch"}, false},
		}, 0, nil},
		{"maxwait", []exchange{
			{"a", "exec", map[string]any{"session": "g", "code": "import time\ntime.sleep(5)\n'slow'", "timeout": 300}, false},
			{"a", "wait", map[string]any{"session": "g", "timeout": 0.2}, false},
			{"a", "wait", map[string]any{"session": "g"}, false},
		}, 0.5, nil},
		{"cut", []exchange{
			{"a", "exec", map[string]any{"session": "g", "code": "for i in range(3000): print('row', i, 'x'*40)"}, false},
		}, 0, nil},
		{"rich", []exchange{
			{"a", "exec", map[string]any{"session": "g", "code": "class Table:\n    def _repr_html_(self): return '<table><tr><td>1</td><td>4</td></tr></table>'\n    def __repr__(self): return '   a  b\\n0  1  4'\nTable()"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "class Page:\n    def _repr_html_(self): return '<b>bold</b>'\nPage()"}, false},
		}, 0, nil},
		{"parallel", []exchange{
			{"a", "exec", map[string]any{"session": "p1", "code": "import time"}, false},
			{"a", "exec", map[string]any{"session": "p2", "code": "import time"}, false},
			{"a", "exec", map[string]any{"session": "p3", "code": "import time"}, false},
			{"a", "exec", map[string]any{"session": "p1", "code": "time.sleep(1.5)\n'p1 done'"}, true},
			{"a", "exec", map[string]any{"session": "p2", "code": "time.sleep(1.5)\n'p2 done'"}, true},
			{"a", "exec", map[string]any{"session": "p3", "code": "time.sleep(1.5)\n'p3 done'"}, true},
			{"a", "exec", map[string]any{"session": "p1", "code": "time.sleep(2)\n'late'", "timeout": "0.2"}, false},
			{"a", "exec", map[string]any{"session": "p2", "code": "'told of p1'"}, false},
			{"a", "wait", map[string]any{"session": "p1", "timeout": "soon"}, false},
			{"a", "wait", map[string]any{"session": "p1"}, false},
		}, 0, nil},
		{"runtimes", []exchange{
			{"a", "runtimes", map[string]any{"name": "python"}, false},
			{"a", "runtimes", map[string]any{"name": "cobol"}, false},
		}, 0, nil},
		// A model's sandbox arguments: refused in words when they mean
		// nothing (the server checks them before sending anything).
		{"sandbox", []exchange{
			{"a", "exec", map[string]any{"session": "g", "code": "1", "sandbox": "bogus"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "1", "sandbox": "read-only", "network": "maybe"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "1", "sandbox": "full", "network": "off"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "1", "network": "off"}, false},
		}, 0, nil},
		// A server started with --sandbox read-only: a model asking wider
		// is refused, naming the argument and what is allowed.
		{"ceiling", []exchange{
			{"a", "exec", map[string]any{"session": "g", "code": "1", "sandbox": "workspace-write"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "1", "sandbox": "danger-full-access"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "1", "network": "on"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "1", "sandbox": "read-only", "network": "on"}, false},
		}, 0, &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}},
		{"vars", []exchange{
			{"a", "exec", map[string]any{"session": "g", "code": "x = 42\nname = 'ada'\nitems = [1, 2, 3]\ncfg = {'db': {'host': 'h', 'port': 5432}}\ndef f(a, b=1):\n    return a"}, false},
			{"a", "vars", map[string]any{"session": "g"}, false},
			{"a", "vars", map[string]any{"session": "g", "path": "cfg[\"db\"]"}, false},
			{"a", "vars", map[string]any{"session": "g", "path": "nosuch"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "import time\ntime.sleep(2)", "timeout": 0}, false},
			{"a", "vars", map[string]any{"session": "g"}, false},
			{"a", "vars", map[string]any{"session": "g", "path": "items"}, false},
			{"a", "vars", map[string]any{"session": "nosuch"}, false},
		}, 0, nil},
		// A fork: the copy named, a change in it leaves the parent's,
		// and the refusals — a live name, a cell running.
		{"fork", []exchange{
			{"a", "exec", map[string]any{"session": "g", "code": "rows = [1, 2, 3]"}, false},
			{"a", "fork", map[string]any{"session": "g", "new": "try"}, false},
			{"a", "exec", map[string]any{"session": "try", "code": "rows.append(4); rows"}, false},
			{"b", "exec", map[string]any{"session": "g", "code": "rows"}, false},
			{"a", "fork", map[string]any{"session": "g", "new": "try"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "import time\ntime.sleep(2)", "timeout": 0}, false},
			{"a", "fork", map[string]any{"session": "g", "new": "other"}, false},
		}, 0, nil},
		// A checkpoint kept, a change, a rollback: the value is back; a
		// label nobody kept and a rollback during a cell are refused.
		{"checkpoint", []exchange{
			{"a", "exec", map[string]any{"session": "g", "code": "rows = [1, 2, 3]"}, false},
			{"a", "checkpoint", map[string]any{"session": "g", "label": "before"}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "rows.clear(); rows"}, false},
			{"a", "checkpoint", map[string]any{"session": "g", "label": "before", "rollback": true}, false},
			{"b", "exec", map[string]any{"session": "g", "code": "rows"}, false},
			{"a", "checkpoint", map[string]any{"session": "g", "label": "nosuch", "rollback": true}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "import time\ntime.sleep(2)", "timeout": 0}, false},
			{"a", "checkpoint", map[string]any{"session": "g", "rollback": true}, false},
		}, 0, nil},
		{"sessions", []exchange{
			{"a", "sessions", map[string]any{}, false},
			{"a", "exec", map[string]any{"session": "g", "code": "names = 1"}, false},
			{"a", "sessions", map[string]any{"session": "nosuch"}, false},
		}, 0, nil},
	}
	for _, sc := range scripts {
		t.Run(sc.name, func(t *testing.T) {
			f := newFixture(t, true)
			f.srv.MaxWait = sc.maxWait
			if sc.sandbox != nil {
				f.srv.Confine(*sc.sandbox)
			}
			agents := map[string]*agent{
				"a": f.connect(testAgent),
				"b": f.connect(&mcp.Implementation{Name: "other-agent", Title: "Other Agent", Version: "1.0"}),
			}
			var b strings.Builder
			results := make([]*mcp.CallToolResult, len(sc.calls))
			for i := 0; i < len(sc.calls); i++ {
				if !sc.calls[i].parallel {
					results[i] = agents[sc.calls[i].agent].call(sc.calls[i].tool, sc.calls[i].args)
					continue
				}
				var wg sync.WaitGroup
				for ; i < len(sc.calls) && sc.calls[i].parallel; i++ {
					wg.Add(1)
					go func(i int) {
						defer wg.Done()
						results[i] = agents[sc.calls[i].agent].call(sc.calls[i].tool, sc.calls[i].args)
					}(i)
				}
				i--
				wg.Wait()
			}
			for i, x := range sc.calls {
				res := results[i]
				args, _ := json.Marshal(x.args)
				txt := text(res)
				fmt.Fprintf(&b, "### %s: %s %s (error: %v)\n%s\n", x.agent, x.tool, args, res.IsError, mask(f, txt))
				if res.StructuredContent != nil {
					// The lean shapes a client reads besides the text.
					var sc strings.Builder
					enc := json.NewEncoder(&sc)
					enc.SetEscapeHTML(false)
					enc.Encode(res.StructuredContent)
					fmt.Fprintf(&b, "structured: %s", mask(f, sc.String()))
				}
				b.WriteString("\n")
				wantLacks(t, fmt.Sprintf("%s %s", x.tool, args), txt, cliAdvice...)
				wantLacks(t, fmt.Sprintf("%s %s", x.tool, args), txt, "--cwd", "--project", "--python", "--exe", "--memory", "--runtime")
				if twice := saidTwice(txt, res.StructuredContent); len(twice) > 0 {
					t.Errorf("%s %s: the structured content says again what the text says: %v", x.tool, args, twice)
				}
				if where := sessionNotName(res.StructuredContent, "structuredContent"); where != "" {
					t.Errorf("%s %s: %s is not a session name; session is a name in every reply", x.tool, args, where)
				}
			}
			path := filepath.Join("testdata", "golden", sc.name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./internal/mcp -run TestGolden -update writes it)", err)
			}
			if got := b.String(); got != string(want) {
				t.Errorf("the exchanges differ from %s (-update rewrites it after a deliberate change):\n%s", path, diffLines(string(want), got))
			}
		})
	}
}

// sessionNotName finds a "session" field anywhere in v that is not a
// string (a name), and says where; "" if there is none.
func sessionNotName(v any, at string) string {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if _, ok := x.(string); k == "session" && !ok {
				return at + ".session"
			}
			if w := sessionNotName(x, at+"."+k); w != "" {
				return w
			}
		}
	case []any:
		for i, x := range v {
			if w := sessionNotName(x, fmt.Sprintf("%s[%d]", at, i)); w != "" {
				return w
			}
		}
	}
	return ""
}

// masks hide what changes from run to run; the words stay.
var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?`), "DATE"},
	// An elapsed time may round to 0 and be left out: masked away.
	{regexp.MustCompile(`"elapsed":[0-9.e+-]+,`), ``},
	{regexp.MustCompile(`"(memory|pid|holder|rev|exit_code|signal)":[0-9.e+-]+`), `"$1":N`},
	{regexp.MustCompile(`"version":"[^"]*"`), `"version":"VERSION"`},
	{regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`), "TIME"},
	{regexp.MustCompile(`\b[0-9a-f]{12}\b`), "GEN"},
	{regexp.MustCompile(`pid \d+`), "pid PID"},
	{regexp.MustCompile(`\b\d+(\.\d+)?(ms|µs|s|m\d+(\.\d+)?s|h\d+m\d+s)\b`), "DUR"},
	{regexp.MustCompile(`\b\d+(\.\d+)? ?(B|KB|MB|GB|KiB|MiB|GiB)\b`), "SIZE"},
	{regexp.MustCompile(`python \d+\.\d+\.\d+`), "python VERSION"},
	{regexp.MustCompile(`Python \d+\.\d+\.\d+`), "Python VERSION"},
	{regexp.MustCompile(` at 0x[0-9a-f]+>`), " at 0xADDR>"},
	{regexp.MustCompile(`/tmp/[^\s,;:)'"\]]+`), "PATH"},
	// A line cut to its width ends where the lengths of the fields
	// masked above (a pid's digits) put it: the word it cut is masked.
	{regexp.MustCompile(`\S+…`), "…"},
}

func mask(f *fixture, s string) string {
	s = strings.ReplaceAll(s, f.cwd, "CWD")
	if f.python != "" {
		s = strings.ReplaceAll(s, f.python, "PYTHON")
	}
	for _, m := range masks {
		s = m.re.ReplaceAllString(s, m.with)
	}
	return s
}

// diffLines shows the first lines where want and got part.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 12; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
}
