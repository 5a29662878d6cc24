// Package view is the page people watch and drive sessions from: every
// session, one session's record live with its figures, and the actions a
// person takes (run a cell, interrupt, answer, restart, kill, export).
// `polyrepl view` serves it on loopback with a token (server.go); the
// MCP server offers the same page, for one session, to agent clients that
// show MCP Apps (AppHTML). The page is plain HTML, CSS and JavaScript
// embedded in the binary: nothing to build, nothing loaded from anywhere
// else. Its script talks to one transport object (window.polyreplTransport,
// described at the top of assets/view.js): page-transport.js speaks to
// this package's server over fetch and server-sent events,
// mcp-transport.js to an MCP App host over postMessage.
package view

import (
	"embed"
	"strings"
)

// How is how the page's requests reach a session, in the record and in
// what other clients are told ("alice via view").
const How = "view"

//go:embed assets
var assets embed.FS

// asset is one embedded file's text; the files are part of the binary,
// so a missing one is a build defect, not a runtime condition.
func asset(name string) string {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		panic("view: embedded asset missing: " + name)
	}
	return string(b)
}

// AppHTML is the view as an MCP App (a ui:// resource of type
// text/html;profile=mcp-app): the page's HTML with its style and scripts
// inline, since an app's document is one resource and loads nothing, and
// with the MCP transport in place of the page's.
func AppHTML() string {
	html := asset("view.html")
	html = strings.Replace(html, `<body data-mode="page">`, `<body data-mode="app">`, 1)
	html = strings.Replace(html, "<link rel=\"icon\" href=\"data:,\">\n", "", 1) // an app has no tab of its own
	html = strings.Replace(html, `<link rel="stylesheet" href="/assets/view.css">`,
		"<style>\n"+asset("view.css")+"</style>", 1)
	html = strings.Replace(html, `<script src="/assets/page-transport.js"></script>`,
		"<script>\n"+inlineSafe(asset("mcp-transport.js"))+"</script>", 1)
	html = strings.Replace(html, `<script src="/assets/view.js"></script>`,
		"<script>\n"+inlineSafe(asset("view.js"))+"</script>", 1)
	return html
}

// inlineSafe keeps a script's text from ending its <script> element early.
func inlineSafe(js string) string {
	return strings.ReplaceAll(js, "</script", `<\/script`)
}
