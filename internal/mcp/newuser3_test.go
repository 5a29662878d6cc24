package mcp

import (
	"fmt"
	"strings"
	"sync"
	"testing"

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
	wantContains(t, "a reply after a cell left running", txt, "'par1' is running", `the wait tool (session "par1")`)
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
	// The structured content's own marker counts from the whole too.
	if want := fmt.Sprintf("[… %s cut …]", bound.Characters(c.Total-c.Head-c.Tail)); !strings.Contains(r.Output, want) {
		t.Errorf("structured output lacks %q:\n%s", want, cutMiddle(r.Output))
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
