package mcp

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
)

// TestParallelCallsNotToldToWaitOnThemselves: five execs on five
// sessions at once from one connection (Promise.all): no reply tells the
// client to collect a cell it is itself waiting for; a cell it left
// running is still told (issue 35 item 10).
func TestParallelCallsNotToldToWaitOnThemselves(t *testing.T) {
	f := newFixture(t, true)
	a := f.connect(testAgent)
	for i := 1; i <= 5; i++ {
		a.mustStart(fmt.Sprintf("par%d", i))
	}
	texts := make([]string, 5)
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			texts[i] = text(a.ok("exec", map[string]any{"session": fmt.Sprintf("par%d", i+1), "code": "import time\ntime.sleep(1.5)\n'ok'"}))
		}()
	}
	wg.Wait()
	for i, txt := range texts {
		wantContains(t, fmt.Sprintf("par%d's reply", i+1), txt, "'ok'")
		wantLacks(t, fmt.Sprintf("par%d's reply", i+1), txt, "the wait tool", "collect", "Other sessions")
	}
	// A cell the client left running is news, and told.
	if r, _ := a.cell("exec", map[string]any{"session": "par1", "code": "time.sleep(3)", "timeout": 0.2}); r.Status != api.StatusRunning {
		t.Fatalf("the slow cell: status %q, want running", r.Status)
	}
	_, txt := a.cell("exec", map[string]any{"session": "par2", "code": "1"})
	wantContains(t, "a reply after a cell left running", txt, "'par1' is running", `The wait tool (session "par1")`)
	a.cell("wait", map[string]any{"session": "par1"})
}

// TestTableRepliesSayNothingWrong: a pandas table's reply shows the
// table once and no line about its HTML or any image (issue 35 item 8);
// its structured content still lists the HTML's file.
func TestTableRepliesSayNothingWrong(t *testing.T) {
	f := newFixture(t, true)
	a := f.connect(testAgent)
	res := a.call("exec", map[string]any{"session": "pd", "code": "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3], 'b': [4, 5, 6]})"})
	if res.IsError || strings.Contains(text(res), "ModuleNotFoundError") {
		t.Skip("pandas is not installed for " + f.python)
	}
	r, txt := a.cell("exec", map[string]any{"session": "pd", "code": "df.head()"})
	wantContains(t, "df.head()", txt, "0  1  4")
	wantLacks(t, "df.head()", txt, "HTML", "image", ".html")
	if len(r.Rich) != 1 || r.Rich[0].MIME != "text/html" || r.Rich[0].File == "" {
		t.Errorf("structured rich %+v, want the table's HTML file", r.Rich)
	}
	// An HTML value whose plain form says nothing is worth its line.
	_, txt = a.cell("exec", map[string]any{"session": "pd", "code": "from IPython.display import HTML\nHTML('<b>x</b>')"})
	wantContains(t, "HTML('<b>x</b>')", txt, "[HTML 1: ", ".html]")
	wantLacks(t, "HTML('<b>x</b>')", txt, "image")
}

// TestLongOutputOneMarker: an output cut by the daemon and again for the
// model shows one marker, in place, with the whole's numbers (issue 35
// item 6).
func TestLongOutputOneMarker(t *testing.T) {
	f := newFixture(t, true)
	a := f.connect(testAgent)
	r, txt := a.cell("exec", map[string]any{"session": "long", "code": "for i in range(3000): print('row', i, 'x'*40)"})
	if n := strings.Count(txt, "cut"); n != 1 {
		t.Errorf("%d markers, want 1:\n%s", n, cutMiddle(txt))
	}
	wantContains(t, "the reply", txt, "row 0 x", "row 2999 x", "\n[output cut: 148,890 characters in all; showing the first ", "; the whole output is in ")
	c := r.OutputCut
	if c == nil || c.Total != 148890 || c.File == "" {
		t.Fatalf("structured cut %+v, want 148,890 in all and the file", c)
	}
	// The text's head and tail are what the cut says it kept.
	if !strings.Contains(txt, fmt.Sprintf("showing the first %s and the last %s;", strings.TrimSuffix(bound.Characters(c.Head), " characters"), strings.TrimSuffix(bound.Characters(c.Tail), " characters"))) {
		t.Errorf("the text's marker does not say the structured cut's head %d and tail %d:\n%s", c.Head, c.Tail, cutMiddle(txt))
	}
}

// cutMiddle is a long text's lines that are not rows.
func cutMiddle(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "row ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestFiguresOutsideTheirReply: a client that was not there when another
// made a figure is told of it and its file in its activity, and the
// history of that entry sends the image, once (issue 35 item 7).
func TestFiguresOutsideTheirReply(t *testing.T) {
	f := newFixture(t, true)
	a := f.connect(testAgent)
	b := f.connect(&mcp.Implementation{Name: "other-agent", Title: "Other Agent", Version: "1.0"})
	a.mustStart("fig")
	res := b.call("exec", map[string]any{"session": "fig", "code": "import matplotlib\nmatplotlib.use('agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2])"})
	if strings.Contains(text(res), "ModuleNotFoundError") {
		t.Skip("matplotlib is not installed for " + f.python)
	}
	var made api.CellResult
	structured(t, res, &made)
	if len(made.Rich) != 1 || !strings.HasSuffix(made.Rich[0].File, ".png") {
		t.Fatalf("the plotting cell's figures: %+v", made.Rich)
	}
	_, txt := a.cell("exec", map[string]any{"session": "fig", "code": "1"})
	wantContains(t, "a's activity", txt, "Other Agent via mcp", "import matplotlib", "[image 1: ", "PNG", made.Rich[0].File)

	id := fmt.Sprintf("fig#%d", seqOf(t, a, "fig", "import matplotlib"))
	res = a.ok("history", map[string]any{"session": "fig", "id": id})
	if n := imageBlocks(res); n != 1 {
		t.Errorf("history of %s: %d image blocks, want 1; text:\n%s", id, n, text(res))
	}
	wantContains(t, "history of the entry", text(res), made.Rich[0].File)
	res = a.ok("history", map[string]any{"session": "fig", "id": id})
	if n := imageBlocks(res); n != 0 {
		t.Errorf("history of %s again: %d image blocks, want none (sent before)", id, n)
	}
	wantContains(t, "history of the entry again", text(res), "the same as one you were already sent")
}

// seqOf is the seq of the entry in session whose code has code.
func seqOf(t *testing.T, a *agent, session, code string) int {
	t.Helper()
	res := a.ok("history", map[string]any{"session": session})
	for _, l := range strings.Split(text(res), "\n") {
		var seq int
		if strings.Contains(l, code) {
			if _, err := fmt.Sscanf(strings.TrimSpace(l), "%d", &seq); err == nil {
				return seq
			}
		}
	}
	t.Fatalf("no entry of %s has %q:\n%s", session, code, text(res))
	return 0
}

// imageBlocks counts a result's image blocks.
func imageBlocks(res *mcp.CallToolResult) int {
	n := 0
	for _, c := range res.Content {
		if _, ok := c.(*mcp.ImageContent); ok {
			n++
		}
	}
	return n
}
