package view

import (
	"strings"
	"testing"
)

// TestAppHTMLIsOneDocument: the app's page carries its style and both
// scripts inline, the MCP transport in place of the page's, and names
// nothing to load (an MCP App's document is one resource).
func TestAppHTMLIsOneDocument(t *testing.T) {
	html := AppHTML()
	for _, want := range []string{`<body data-mode="app">`, "window.polyreplTransport", `"ui/initialize"`, `mode: "app"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the app's page lacks %q", want)
		}
	}
	for _, lacks := range []string{`src="`, `href="/`, `<link`} {
		if strings.Contains(html, lacks) {
			t.Errorf("the app's page has %q: it would load something", lacks)
		}
	}
	if n := strings.Count(html, "<script>"); n != 2 || strings.Count(html, "</script>") != 2 {
		t.Errorf("the app's page has %d inline scripts, want 2 each closed once", n)
	}
}
