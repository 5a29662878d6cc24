package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/testenv"
)

// The notebook export reads as Jupyter's own tools read a notebook: an
// execute_result holds the value alone (the notebook shows its own Out[n]:
// prompt), and an error follows nbformat's convention, its traceback a
// list of lines without newlines beside ename and evalue. Debian's
// jupyter-nbconvert turns the export into Markdown, where each output
// appears exactly once and no prompt is doubled.
func TestNotebookExportThroughNbconvert(t *testing.T) {
	needPython(t)
	t.Parallel()
	// Debian's python3-nbconvert is jupyter-nbconvert without the
	// jupyter-nbconvert command, so it is run as a module.
	py := testenv.NeedPythonModule(t, "nbconvert", "Debian: apt-get install python3-nbconvert")
	e := newEnv(t)
	// Each value is computed, so that its text is not in the cell's source.
	e.must(0, "exec", "nb", `print("str" + "eam-" * 2)`)
	e.must(0, "exec", "nb", `"val" + "ue-" * 2`)
	e.must(1, "exec", "nb", `def f():
    raise ValueError("err" + "or-" * 2)
f()`)
	path := filepath.Join(e.home, "nb.ipynb")
	e.must(0, "export", "nb", "--format", "ipynb", "-o", path)

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		Cells []struct {
			Outputs []map[string]any `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(raw, &nb); err != nil {
		t.Fatalf("the export is not JSON: %v", err)
	}
	var result, failure map[string]any
	for _, c := range nb.Cells {
		for _, o := range c.Outputs {
			switch o["output_type"] {
			case "execute_result":
				result = o
			case "error":
				failure = o
			}
		}
	}
	if result == nil || failure == nil {
		t.Fatalf("the export lacks an execute_result or an error output:\n%s", raw)
	}
	if text, _ := json.Marshal(result["data"]); string(text) != `{"text/plain":["'value-ue-'"]}` {
		t.Errorf("execute_result data %s, want the value alone, without the Out[n]: prompt", text)
	}
	if failure["ename"] != "ValueError" || failure["evalue"] != "error-or-" {
		t.Errorf("error output: ename %v, evalue %v; want ValueError, error-or-", failure["ename"], failure["evalue"])
	}
	tb, _ := failure["traceback"].([]any)
	if len(tb) < 3 {
		t.Errorf("traceback %v: want it as a list of its lines", failure["traceback"])
	}
	for _, l := range tb {
		if s, _ := l.(string); strings.Contains(s, "\n") {
			t.Errorf("traceback line %q holds a newline: nbformat's lines are joined with one", s)
		}
	}

	out, err := exec.Command(py, "-m", "nbconvert", "--to", "markdown", "--stdout", path).Output()
	if err != nil {
		t.Fatalf("python3 -m nbconvert --to markdown: %v", err)
	}
	md := string(out)
	for _, v := range []string{"stream-eam-", "'value-ue-'", "Traceback (most recent call last):", "ValueError: error-or-"} {
		if n := strings.Count(md, v); n != 1 {
			t.Errorf("%q appears %d times in nbconvert's Markdown, want once:\n%s", v, n, md)
		}
	}
	wantLacks(t, "nbconvert's Markdown", md, "Out[")
}
