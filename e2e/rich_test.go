package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFigures: a matplotlib figure drawn in a cell, shown or not, is
// saved at full size as a PNG the reply names in one line, closed after,
// and kept by the record, which history shows.
func TestFigures(t *testing.T) {
	needPython(t)
	if err := exec.Command(python, "-c", "import matplotlib").Run(); err != nil {
		t.Skipf("%s has no matplotlib (Debian: python3-matplotlib)", python)
	}
	t.Parallel()
	e := newEnv(t)
	out := e.mustSeen(0, "exec", "plots", "import matplotlib.pyplot as plt\nplt.plot([1, 4, 9])\nplt.figure(figsize=(3, 2))\nplt.plot([2, 1])\nplt.show()")
	m := regexp.MustCompile(`\[image (\d): (\d+)×(\d+) PNG, \d+ KB → (\S+)\]`).FindAllStringSubmatch(out, -1)
	if len(m) != 2 || m[0][2] != "640" || m[0][3] != "480" || m[1][2] != "300" || m[1][3] != "200" {
		t.Fatalf("want two figures told, 640×480 and 300×200:\n%s", out)
	}
	for _, x := range m {
		f, err := os.Open(x[4])
		if err != nil {
			t.Fatalf("figure file: %v", err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width == 0 {
			t.Errorf("%s is not a PNG: %v", x[4], err)
		}
	}
	// Shown figures are closed: the next cell shows none.
	out = e.mustSeen(0, "exec", "plots", "len(plt.get_fignums())")
	wantContains(t, "after the figures were shown", out, "Out[2]: 0")
	wantLacks(t, "after the figures were shown", out, "[image")
	hist, _ := e.must(0, "history", "plots", "2")
	wantContains(t, "history of the figures' cell", hist, "[image 1: 640×480 PNG", m[0][4], m[1][4])

	// Values and display() arguments with rich forms come through as a
	// notebook shows them: a PIL image as a PNG, an object's HTML as HTML;
	// one without prints its repr.
	if exec.Command(python, "-c", "import PIL").Run() == nil {
		out = e.mustSeen(0, "exec", "plots", "from PIL import Image\nImage.new('RGB', (64, 32), 'red')")
		wantContains(t, "a PIL image value", out, "Out[3]: <PIL.Image.Image image mode=RGB size=64x32", "[image 1: 64×32 PNG, ")
	}
	out = e.mustSeen(0, "exec", "plots", "class Table:\n    def _repr_html_(self): return '<table><tr><td>1</td></tr></table>'\ndisplay(Table(), 'plain')")
	wantContains(t, "display()", out, "[HTML 1: ", "'plain'")
	html := regexp.MustCompile(`\[HTML 1: [^→]+→ (\S+)\]`).FindStringSubmatch(out)
	if b, err := os.ReadFile(html[1]); err != nil || string(b) != "<table><tr><td>1</td></tr></table>" {
		t.Errorf("the HTML file %s: %q, %v", html[1], b, err)
	}

	// A pandas DataFrame value keeps its text table as the value and
	// comes with its HTML table.
	if exec.Command(python, "-c", "import pandas").Run() == nil {
		out = e.mustSeen(0, "exec", "plots", "import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': [3, 4]})")
		wantContains(t, "a DataFrame value", out, "   a  b\n0  1  3", "[HTML 1: ")
	}

	// The notebook export embeds the figures as display_data and the
	// image value within its execute_result, as Jupyter does: valid
	// nbformat, and Jupyter's HTML conversion shows them.
	nbPath := filepath.Join(e.home, "plots.ipynb")
	e.must(0, "export", "plots", "--format", "ipynb", "-o", nbPath)
	if exec.Command(python, "-c", "import nbformat").Run() == nil {
		check := "import nbformat, sys; nb = nbformat.read(sys.argv[1], as_version=4); nbformat.validate(nb); " +
			"print(sum(1 for c in nb.cells if c.cell_type == 'code' for o in c.outputs if o.output_type in ('display_data', 'execute_result') and 'image/png' in o.data))"
		got, err := exec.Command(python, "-c", check, nbPath).CombinedOutput()
		if n, _ := strconv.Atoi(strings.TrimSpace(string(got))); err != nil || n < 3 {
			t.Errorf("the notebook export: %v: %s (want valid nbformat with 3 PNG outputs at least: two figures' display_data, the PIL value's execute_result)", err, got)
		}
	}
	if exec.Command(python, "-c", "import nbconvert").Run() == nil {
		htmlOut, err := exec.Command(python, "-m", "nbconvert", "--to", "html", "--stdout", nbPath).Output()
		if err != nil || strings.Count(string(htmlOut), "data:image/png;base64,") < 3 {
			t.Errorf("nbconvert --to html: %v; %d images shown, want 3", err, strings.Count(string(htmlOut), "data:image/png;base64,"))
		}
	}

	// The Markdown export writes the images beside the file and links
	// them relatively.
	mdPath := filepath.Join(e.home, "plots.md")
	e.must(0, "export", "plots", "-o", mdPath)
	md, _ := os.ReadFile(mdPath)
	links := regexp.MustCompile(`!\[(?:image \d|the value as image/png)\]\((plots_files/[^)]+\.png)\)`).FindAllStringSubmatch(string(md), -1)
	if len(links) < 3 {
		t.Fatalf("the Markdown export links %d images beside it, want 3:\n%s", len(links), md)
	}
	for _, l := range links {
		if _, err := os.Stat(filepath.Join(e.home, l[1])); err != nil {
			t.Errorf("linked image %s: %v", l[1], err)
		}
	}
}

// TestTypeScriptClientSeesTheFigure: through the official TypeScript
// SDK's Client and StdioClientTransport (its stripped environment plus
// the test's world), a figure comes back as an image block that decodes
// to a 640×480 PNG, and the structured content lists it with its file.
// The SDK comes from the npm registry at install time (.ci/run puts it
// in $POLYREPL_TEST_MCP_SDK, a node_modules directory).
func TestTypeScriptClientSeesTheFigure(t *testing.T) {
	needPython(t)
	sdk := os.Getenv("POLYREPL_TEST_MCP_SDK")
	if _, err := exec.LookPath("node"); err != nil || sdk == "" {
		t.Skip("needs node and the TypeScript MCP SDK: set POLYREPL_TEST_MCP_SDK to a node_modules holding @modelcontextprotocol/sdk (.ci/run does)")
	}
	if err := exec.Command(python, "-c", "import matplotlib").Run(); err != nil {
		t.Skipf("%s has no matplotlib (Debian: python3-matplotlib)", python)
	}
	t.Parallel()
	e := newEnv(t)
	script, _ := filepath.Abs("testdata/tsclient/plot.mjs")
	cmd := exec.Command("node", append([]string{script, sdk, e.bin}, e.vars...)...)
	cmd.Dir = e.home
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the TypeScript client: %v\n%s", err, out)
	}
	var got struct {
		IsError bool `json:"isError"`
		Images  []struct {
			MimeType      string `json:"mimeType"`
			PNG           bool   `json:"png"`
			Width, Height int
		} `json:"images"`
		Rich []struct {
			MIME string `json:"mime"`
			File string `json:"file"`
		} `json:"rich"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.IsError || len(got.Images) != 1 || !got.Images[0].PNG || got.Images[0].Width != 640 || got.Images[0].Height != 480 {
		t.Errorf("want one 640×480 PNG image block: %s", out)
	}
	if len(got.Rich) != 1 || got.Rich[0].MIME != "image/png" || got.Rich[0].File == "" {
		t.Errorf("structured content's rich outputs: %+v", got.Rich)
	}
	wantContains(t, "the text", got.Text, "[image 1: 640×480 PNG")
}

// TestGnuplotPlots: a gnuplot cell's plot comes back as a 640×480 PNG
// without the user choosing a terminal; a terminal the user chooses is
// theirs from then on.
func TestGnuplotPlots(t *testing.T) {
	if _, err := exec.LookPath("gnuplot"); err != nil {
		t.Skip("needs gnuplot (Debian: gnuplot-nox)")
	}
	t.Parallel()
	e := newEnv(t)
	out := e.mustSeen(0, "exec", "gp", "--runtime", "gnuplot", "plot sin(x)")
	m := regexp.MustCompile(`\[image 1: 640×480 PNG, \d+ KB → (\S+)\]`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no 640×480 PNG told:\n%s", out)
	}
	f, err := os.Open(m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if cfg, err := png.DecodeConfig(f); err != nil || cfg.Width != 640 {
		t.Errorf("%s: %v %+v", m[1], err, cfg)
	}
	out = e.mustSeen(0, "exec", "gp", "a = 1")
	wantLacks(t, "a cell that draws nothing", out, "[image")
	out = e.mustSeen(0, "exec", "gp", "set terminal dumb; plot cos(x)")
	wantLacks(t, "a cell that chose its terminal", out, "[image")
	wantContains(t, "the dumb terminal's plot", out, "+----")
	out = e.mustSeen(0, "exec", "gp", "plot x")
	wantLacks(t, "after the user chose a terminal", out, "[image")
}

// TestRPlots: an R cell's base graphics and printed ggplot values come
// back as 640×480 PNGs, one a page, without the user opening a device.
func TestRPlots(t *testing.T) {
	if _, err := exec.LookPath("R"); err != nil {
		t.Skip("needs R (Debian: r-base-core)")
	}
	t.Parallel()
	e := newEnv(t)
	out := e.mustSeen(0, "exec", "rp", "--runtime", "r", "plot(1:10); hist(c(1, 2, 2, 3)); 42")
	wantContains(t, "two base plots", out, "[1] 42", "[image 1: 640×480 PNG", "[image 2: 640×480 PNG")
	for _, m := range regexp.MustCompile(`→ (\S+\.png)\]`).FindAllStringSubmatch(out, -1) {
		f, err := os.Open(m[1])
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != 640 || cfg.Height != 480 {
			t.Errorf("%s: %v %+v", m[1], err, cfg)
		}
	}
	out = e.mustSeen(0, "exec", "rp", "x <- 1")
	wantLacks(t, "a cell that draws nothing", out, "[image")
	if exec.Command("Rscript", "-e", "library(ggplot2)").Run() == nil {
		out = e.mustSeen(0, "exec", "rp", "library(ggplot2); ggplot(data.frame(a = 1:3, b = c(2, 1, 3)), aes(a, b)) + geom_line()")
		wantContains(t, "a printed ggplot", out, "[image 1: 640×480 PNG")
	}
}

// TestOctavePlots: an Octave cell's figure comes back as a 640×480 PNG
// and is closed after.
func TestOctavePlots(t *testing.T) {
	if _, err := exec.LookPath("octave-cli"); err != nil {
		t.Skip("needs octave-cli (Debian: octave)")
	}
	if _, err := exec.LookPath("gnuplot"); err != nil {
		t.Skip("Octave draws through gnuplot here: needs gnuplot (Debian: gnuplot-nox)")
	}
	if _, err := os.Stat("/usr/share/fonts/opentype/freefont"); err != nil {
		t.Skip("Octave cannot draw text without fonts: needs fonts-freefont-otf")
	}
	t.Parallel()
	e := newEnv(t)
	out := e.mustSeen(0, "exec", "oc", "--runtime", "octave", "plot(1:10); x = 3")
	wantContains(t, "an Octave figure", out, "x = 3", "[image 1: 640×480 PNG")
	out = e.mustSeen(0, "exec", "oc", "disp(numel(get(0, 'children')))")
	wantContains(t, "after the figure was shown", out, "0")
	wantLacks(t, "a cell that draws nothing", out, "[image")
}

// TestIPythonFigures: IPython sessions show figures, rich values and
// display() as notebooks do.
func TestIPythonFigures(t *testing.T) {
	needPython(t)
	if err := exec.Command(python, "-c", "import IPython, matplotlib").Run(); err != nil {
		t.Skipf("%s has no IPython or matplotlib (Debian: ipython3, python3-matplotlib)", python)
	}
	t.Parallel()
	e := newEnv(t)
	out := e.mustSeen(0, "exec", "ipy", "--runtime", "ipython", "import matplotlib.pyplot as plt\nplt.plot([1, 2]);")
	wantContains(t, "an IPython figure", out, "[image 1: 640×480 PNG")
	out = e.mustSeen(0, "exec", "ipy", "from IPython.display import display, HTML\ndisplay(HTML('<b>x</b>'), 3)")
	wantContains(t, "IPython's display()", out, "[HTML 1: ", "3")
}

// TestFiguresBounded: a cell that draws 500 figures keeps 20, counts the
// rest and says so; a 50-megapixel image is kept whole for people and
// reaches a model scaled down within its bounds; the session stays
// usable.
func TestFiguresBounded(t *testing.T) {
	needPython(t)
	if err := exec.Command(python, "-c", "import matplotlib, PIL").Run(); err != nil {
		t.Skipf("%s has no matplotlib or PIL (Debian: python3-matplotlib, python3-pil)", python)
	}
	t.Parallel()
	e := newEnv(t)
	out := e.mustSeen(0, "exec", "many", "-t", "300", "import matplotlib.pyplot as plt\nfor i in range(500):\n    plt.figure(figsize=(1, 1)); plt.plot([i, 0])")
	if n := strings.Count(out, "[image "); n != 20 {
		t.Errorf("a cell drawing 500 figures told %d images, want 20:\n%s", n, clip(out))
	}
	wantContains(t, "500 figures", out, "[and 480 more figures not kept: a cell keeps at most 20]")
	if r := e.runJSON("exec", "many", "len(plt.get_fignums())"); r.Value != "0" {
		t.Errorf("after 500 figures: %v", r)
	}

	out = e.mustSeen(0, "exec", "many", "from PIL import Image\nImage.new('RGB', (10000, 5000), 'navy')")
	m := regexp.MustCompile(`\[image 1: 10000×5000 PNG, \d+ KB → (\S+)\]`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("a 50-megapixel image is not told with its size:\n%s", out)
	}
	f, err := os.Open(m[1])
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(f)
	f.Close()
	if err != nil || cfg.Width != 10000 || cfg.Height != 5000 {
		t.Errorf("the kept file %s: %dx%d (%v), want the whole 10000x5000", m[1], cfg.Width, cfg.Height, err)
	}
	agent := e.startMCP()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	res, err := agent.cs.CallTool(ctx, &mcp.CallToolParams{Name: "exec", Arguments: map[string]any{"session": "many", "code": "Image.new('RGB', (10000, 5000), 'teal')"}})
	if err != nil || res.IsError {
		t.Fatalf("the image through MCP: %v %s", err, toolText(res))
	}
	var sent int
	for _, c := range res.Content {
		ic, ok := c.(*mcp.ImageContent)
		if !ok {
			continue
		}
		sent++
		img, _, err := image.DecodeConfig(bytes.NewReader(ic.Data))
		if err != nil || max(img.Width, img.Height) > 1568 || len(ic.Data) > 300<<10 {
			t.Errorf("the image block: %dx%d, %d bytes (%v); want at most 1,568 pixels on the long side and 300 KB", img.Width, img.Height, len(ic.Data), err)
		}
	}
	if sent != 1 {
		t.Errorf("%d image blocks, want 1", sent)
	}
	if r := e.runJSON("exec", "many", "6 * 7"); r.Value != "42" {
		t.Errorf("the session after: %v", r)
	}
}
