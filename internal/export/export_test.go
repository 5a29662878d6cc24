package export

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

func TestFence(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"print(1)", "```"},
		{"a ``` b", "````"},
		{"````` x `", "``````"},
	} {
		if got := fence(c.in); got != c.want {
			t.Errorf("fence(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNotebookLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", []string{}},
		{"a", []string{"a"}},
		{"a\nb\n", []string{"a\n", "b\n"}},
		{"a\n\nb", []string{"a\n", "\n", "b"}},
	} {
		if got := nbLines(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("nbLines(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := tracebackLines("T\n  at x\n\n"); !reflect.DeepEqual(got, []string{"T", "  at x"}) {
		t.Errorf("tracebackLines: %q", got)
	}
}

func TestValueRich(t *testing.T) {
	e := api.Entry{Display: "Out[1]: 42", Prompt: "Out[1]: ", Rich: []api.Rich{{MIME: "image/png", Text: "<Figure>"}, {MIME: "text/html", Text: "42\n"}}}
	if got := valueRich(e); got != 1 {
		t.Errorf("valueRich = %d, want 1 (the HTML whose text is the value)", got)
	}
	e.Display = ""
	if got := valueRich(e); got != -1 {
		t.Errorf("valueRich without a value = %d, want -1", got)
	}
}

// record is a small record: a created note, a cell with output, a value
// and a figure, a cell that raised, idle output.
func record(t *testing.T) api.RecordReply {
	dir := t.TempDir()
	png := filepath.Join(dir, "fig.png")
	if err := os.WriteFile(png, []byte("\x89PNG fake"), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	end := at.Add(1500 * time.Millisecond)
	return api.RecordReply{Session: "s", Next: 5, Entries: []api.Entry{
		{Seq: 1, ID: "s#1", Kind: api.EntryNote, Session: "s", Text: "created", Started: at},
		{Seq: 2, ID: "s#2", Kind: api.EntryCell, Session: "s", Runtime: "python", Cell: 1, Who: "alice", How: "view",
			Code: "print('hi')\n42", Output: "hi\n", Display: "Out[1]: 42", Prompt: "Out[1]: ", Status: api.StatusDone,
			Rich:    []api.Rich{{MIME: "image/png", Width: 64, Height: 48, File: png, Bytes: 9}, {MIME: "image/png", File: filepath.Join(dir, "gone.png")}},
			Started: at, Ended: &end},
		{Seq: 3, ID: "s#3", Kind: api.EntryCell, Session: "s", Runtime: "python", Cell: 2, Code: "1/0", Status: api.StatusError,
			Error: &api.CellError{Type: "ZeroDivisionError", Message: "division by zero", Traceback: "Traceback:\n  line 1\nZeroDivisionError: division by zero"}, Started: at},
		{Seq: 4, ID: "s#4", Kind: api.EntryIdle, Session: "s", Output: "tick\n", Started: at},
	}}
}

func TestMarkdown(t *testing.T) {
	r := record(t)
	var b bytes.Buffer
	Markdown(&b, r, func(x api.Rich) string { return "files/" + filepath.Base(x.File) })
	md := b.String()
	for _, want := range []string{
		"# Session `s`", "## s#2 · cell 1", "alice via view", "**done** after 1.5s",
		"```python\nprint('hi')\n42\n```", "Output:\n\n```text\nhi\n```", "![image 1](files/fig.png)",
		"Value:\n\n```text\nOut[1]: 42\n```", "## s#3 · cell 2", "someone via unknown", "ZeroDivisionError",
		"## s#4 · printed while no cell ran", "## s#1 · note",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestNotebook(t *testing.T) {
	r := record(t)
	var b bytes.Buffer
	if err := Notebook(&b, r); err != nil {
		t.Fatal(err)
	}
	var nb struct {
		NBFormat int `json:"nbformat"`
		Minor    int `json:"nbformat_minor"`
		Metadata struct {
			Kernelspec map[string]any `json:"kernelspec"`
		} `json:"metadata"`
		Cells []struct {
			Type    string           `json:"cell_type"`
			ID      string           `json:"id"`
			Source  []string         `json:"source"`
			Count   *int             `json:"execution_count"`
			Outputs []map[string]any `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b.Bytes(), &nb); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.String())
	}
	if nb.NBFormat != 4 || nb.Minor != 5 || nb.Metadata.Kernelspec["name"] != "python3" {
		t.Errorf("nbformat %d.%d, kernelspec %v", nb.NBFormat, nb.Minor, nb.Metadata.Kernelspec)
	}
	if len(nb.Cells) != 4 {
		t.Fatalf("%d cells, want 4: %s", len(nb.Cells), b.String())
	}
	c := nb.Cells[1]
	if c.Type != "code" || c.ID != "entry-2" || c.Count == nil || *c.Count != 1 || strings.Join(c.Source, "") != "print('hi')\n42" {
		t.Errorf("cell 2: %+v", c)
	}
	var kinds []string
	for _, o := range c.Outputs {
		kinds = append(kinds, o["output_type"].(string))
	}
	if want := []string{"stream", "display_data", "display_data", "execute_result"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("outputs %v, want %v", kinds, want)
	}
	if data := c.Outputs[1]["data"].(map[string]any); data["image/png"] != base64.StdEncoding.EncodeToString([]byte("\x89PNG fake")) {
		t.Errorf("the figure is not its file's bytes in base64: %v", data)
	}
	if data := c.Outputs[2]["data"].(map[string]any); !strings.Contains(strings.Join(toStrings(data["text/plain"]), ""), "could not be read") {
		t.Errorf("a figure whose file is gone does not say so: %v", data)
	}
	if o := nb.Cells[2].Outputs; len(o) != 1 || o[0]["output_type"] != "error" || o[0]["ename"] != "ZeroDivisionError" {
		t.Errorf("the error cell's outputs: %v", o)
	}
	if nb.Cells[0].Type != "markdown" || nb.Cells[3].Type != "markdown" {
		t.Errorf("the note and the idle output are not Markdown cells: %s, %s", nb.Cells[0].Type, nb.Cells[3].Type)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
