package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/view"
)

// The view as an MCP App (the MCP Apps extension): a client that shows
// apps renders the session an exec, wait or sessions call was about
// beside the conversation, live. The server serves the view's page as a
// ui:// resource, points those three tools at it in their _meta, and
// offers the tools the page needs to follow a session (view_events,
// view_rich), marked for the app alone. All of it only for a client
// whose initialize declared the extension: any other sees the tools,
// the capabilities and the replies of a server without it, character
// for character.
const (
	// AppExtension is the MCP Apps extension's identifier.
	AppExtension = "io.modelcontextprotocol/ui"
	// AppURI is the view's resource.
	AppURI = "ui://polyrepl/view"
	// AppMIME is the type of an MCP App's HTML.
	AppMIME = "text/html;profile=mcp-app"
)

// appTools are the tools only the app calls (their _meta says so, and
// hosts keep them from the model); a client without the extension is
// not offered them.
var appTools = []mcp.Tool{
	{
		Name:        "view_events",
		Description: "The view's follow of one session's record: the events after a seq (entries, output as it prints, ends), waiting up to wait seconds for the first new one. For the polyrepl app, not the model.",
		Annotations: &mcp.ToolAnnotations{Title: "Follow a session's record (view)", ReadOnlyHint: true, OpenWorldHint: boolp(false)},
	},
	{
		Name:        "view_glance",
		Description: "One session's state for the polyrepl app, not the model: idle or running, the running cell and the question it asks.",
		Annotations: &mcp.ToolAnnotations{Title: "A session's state (view)", ReadOnlyHint: true, OpenWorldHint: boolp(false)},
	},
	{
		Name:        "view_act",
		Description: "What the person does in the polyrepl app, not the model: interrupt the running cell, or answer its question; recorded as the person's.",
		Annotations: &mcp.ToolAnnotations{Title: "Interrupt or answer (view)", DestructiveHint: boolp(false), OpenWorldHint: boolp(false)},
	},
	{
		Name:        "view_rich",
		Description: "One rich output (a figure, an SVG, an HTML table) of a record's entry, as data for the polyrepl app, not the model.",
		Annotations: &mcp.ToolAnnotations{Title: "A figure of the record (view)", ReadOnlyHint: true, OpenWorldHint: boolp(false)},
	},
}

// appLinked are the tools whose calls a host shows the view beside.
var appLinked = map[string]bool{"exec": true, "wait": true, "sessions": true}

// appTool returns a copy of an app tool's declaration.
func appTool(name string) *mcp.Tool {
	for _, t := range appTools {
		if t.Name == name {
			return &t
		}
	}
	panic(fmt.Sprintf("mcp: no app tool %q is declared", name))
}

// isAppTool says whether name is one of appTools.
func isAppTool(name string) bool {
	return slices.ContainsFunc(appTools, func(t mcp.Tool) bool { return t.Name == name })
}

// addApp registers the view's resource and the app's tools, and the
// middleware that shows them only to a client with the extension.
func (s *Server) addApp() {
	s.server.AddResource(&mcp.Resource{
		URI:         AppURI,
		Name:        "polyrepl-view",
		Title:       "polyrepl: a session live",
		Description: "The session a tool call was about, live: its cells, their output as it prints, figures; interrupt and answer from it.",
		MIMEType:    AppMIME,
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: AppURI, MIMEType: AppMIME, Text: view.AppHTML(),
			Meta: mcp.Meta{"ui": map[string]any{"prefersBorder": true}},
		}}}, nil
	})
	addTool(s, appTool("view_events"), s.viewEvents)
	addTool(s, appTool("view_rich"), s.viewRich)
	addTool(s, appTool("view_glance"), s.viewGlance)
	addTool(s, appTool("view_act"), s.viewAct)
	s.server.AddReceivingMiddleware(s.appMiddleware)
}

// appSettings is what the server says of the extension: the type of
// the resources it serves.
var appSettings = map[string]any{"mimeTypes": []string{AppMIME}}

// showsApps says whether the client of session ss declared the MCP Apps
// extension in its initialize.
func showsApps(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	return declaresApps(ss.InitializeParams())
}

func declaresApps(p *mcp.InitializeParams) bool {
	if p == nil || p.Capabilities == nil {
		return false
	}
	ext, ok := p.Capabilities.Extensions[AppExtension]
	if !ok {
		return false
	}
	// A client names the types it renders; one that names some must name
	// this one. One that sends {} shows apps of the one type there is.
	var settings struct {
		MIMETypes []string `json:"mimeTypes"`
	}
	if b, err := json.Marshal(ext); err == nil {
		json.Unmarshal(b, &settings)
	}
	return settings.MIMETypes == nil || slices.Contains(settings.MIMETypes, AppMIME)
}

// appMiddleware makes the server an MCP App server for a client with the
// extension and leaves every reply to any other as it was: initialize
// (or discovery) declares the extension (and the resources capability the view's
// resource brings) only to the first; tools/list gives it the _meta
// linking exec, wait and sessions to the view and the app's own tools,
// and hides those from the rest (and knownTools refuses their calls).
func (s *Server) appMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize", "server/discover":
			// Where a client learns the server's capabilities: the
			// handshake before 2026-07-28, discovery after.
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			p, _ := req.GetParams().(*mcp.InitializeParams)
			if ss, _ := req.GetSession().(*mcp.ServerSession); ss != nil && ss.InitializeParams() != nil {
				p = ss.InitializeParams()
			}
			switch r := res.(type) {
			case *mcp.InitializeResult:
				if r != nil {
					out := *r
					out.Capabilities = appCapabilities(r.Capabilities, declaresApps(p))
					return &out, nil
				}
			case *mcp.DiscoverResult:
				if r != nil {
					out := *r
					out.Capabilities = appCapabilities(r.Capabilities, declaresApps(p))
					return &out, nil
				}
			}
			return res, err
		case "resources/list":
			res, err := next(ctx, method, req)
			lr, ok := res.(*mcp.ListResourcesResult)
			if ss, _ := req.GetSession().(*mcp.ServerSession); err != nil || !ok || lr == nil || showsApps(ss) {
				return res, err
			}
			out := *lr
			out.Resources = []*mcp.Resource{}
			for _, r := range lr.Resources {
				if r.URI != AppURI {
					out.Resources = append(out.Resources, r)
				}
			}
			return &out, nil
		case "resources/read":
			p, _ := req.GetParams().(*mcp.ReadResourceParams)
			if ss, _ := req.GetSession().(*mcp.ServerSession); p != nil && p.URI == AppURI && !showsApps(ss) {
				return nil, mcp.ResourceNotFoundError(p.URI)
			}
		case "tools/list":
			res, err := next(ctx, method, req)
			lr, ok := res.(*mcp.ListToolsResult)
			if err != nil || !ok || lr == nil {
				return res, err
			}
			ss, _ := req.GetSession().(*mcp.ServerSession)
			apps := showsApps(ss)
			out := *lr
			out.Tools = nil
			for _, t := range lr.Tools {
				switch {
				case isAppTool(t.Name) && !apps:
					continue
				case isAppTool(t.Name):
					c := *t
					c.Meta = mcp.Meta{"ui": map[string]any{"visibility": []string{"app"}}}
					t = &c
				case apps && appLinked[t.Name]:
					c := *t
					c.Meta = mcp.Meta{"ui": map[string]any{"resourceUri": AppURI}}
					t = &c
				}
				out.Tools = append(out.Tools, t)
			}
			return &out, nil
		}
		return next(ctx, method, req)
	}
}

// appCapabilities are the server's capabilities as told to a client that
// shows apps (the extension added) or to one that does not (without the
// resources capability, which only the view's resource brings).
func appCapabilities(c *mcp.ServerCapabilities, apps bool) *mcp.ServerCapabilities {
	out := &mcp.ServerCapabilities{}
	if c != nil {
		cp := *c
		cp.Extensions = maps.Clone(c.Extensions)
		out = &cp
	}
	if apps {
		out.AddExtension(AppExtension, appSettings)
	} else {
		out.Resources = nil
	}
	return out
}
