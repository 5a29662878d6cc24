package mcp

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/view"
)

// connectApps attaches an MCP client whose initialize declares the MCP
// Apps extension, as a client that shows apps does.
func (f *fixture) connectApps() *agent {
	t := f.t
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := f.srv.Connect(ctx, st)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(AppExtension, map[string]any{"mimeTypes": []string{AppMIME}})
	c := mcp.NewClient(&mcp.Implementation{Name: "app-host", Version: "1.0"}, &mcp.ClientOptions{Capabilities: caps})
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return &agent{t: t, cs: cs}
}

func listTools(t *testing.T, a *agent) []*mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := a.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	return res.Tools
}

// TestAppOnlyForClientsThatShowApps: a client whose initialize declared
// io.modelcontextprotocol/ui is told the server has it, reads the view
// as a text/html;profile=mcp-app resource, sees exec, wait and sessions
// linked to it and the app's tools marked for the app; a client that did
// not declare it gets the initialize and tool list of a server without
// apps — no extension, no resources, no _meta, no app tools, whose calls
// are refused as unknown.
func TestAppOnlyForClientsThatShowApps(t *testing.T) {
	f := newFixture(t, false)
	plain, apps := f.connect(testAgent), f.connectApps()

	caps := plain.cs.InitializeResult().Capabilities
	if caps.Extensions != nil || caps.Resources != nil {
		t.Errorf("a client without the extension is told of extensions %v, resources %+v", caps.Extensions, caps.Resources)
	}
	tools := listTools(t, plain)
	b, _ := json.Marshal(tools)
	wantLacks(t, "the tool list without the extension", string(b), "_meta", "ui://", "view_")
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if want := []string{"checkpoint", "exec", "fork", "history", "input", "interrupt", "kill", "restart", "runtimes", "sessions", "vars", "wait"}; !slices.Equal(names, want) {
		t.Errorf("tools without the extension: %v, want %v", names, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if _, err := plain.cs.CallTool(ctx, &mcp.CallToolParams{Name: "view_events", Arguments: map[string]any{"session": "x"}}); err == nil || !strings.Contains(err.Error(), `unknown tool "view_events"`) {
		t.Errorf("view_events called by a client without the extension: %v, want an unknown tool", err)
	}
	t.Logf("tools/list without the extension: %d characters", len(b))

	caps = apps.cs.InitializeResult().Capabilities
	if _, ok := caps.Extensions[AppExtension]; !ok || caps.Resources == nil {
		t.Errorf("a client with the extension: extensions %v, resources %+v", caps.Extensions, caps.Resources)
	}
	tools = listTools(t, apps)
	b, _ = json.Marshal(tools)
	t.Logf("tools/list with the extension: %d characters", len(b))
	meta := map[string]string{}
	for _, tl := range tools {
		m, _ := json.Marshal(tl.Meta)
		meta[tl.Name] = string(m)
	}
	for _, name := range []string{"exec", "wait", "sessions"} {
		if want := `{"ui":{"resourceUri":"ui://polyrepl/view"}}`; meta[name] != want {
			t.Errorf("%s's _meta: %s, want %s", name, meta[name], want)
		}
	}
	for _, name := range []string{"view_events", "view_rich"} {
		if want := `{"ui":{"visibility":["app"]}}`; meta[name] != want {
			t.Errorf("%s's _meta: %s, want %s", name, meta[name], want)
		}
	}
	for _, name := range []string{"input", "interrupt", "history"} {
		if meta[name] != "null" {
			t.Errorf("%s has _meta %s", name, meta[name])
		}
	}

	rr, err := apps.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: AppURI})
	if err != nil {
		t.Fatalf("resources/read %s: %v", AppURI, err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].MIMEType != AppMIME || rr.Contents[0].Text != view.AppHTML() {
		t.Errorf("the view's resource: %d contents, type %q", len(rr.Contents), rr.Contents[0].MIMEType)
	}
	wantContains(t, "the app's page", rr.Contents[0].Text, `data-mode="app"`)

	// The tool list a client without the extension sees is the server's
	// own, as a server without apps lists it.
	again, _ := json.Marshal(listTools(t, plain))
	if !strings.Contains(string(again), `"name":"exec"`) || strings.Contains(string(again), "resourceUri") {
		t.Errorf("the list without the extension changed after a client with it listed:\n%s", again)
	}
}

// appFollow is a follow of a record as the app's transport keeps it.
type appFollow struct {
	follow string
	next   int
	got    []api.RecordEvent
}

// until calls view_events until cond holds of what arrived, as the
// app's transport does: each call names the follow and how many of its
// events it has.
func (fl *appFollow) until(t *testing.T, a *agent, session string, cond func([]api.RecordEvent) bool) []api.RecordEvent {
	t.Helper()
	got, follow, next := fl.got, fl.follow, fl.next
	defer func() { fl.got, fl.follow, fl.next = got, follow, next }()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		res := a.ok("view_events", map[string]any{"session": session, "follow": follow, "next": next, "wait": 5})
		var r viewEvents
		structured(t, res, &r)
		if r.Lost != "" || r.Ended != "" {
			t.Fatalf("view_events: %+v", r)
		}
		follow, next = r.Follow, r.Next
		got = append(got, r.Events...)
		if cond(got) {
			return got
		}
	}
	t.Fatalf("view_events: the condition did not hold within 60 s; events: %+v", got)
	return nil
}

func outputOf(evs []api.RecordEvent, seq int) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Output != nil && ev.Output.Seq == seq {
			b.WriteString(ev.Output.Text)
		}
		if ev.Entry != nil && ev.Entry.Seq == seq && ev.Event == api.EventEntry {
			b.WriteString(ev.Entry.Output)
		}
	}
	return b.String()
}

// TestViewEventsFollowsLive: view_events gives a running cell's output
// while it prints, then its end; a follow named that the server does
// not keep is said to be lost.
func TestViewEventsFollowsLive(t *testing.T) {
	f := newFixture(t, true)
	a := f.connectApps()
	a.mustStart("live")
	r, _ := a.cell("exec", map[string]any{"session": "live", "timeout": 0,
		"code": "import time\nfor i in range(4):\n    print('line', i, flush=True)\n    time.sleep(0.5)\ntime.sleep(30)"})
	if r.Status != api.StatusRunning {
		t.Fatalf("exec: %+v", r)
	}
	var seq int
	fl := &appFollow{}
	evs := fl.until(t, a, "live", func(evs []api.RecordEvent) bool {
		for _, ev := range evs {
			if ev.Entry != nil && ev.Entry.Cell == r.Cell {
				seq = ev.Entry.Seq
			}
		}
		return seq > 0 && strings.Contains(outputOf(evs, seq), "line 3")
	})
	for _, ev := range evs {
		if ev.Event == api.EventEnd && ev.Entry.Seq == seq {
			t.Errorf("the cell ended before its output was followed: %+v", ev.Entry)
		}
	}
	a.cell("interrupt", map[string]any{"session": "live"})
	fl.until(t, a, "live", func(evs []api.RecordEvent) bool {
		for _, ev := range evs {
			if ev.Event == api.EventEnd && ev.Entry.Seq == seq {
				return ev.Entry.Status == api.StatusInterrupted
			}
		}
		return false
	})

	var lost viewEvents
	structured(t, a.ok("view_events", map[string]any{"session": "live", "follow": "f-nosuch", "next": 3}), &lost)
	if lost.Lost == "" || len(lost.Events) != 0 {
		t.Errorf("a follow not kept: %+v", lost)
	}
}

// TestFollowerBoundsItsQueue: output past the queue's bound is not
// queued; the next chunk of the entry, or a chunk of its own before the
// entry's end, says how many characters were skipped and where the
// whole is, as the record tells a slow follower; and a reply carries at
// most its size of events, the rest coming next.
func TestFollowerBoundsItsQueue(t *testing.T) {
	f := &follower{skip: map[int]*skipped{}, wake: make(chan struct{})}
	big := strings.Repeat("x", followQueue/2-10) + "\n"
	n := len(big)
	for i := 0; i < 4; i++ {
		f.add(api.RecordEvent{Event: api.EventOutput, Output: &api.OutputChunk{ID: "s#1", Seq: 1, Offset: i * n, Text: big, File: "/whole"}})
	}
	f.add(api.RecordEvent{Event: api.EventEnd, Entry: &api.Entry{Seq: 1, Status: api.StatusDone}})
	var all []api.RecordEvent
	next := 0
	for {
		_, evs, more, _, _ := f.take(next)
		all = append(all, evs...)
		next += len(evs)
		if !more {
			break
		}
	}
	if len(all) != 4 {
		t.Fatalf("%d events, want 2 chunks, the skip and the end: %+v", len(all), all)
	}
	sk := all[2].Output
	if sk == nil || sk.Skipped != 2*n || sk.Offset != 4*n || sk.Text != "" || sk.File != "/whole" {
		t.Errorf("the skip: %+v", sk)
	}
	if all[3].Event != api.EventEnd {
		t.Errorf("the last event: %+v", all[3])
	}
	// Taken, the queue is empty again: new output is queued whole.
	f.take(next)
	f.add(api.RecordEvent{Event: api.EventOutput, Output: &api.OutputChunk{ID: "s#2", Seq: 2, Text: big}})
	if _, evs, _, _, _ := f.take(next); len(evs) != 1 || evs[0].Output.Text != big {
		t.Errorf("after the queue emptied: %+v", evs)
	}
}

// TestViewRich: view_rich gives a figure's bytes, which decode as the
// PNG the record lists, and refuses an index past the entry's outputs.
func TestViewRich(t *testing.T) {
	f := newFixture(t, true)
	if err := exec.Command(f.python, "-c", "import matplotlib").Run(); err != nil {
		t.Skipf("%s has no matplotlib (Debian: python3-matplotlib)", f.python)
	}
	a := f.connectApps()
	r, _ := a.cell("exec", map[string]any{"session": "fig", "code": "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3]);"})
	if len(r.Rich) != 1 {
		t.Fatalf("exec: %+v", r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	hist, err := f.client.History(ctx, "fig", 0)
	if err != nil {
		t.Fatal(err)
	}
	seq := hist.Entries[len(hist.Entries)-1].Seq
	var rich viewRich
	structured(t, a.ok("view_rich", map[string]any{"session": "fig", "seq": seq, "index": 0}), &rich)
	b, err := base64.StdEncoding.DecodeString(rich.Data)
	if err != nil || rich.MIME != "image/png" || !strings.HasPrefix(string(b), "\x89PNG") || rich.Width != 640 {
		t.Errorf("view_rich: %s %d×%d, %d bytes, %v; unsent %q", rich.MIME, rich.Width, rich.Height, len(b), err, rich.Unsent)
	}
	res := a.call("view_rich", map[string]any{"session": "fig", "seq": seq, "index": 5})
	if !res.IsError {
		t.Errorf("an index past the outputs: %s", text(res))
	}
}

// TestAppHandshakeBeforeDiscovery: a client speaking the protocol of
// before 2026-07-28 (initialize, as the TypeScript SDK 1.x does) is told
// of the extension only if it declared it; without it, the capabilities
// are the tools' alone, as before the view's resource existed, the tool
// list carries no _meta and no app tool, and the resource is neither
// listed nor read.
func TestAppHandshakeBeforeDiscovery(t *testing.T) {
	f := newFixture(t, false)
	for _, tc := range []struct {
		caps, wantCaps string
		wantMeta       bool
	}{
		{`{}`, `{"tools":{"listChanged":true}}`, false},
		{`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/plain"]}}}`, `{"tools":{"listChanged":true}}`, false},
		{`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`,
			`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}},"resources":{"listChanged":true},"tools":{"listChanged":true}}`, true},
		{`{"extensions":{"io.modelcontextprotocol/ui":{}}}`,
			`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}},"resources":{"listChanged":true},"tools":{"listChanged":true}}`, true},
	} {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan struct{})
		go func() {
			f.srv.Run(context.Background(), Stdio(inR, outW))
			outW.Close()
			close(done)
		}()
		out := bufio.NewReader(outR)
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":%s,"clientInfo":{"name":"t","version":"1"}}}`+"\n", tc.caps)
		init := readAnswer(t, out)
		var r struct{ Capabilities json.RawMessage }
		json.Unmarshal(init.Result, &r)
		if string(r.Capabilities) != tc.wantCaps {
			t.Errorf("client capabilities %s: told %s, want %s", tc.caps, r.Capabilities, tc.wantCaps)
		}
		fmt.Fprint(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
		list := readAnswer(t, out)
		hasMeta := strings.Contains(string(list.Result), `"_meta"`) || strings.Contains(string(list.Result), `"view_events"`)
		if hasMeta != tc.wantMeta {
			t.Errorf("client capabilities %s: the tool list has _meta or app tools: %v, want %v", tc.caps, hasMeta, tc.wantMeta)
		}
		fmt.Fprint(inW, `{"jsonrpc":"2.0","id":3,"method":"resources/list"}`+"\n"+`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"ui://polyrepl/view"}}`+"\n")
		// The two are answered as they finish, in either order.
		listed, read := readAnswer(t, out), readAnswer(t, out)
		if string(listed.ID) == "4" {
			listed, read = read, listed
		}
		if tc.wantMeta != strings.Contains(string(listed.Result), AppURI) || tc.wantMeta != (read.Error == nil) {
			t.Errorf("client capabilities %s: resources/list %s; resources/read error %+v", tc.caps, listed.Result, read.Error)
		}
		if !tc.wantMeta && read.Error != nil && (read.Error.Code != -32602 || read.Error.Message != "Resource not found") {
			t.Errorf("client capabilities %s: reading the view: %+v, want the SDK's answer for a resource it lacks", tc.caps, read.Error)
		}
		inW.Close()
		<-done
	}
}

// TestViewEventsEnds: following a session there is not ends at once,
// saying why in the tools' words, and the follow is not kept for long.
func TestViewEventsEnds(t *testing.T) {
	f := newFixture(t, false)
	a := f.connectApps()
	var r viewEvents
	structured(t, a.ok("view_events", map[string]any{"session": "nosuch", "wait": 10}), &r)
	if r.Ended == "" || len(r.Events) != 0 || r.Follow == "" {
		t.Fatalf("following no session: %+v", r)
	}
	wantContains(t, "why the follow ended", r.Ended, "nosuch")
	t.Logf("ended: %s", r.Ended)
}

// TestViewActIsThePersons: the app's interrupt and answer go through its
// own tool and are recorded as the person's (their label, how "view"),
// not the agent's; view_glance shows the question the cell waits on.
func TestViewActIsThePersons(t *testing.T) {
	f := newFixture(t, true)
	a := f.connectApps()
	r, _ := a.cell("exec", map[string]any{"session": "ask", "timeout": 5, "code": "x = input('name? ')\nprint('hello', x)"})
	if r.Status != api.StatusInput {
		t.Fatalf("exec: %+v", r)
	}
	var g viewGlance
	structured(t, a.ok("view_glance", map[string]any{"session": "ask"}), &g)
	if g.Session.Running == nil || g.Session.Running.Input == nil || !strings.Contains(g.Session.Running.Input.Text, "name?") {
		t.Fatalf("view_glance: %+v", g.Session)
	}
	var got api.CellResult
	structured(t, a.ok("view_act", map[string]any{"session": "ask", "action": "answer", "text": "ada"}), &got)
	// The agent's wait collects what the answered cell printed: the
	// person's answer was not the agent's collecting.
	done, txt := a.cell("wait", map[string]any{"session": "ask", "timeout": 30})
	if !strings.Contains(txt, "hello ada") {
		t.Errorf("the answer: %+v, then %+v: %q", got, done, txt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	hist, err := f.client.History(ctx, "ask", 0)
	if err != nil {
		t.Fatal(err)
	}
	last := hist.Entries[len(hist.Entries)-1]
	if len(last.Answers) != 1 || last.Answers[0].How != "view" || last.Answers[0].Who != f.srv.label {
		t.Errorf("the answer is recorded as %+v, want the person's through the view", last.Answers)
	}
	if res := a.call("view_act", map[string]any{"session": "ask", "action": "restart"}); !res.IsError || !strings.Contains(text(res), "give interrupt or answer") {
		t.Errorf("an action the app does not offer: %s", text(res))
	}
}
