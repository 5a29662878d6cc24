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

// readme returns the README, from the module root.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatalf("reading the README: %v", err)
	}
	return string(b)
}

// section returns the README's text from the line starting with from up to
// the next line starting with to.
func section(t *testing.T, text, from, to string) string {
	t.Helper()
	i := strings.Index(text, "\n"+from)
	if i < 0 {
		t.Fatalf("the README has no %q", from)
	}
	rest := text[i+1:]
	if j := strings.Index(rest[len(from):], "\n"+to); j >= 0 {
		return rest[:len(from)+j]
	}
	return rest
}

// The README's Commands block gives every command with the synopsis
// `polyrepl help` gives it, and no command the binary lacks. (--label,
// which every command takes, may be shown on any.)
func TestReadmeSynopses(t *testing.T) {
	block := section(t, readme(t), "## Commands", "```\n\n")
	inReadme := map[string]string{}
	for _, line := range strings.Split(block, "\n") {
		rest, ok := strings.CutPrefix(line, "polyrepl ")
		if !ok {
			continue
		}
		for _, syn := range strings.Split(rest, " | ") {
			syn = strings.ReplaceAll(syn, " [--label NAME]", "")
			name, _, _ := strings.Cut(syn, " ")
			if name == "--version" {
				continue
			}
			inReadme[name] = syn
		}
	}
	for _, c := range commands {
		got, ok := inReadme[c.name]
		switch {
		case !ok:
			t.Errorf("the README's Commands block lacks %s: add the line `polyrepl %s`", c.name, c.usage())
		case got != c.usage():
			t.Errorf("the README's Commands block has `polyrepl %s`; the binary's synopsis is `polyrepl %s`: make them agree", got, c.usage())
		}
		delete(inReadme, c.name)
	}
	for name := range inReadme {
		t.Errorf("the README's Commands block lists %q, which the binary does not have", name)
	}
}

// The README's MCP paragraph names every tool the server offers, with
// every argument of each, and counts them right.
func TestReadmeMCPTools(t *testing.T) {
	text := section(t, readme(t), "## For agents", "Build the binary")
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
	count := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	if n := len(res.Tools); n < len(count) && !strings.Contains(text, "with "+count[n]+" tools") {
		t.Errorf("the README's MCP paragraph does not say the server has %s tools", count[n])
	}
	for _, tool := range res.Tools {
		if !strings.Contains(text, "`"+tool.Name+"`") {
			t.Errorf("the README's MCP paragraph does not name the tool %s", tool.Name)
		}
		schema, _ := tool.InputSchema.(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		for p := range props {
			if !strings.Contains(text, "`"+p+"`") {
				t.Errorf("the README's MCP paragraph does not give the %s tool's argument %s", tool.Name, p)
			}
		}
	}
}

// The README's per-client MCP recipes are `polyrepl setup CLIENT`, for
// every client setup knows.
func TestReadmeSetupRecipes(t *testing.T) {
	text := section(t, readme(t), "## For agents", "## Working together")
	var names []string
	for _, m := range regexp.MustCompile("polyrepl setup ([a-z-]+)").FindAllStringSubmatch(text, -1) {
		names = append(names, m[1])
	}
	out, _, _ := run("help", "setup")
	for _, line := range strings.Split(out[strings.Index(out, "\nClients:\n"):], "\n")[2:] {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		if name != "" && !slices.Contains(names, name) {
			t.Errorf("the README's MCP section has no `polyrepl setup %s` recipe", name)
		}
	}
}
