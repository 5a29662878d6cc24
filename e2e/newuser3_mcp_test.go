package e2e

// What a new user tripped on over MCP, round three (issue 35 items 6, 7,
// 8, 10, 11 and 13's MCP part), through the real `polyrepl mcp` over
// stdio and the official Go SDK's client.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawCall calls a tool and returns its whole result, a tool error too.
func (s *mcpServer) rawCall(tool string, args map[string]any) *mcp.CallToolResult {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		s.t.Fatalf("%s %v: %v\nstderr: %s", tool, args, err, clip(s.stderr.String()))
	}
	return res
}

// rowsOut is a long text's lines but its rows of output.
func rowsOut(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "row ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestNewUser3MCPOneCutMarker: 3,000 rows over MCP show one marker, in
// place, with the whole's numbers and its file (it showed "[… 22,037
// characters cut …]" for about 141,000 cut, then a second marker).
func TestNewUser3MCPOneCutMarker(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	s := e.startMCP()
	r, txt := s.cell("exec", map[string]any{"session": "rows", "code": "for i in range(3000): print('row', i, 'x'*40)"})
	if n := strings.Count(txt, "cut"); n != 1 {
		t.Errorf("%d markers, want 1:\n%s", n, rowsOut(txt))
	}
	if !strings.Contains(txt, "\n[output cut: 148,890 characters in all; showing the first ") || !strings.Contains(txt, "row 2999 x") {
		t.Errorf("the reply lacks its one true marker between head and tail:\n%s", rowsOut(txt))
	}
	if c := r.OutputCut; c == nil || c.Total != 148890 || c.File == "" {
		t.Errorf("structured cut %+v, want 148,890 in all and its file", r.OutputCut)
	} else if b, err := os.ReadFile(c.File); err != nil || len(b) != 148890 {
		t.Errorf("the whole output's file: %d bytes, %v; want 148,890", len(b), err)
	}
}

// TestNewUser3MCPTableSaysNoWrongLine: a pandas table's reply shows the
// table and no line about HTML or an image (it added "[HTML 1: 1 KB → …]"
// and "[1 image not shown inline …]").
func TestNewUser3MCPTableSaysNoWrongLine(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	s := e.startMCP()
	_, txt := s.cell("exec", map[string]any{"session": "pd", "code": "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3], 'b': [4, 5, 6]})"})
	if strings.Contains(txt, "ModuleNotFoundError") {
		t.Skip("pandas is not installed for " + python)
	}
	res := s.rawCall("exec", map[string]any{"session": "pd", "code": "df.head()"})
	txt = toolText(res)
	if !strings.Contains(txt, "0  1  4") {
		t.Errorf("df.head() does not show the table:\n%s", txt)
	}
	for _, wrong := range []string{"HTML", "image", ".html"} {
		if strings.Contains(txt, wrong) {
			t.Errorf("df.head()'s reply says %q:\n%s", wrong, txt)
		}
	}
	for _, c := range res.Content {
		if _, ok := c.(*mcp.ImageContent); ok {
			t.Errorf("df.head()'s reply carries an image block")
		}
	}
}

// TestNewUser3MCPParallelExecs: five execs on five sessions at once from
// one client (Promise.all): none is told to collect a cell the client
// itself waits for.
func TestNewUser3MCPParallelExecs(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	s := e.startMCP()
	for i := 1; i <= 5; i++ {
		s.cell("exec", map[string]any{"session": fmt.Sprintf("par%d", i), "code": "import time"})
	}
	texts := make([]string, 5)
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
			defer cancel()
			res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "exec", Arguments: map[string]any{
				"session": fmt.Sprintf("par%d", i+1), "code": fmt.Sprintf("time.sleep(2)\n'par%d done'", i+1)}})
			if err != nil {
				t.Errorf("par%d: %v", i+1, err)
				return
			}
			texts[i] = toolText(res)
		}()
	}
	wg.Wait()
	for i, txt := range texts {
		if !strings.Contains(txt, fmt.Sprintf("'par%d done'", i+1)) {
			t.Errorf("par%d's reply lacks its value:\n%s", i+1, txt)
		}
		if strings.Contains(strings.ToLower(txt), "the wait tool") || strings.Contains(txt, "Other sessions") {
			t.Errorf("par%d's reply tells its client to collect a cell it waits for:\n%s", i+1, txt)
		}
	}
}

// TestNewUser3MCPTimeoutAsString: timeout "5", as the MCP Inspector's
// command line sends it, is taken; a timeout that is no number is
// refused in words, not a Go type name.
func TestNewUser3MCPTimeoutAsString(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	s := e.startMCP()
	if r, txt := s.cell("exec", map[string]any{"session": "ts", "code": "6 * 7", "timeout": "5"}); r.Status != "done" || !strings.HasSuffix(txt, "Out[1]: 42") {
		t.Errorf(`timeout "5": %s, want done 42:\n%s`, r.Status, txt)
	}
	res := s.rawCall("exec", map[string]any{"session": "ts", "code": "1", "timeout": "soon"})
	txt := toolText(res)
	if !res.IsError || !strings.Contains(txt, `"timeout" must be a number of seconds`) || strings.Contains(txt, "float64") {
		t.Errorf(`timeout "soon": %s`, txt)
	}
}

// TestNewUser3MCPRuntimes: the runtimes tool is short (under 2,500
// characters, text and structured), every line filled (a Jupyter
// kernel's says its display name and language), and asked again it
// runs no version command until a directory it depends on changes.
func TestNewUser3MCPRuntimes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	count := filepath.Join(dir, "runs")
	fake := filepath.Join(dir, "fakeruby")
	script := "#!/bin/sh\necho run >> " + count + "\necho 'ruby 9.8.7 (fake)'\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	jp := filepath.Join(dir, "jupyter")
	kernel := func(name, display, lang string) {
		t.Helper()
		k := filepath.Join(jp, "kernels", name)
		spec := fmt.Sprintf(`{"argv": ["/bin/sh", "{connection_file}"], "display_name": %q, "language": %q}`, display, lang)
		if err := os.MkdirAll(k, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(k, "kernel.json"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kernel("fake1", "Fake One", "fakelang")
	s := e.startMCPWith(append(e.vars, "POLYREPL_RUBY="+fake, "JUPYTER_PATH="+jp))
	runs := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "run")
	}
	ask := func() (string, int) {
		t.Helper()
		start := time.Now()
		res := s.rawCall("runtimes", map[string]any{})
		took := time.Since(start)
		b, _ := json.Marshal(res.StructuredContent)
		txt := toolText(res)
		t.Logf("runtimes: %d characters of text, %d structured, in %s", len(txt), len(b), took.Round(time.Millisecond))
		return txt, len(txt) + len(b)
	}
	txt, cost := ask()
	if cost > 2500 {
		t.Errorf("the runtimes tool costs %d characters, want under 2,500:\n%s", cost, txt)
	}
	for _, want := range []string{"- ruby 9.8.7 (" + fake + ")", `- jupyter:fake1: a Jupyter kernel, "Fake One" in fakelang (/bin/sh)`} {
		if !strings.Contains(txt, want) {
			t.Errorf("the list lacks %q:\n%s", want, txt)
		}
	}
	for _, l := range strings.Split(txt, "\n") {
		if strings.HasSuffix(strings.TrimSpace(l), ",") || strings.HasSuffix(l, ": ") {
			t.Errorf("a blank line in the list: %q", l)
		}
	}
	if n := runs(); n != 1 {
		t.Fatalf("the first survey ran ruby's version command %d times, want 1", n)
	}
	ask()
	if n := runs(); n != 1 {
		t.Errorf("asked again, the version command ran again (%d runs): the survey is not kept", n)
	}
	// Another client of the same daemon, with the same environment,
	// gets the same survey.
	s2 := e.startMCPWith(append(e.vars, "POLYREPL_RUBY="+fake, "JUPYTER_PATH="+jp))
	s2.rawCall("runtimes", map[string]any{})
	if n := runs(); n != 1 {
		t.Errorf("another MCP server's first call surveyed again (%d runs)", n)
	}
	// A new kernel is a change: surveyed again, and listed.
	time.Sleep(10 * time.Millisecond) // a directory's time must move
	kernel("fake2", "Fake Two", "otherlang")
	txt, _ = ask()
	if !strings.Contains(txt, `- jupyter:fake2: a Jupyter kernel, "Fake Two" in otherlang`) {
		t.Errorf("a kernel installed since is not listed:\n%s", txt)
	}
	if n := runs(); n != 2 {
		t.Errorf("after a kernel was installed: %d runs of the version command, want 2", n)
	}
	res := s.rawCall("runtimes", map[string]any{"name": "ruby"})
	if one := toolText(res); !strings.Contains(one, "ruby: "+fake+", ruby 9.8.7 (fake).") || !strings.Contains(one, "Limits: ") {
		t.Errorf("runtimes ruby:\n%s", one)
	}
}

// TestNewUser3MCPFigureOutsideItsReply: a plot made by another client is
// told in this client's activity with its file, and the history of that
// one entry sends the image.
func TestNewUser3MCPFigureOutsideItsReply(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	a, b := e.startMCP(), e.startMCP()
	a.cell("exec", map[string]any{"session": "fig", "code": "0"})
	var made struct {
		Rich []struct {
			File string `json:"file"`
		} `json:"rich"`
	}
	txt := b.call("exec", map[string]any{"session": "fig", "code": "import matplotlib\nmatplotlib.use('agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2])"}, &made)
	if strings.Contains(txt, "ModuleNotFoundError") {
		t.Skip("matplotlib is not installed for " + python)
	}
	if len(made.Rich) != 1 {
		t.Fatalf("the plotting cell made %d figures, want 1:\n%s", len(made.Rich), txt)
	}
	file := made.Rich[0].File
	_, txt = a.cell("exec", map[string]any{"session": "fig", "code": "1"})
	if !strings.Contains(txt, "import matplotlib") || !strings.Contains(txt, "[image 1: 640×480 PNG") || !strings.Contains(txt, file) {
		t.Errorf("the other client's activity does not tell the figure and its file %s:\n%s", file, txt)
	}
	// The history's text lists an entry a line, its seq first.
	hist := a.call("history", map[string]any{"session": "fig"}, nil)
	m := regexp.MustCompile(`(?m)^(\d+) +cell .*  import matplotlib`).FindStringSubmatch(hist)
	if m == nil {
		t.Fatalf("no entry of the plotting cell in the history:\n%s", hist)
	}
	id := "fig#" + m[1]
	res := a.rawCall("history", map[string]any{"session": "fig", "id": id})
	images := 0
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok && img.MIMEType == "image/png" && len(img.Data) > 0 {
			images++
		}
	}
	if images != 1 || !strings.Contains(toolText(res), file) {
		t.Errorf("history of the plotting entry: %d image blocks, want 1, and its file:\n%s", images, toolText(res))
	}
}
