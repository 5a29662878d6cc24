package cli

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/client"
	pmcp "github.com/polyrepl/polyrepl/internal/mcp"
)

// doc returns a document of the module by its path from the module root
// ("README.md", "docs/cli.md").
func doc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile("../../" + path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return string(b)
}

// readme returns the README, from the module root.
func readme(t *testing.T) string { return doc(t, "README.md") }

// section returns text from the line starting with from up to the next
// line starting with to; name says which document, for the failure.
func section(t *testing.T, name, text, from, to string) string {
	t.Helper()
	i := strings.Index("\n"+text, "\n"+from)
	if i < 0 {
		t.Fatalf("%s has no line starting %q", name, from)
	}
	rest := text[i:]
	if j := strings.Index(rest[len(from):], "\n"+to); j >= 0 {
		return rest[:len(from)+j]
	}
	return rest
}

// The README is what a newcomer reads in five minutes, and its first two
// commands are the ones CI and people run: build-and-run, then the tests.
func TestReadmeShortAndFirstCommands(t *testing.T) {
	text := readme(t)
	if n := strings.Count(text, "\n"); n >= 250 {
		t.Errorf("the README has %d lines; keep it under 250 and move reference text to docs/", n)
	}
	var cmds []string
	for _, line := range strings.Split(text, "\n") {
		if c, ok := strings.CutPrefix(line, "    "); ok && len(cmds) < 2 {
			cmds = append(cmds, c)
		}
	}
	want := []string{
		"CGO_ENABLED=0 go build -o polyrepl ./cmd/polyrepl && ./polyrepl exec demo 'import sys; sys.version'",
		"go test -timeout 30m ./...",
	}
	if !slices.Equal(cmds, want) {
		t.Errorf("the README's first two commands are %q; want %q (CI runs the second)", cmds, want)
	}
}

// mcpTools lists the tools the MCP server offers, as a client sees them.
func mcpTools(t *testing.T) []*mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := pmcp.New(client.New(), "/", nil).Connect(ctx, st); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "readme-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

var counted = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}

// docs/mcp.md's Tools section counts the tools right and names every
// tool with every argument of each; the README's agent section counts
// and names them too.
func TestDocsMCPTools(t *testing.T) {
	tools := mcpTools(t)
	mcpDoc := section(t, "docs/mcp.md", doc(t, "docs/mcp.md"), "## Tools", "## ")
	agents := section(t, "README.md", readme(t), "## Give it to an agent", "## ")
	n := len(tools)
	if n < len(counted) {
		if !strings.Contains(mcpDoc, "with "+counted[n]+" tools") {
			t.Errorf("docs/mcp.md's Tools section does not say the server has %s tools (\"with %s tools\")", counted[n], counted[n])
		}
		if !strings.Contains(agents, counted[n]+" tools") {
			t.Errorf("the README's agent section does not say the agent gets %s tools", counted[n])
		}
	}
	for _, tool := range tools {
		if !strings.Contains(mcpDoc, "`"+tool.Name+"`") {
			t.Errorf("docs/mcp.md's Tools section does not name the tool %s", tool.Name)
		}
		if !strings.Contains(agents, "`"+tool.Name+"`") {
			t.Errorf("the README's agent section does not name the tool %s", tool.Name)
		}
		schema, _ := tool.InputSchema.(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		for p := range props {
			if !strings.Contains(mcpDoc, "`"+p+"`") {
				t.Errorf("docs/mcp.md's Tools section does not give the %s tool's argument %s", tool.Name, p)
			}
		}
	}
}

// docs/mcp.md's recipes, and the README's agent section, give `polyrepl
// setup CLIENT` for every client setup knows.
func TestDocsSetupRecipes(t *testing.T) {
	out, _, _ := run("help", "setup")
	i := strings.Index(out, "\nClients:\n")
	if i < 0 {
		t.Fatalf("help setup lists no clients:\n%s", out)
	}
	var clients []string
	for _, line := range strings.Split(out[i:], "\n")[2:] {
		if name, _, _ := strings.Cut(strings.TrimSpace(line), " "); name != "" {
			clients = append(clients, name)
		}
	}
	for _, d := range []struct{ name, text string }{
		{"docs/mcp.md's recipes", section(t, "docs/mcp.md", doc(t, "docs/mcp.md"), "## Each client's recipe", "## ")},
		{"the README's agent section lines", section(t, "README.md", readme(t), "## Give it to an agent", "## ")},
	} {
		var names []string
		for _, m := range regexp.MustCompile("polyrepl setup ([a-z-]+)").FindAllStringSubmatch(d.text, -1) {
			names = append(names, m[1])
		}
		for _, c := range clients {
			if !slices.Contains(names, c) {
				t.Errorf("%s lack `polyrepl setup %s`: add it", d.name, c)
			}
		}
	}
}
