package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
)

func TestToolsList(t *testing.T) {
	f := newFixture(t, false)
	a := f.connect(testAgent)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()

	init := a.cs.InitializeResult()
	wantContains(t, "server instructions", init.Instructions, "sessions", "python3 -c")

	res, err := a.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}

	// The instructions name only what exists: every quoted word is a tool
	// or one of a tool's arguments, and they stay short.
	args := map[string]bool{}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var in struct{ Properties map[string]any }
		json.Unmarshal(b, &in)
		for p := range in.Properties {
			args[p] = true
		}
	}
	for _, m := range regexp.MustCompile(`"([a-z_]+)"`).FindAllStringSubmatch(init.Instructions, -1) {
		if tools[m[1]] == nil && !args[m[1]] {
			t.Errorf("the instructions name %q, which is neither a tool nor an argument", m[1])
		}
	}
	if n := len(init.Instructions); n > 800 {
		t.Errorf("the instructions are %d characters; keep them under 800", n)
	}
	// The tool list is paid on every conversation (issue 15: under 6,000
	// for nine tools; the tenth, vars, costs about 500 more, paid back by
	// every throwaway cell it spares; the eleventh, fork, about 530, paid
	// back by the first rebuild of a session's state it spares; the
	// twelfth, checkpoint and its rollback, about 630, paid back likewise).
	b, _ := json.Marshal(res.Tools)
	if len(b) > 7700 {
		t.Errorf("tools/list is %d characters; keep it under 7,700", len(b))
	}
	t.Logf("tools/list: %d characters; instructions: %d", len(b), len(init.Instructions))
	var names []string
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	if want := []string{"checkpoint", "exec", "fork", "history", "input", "interrupt", "kill", "restart", "runtimes", "sessions", "vars", "wait"}; !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	if declared := Tools(); len(declared) != len(tools) {
		t.Errorf("Tools() = %v, but the server lists %v", declared, names)
	} else {
		for _, tl := range declared {
			if tools[tl.Name] == nil || tools[tl.Name].Description != tl.Description {
				t.Errorf("Tools() has %s, which the server lists otherwise or not at all", tl.Name)
			}
		}
	}

	type schema struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	for _, tc := range []struct {
		tool        string
		required    []string
		optional    []string
		readOnly    bool
		destructive bool
	}{
		{tool: "exec", required: []string{"code", "session"}, optional: []string{"cwd", "exe", "gateway", "memory", "network", "project", "python", "runtime", "sandbox", "timeout"}},
		{tool: "wait", required: []string{"session"}, optional: []string{"timeout"}},
		{tool: "input", required: []string{"session"}, optional: []string{"eof", "secret", "text", "timeout"}, destructive: true},
		{tool: "history", required: []string{"session"}, optional: []string{"id", "since"}, readOnly: true},
		{tool: "interrupt", required: []string{"session"}},
		{tool: "restart", required: []string{"session"}, destructive: true},
		{tool: "kill", required: []string{"session"}, destructive: true},
		{tool: "fork", required: []string{"new", "session"}},
		{tool: "sessions", optional: []string{"session"}, readOnly: true},
		{tool: "runtimes", optional: []string{"name"}, readOnly: true},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			tool := tools[tc.tool]
			if tool.Description == "" {
				t.Errorf("no description")
			}
			var in schema
			b, _ := json.Marshal(tool.InputSchema)
			if err := json.Unmarshal(b, &in); err != nil {
				t.Fatalf("input schema %s: %v", b, err)
			}
			if in.Type != "object" {
				t.Errorf("input schema type %q, want object", in.Type)
			}
			var props []string
			for name, p := range in.Properties {
				props = append(props, name)
				if strings.TrimSpace(p.Description) == "" {
					t.Errorf("input property %q has no description", name)
				}
			}
			slices.Sort(props)
			want := slices.Sorted(slices.Values(append(slices.Clone(tc.required), tc.optional...)))
			if !slices.Equal(props, want) {
				t.Errorf("input properties %v, want %v", props, want)
			}
			req := slices.Sorted(slices.Values(in.Required))
			if !slices.Equal(req, tc.required) {
				t.Errorf("required %v, want %v", req, tc.required)
			}

			if tool.OutputSchema != nil {
				t.Errorf("an output schema: it costs every conversation and no client needs it (issue 15)")
			}

			an := tool.Annotations
			if an == nil {
				t.Fatalf("no annotations")
			}
			if an.ReadOnlyHint != tc.readOnly {
				t.Errorf("readOnlyHint %v, want %v", an.ReadOnlyHint, tc.readOnly)
			}
			if tc.destructive && (an.DestructiveHint == nil || !*an.DestructiveHint) {
				t.Errorf("destructiveHint %v, want true", an.DestructiveHint)
			}
		})
	}
}

func TestArgumentErrors(t *testing.T) {
	f := newFixture(t, false)
	a := f.connect(testAgent)
	for _, tc := range []struct {
		name string
		tool string
		args any
		want []string
	}{
		{"exec without code", "exec", map[string]any{"session": "v"}, []string{`"code"`, "missing"}},
		{"exec with empty code", "exec", map[string]any{"session": "v", "code": ""}, []string{"code", "empty"}},
		{"exec with blank code", "exec", map[string]any{"session": "v", "code": "  \n"}, []string{"code", "empty"}},
		{"exec without session", "exec", map[string]any{"code": "1"}, []string{`"session"`, "missing"}},
		{"bad session name", "exec", map[string]any{"session": "a/b", "code": "1"}, []string{"a/b", "session name", "letters, digits"}},
		{"timeout of the wrong type", "exec", map[string]any{"session": "v", "code": "1", "timeout": "abc"}, []string{"timeout"}},
		{"timeout over the limit", "exec", map[string]any{"session": "v", "code": "1", "timeout": 601}, []string{"600", `"timeout" argument`}},
		{"negative timeout", "exec", map[string]any{"session": "v", "code": "1", "timeout": -1}, []string{"timeout"}},
		{"unknown argument", "exec", map[string]any{"session": "v", "code": "1", "bogus": true}, []string{"bogus"}},
		{"arguments not an object", "exec", []any{"v", "1"}, []string{"object"}},
		{"wait on an unknown session", "wait", map[string]any{"session": "nosuch"}, []string{"nosuch", "no session", "exec"}},
		{"interrupt on an unknown session", "interrupt", map[string]any{"session": "nosuch"}, []string{"nosuch", "no session", "exec"}},
		{"kill without session", "kill", map[string]any{}, []string{`"session"`, "missing"}},
		{"restart on an unknown session", "restart", map[string]any{"session": "nosuch"}, []string{"nosuch", "no session"}},
		{"sessions with a bad name", "sessions", map[string]any{"session": "../x"}, []string{"session name"}},
		// Refusals name the tool argument to change or the tool to call,
		// never a CLI flag or command.
		{"exec in an unknown runtime", "exec", map[string]any{"session": "v", "code": "1", "runtime": "cobol"}, []string{"cobol", `"runtime" argument`}},
		{"exec with a missing exe", "exec", map[string]any{"session": "v", "code": "1", "exe": "/nonexistent/python9"}, []string{"python9", `"exe" argument`}},
		{"sessions of an unknown name", "sessions", map[string]any{"session": "nosuch"}, []string{"nosuch", "the exec tool"}},
		{"history of an unknown session", "history", map[string]any{"session": "nosuch"}, []string{"nosuch", "the exec tool"}},
		{"exec in a missing cwd", "exec", map[string]any{"session": "v", "code": "1", "cwd": "nosuch"}, []string{"nosuch", "does not exist", `"cwd" argument`}},
		{"exec with a missing project", "exec", map[string]any{"session": "v", "code": "1", "project": "/nosuch"}, []string{"/nosuch", `"project" argument`}},
		{"exec with python and another exe", "exec", map[string]any{"session": "v", "code": "1", "python": "a", "exe": "b"}, []string{`"python"`, `"exe"`}},
		{"exec with python for R", "exec", map[string]any{"session": "v", "code": "1", "python": "a", "runtime": "r"}, []string{`"python"`, "Python sessions", `"exe"`}},
		{"exec with a bad memory size", "exec", map[string]any{"session": "v", "code": "1", "memory": "lots"}, []string{`"memory"`, "512M"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("got a protocol error, want a tool error: %v", err)
			}
			txt := text(res)
			if !res.IsError {
				t.Fatalf("IsError false, want true; text: %s", txt)
			}
			wantContains(t, "error text", txt, tc.want...)
			wantLacks(t, "error text", txt, cliAdvice...)
			wantLacks(t, "error text", txt, "--cwd", "--project", "--python", "--exe", "--memory")
		})
	}
	// Bad input changes nothing: no session was made.
	var list api.SessionsReply
	structured(t, a.ok("sessions", nil), &list)
	if len(list.Sessions) != 0 {
		t.Errorf("sessions after bad calls: %+v, want none", list.Sessions)
	}
}

func TestExecResult(t *testing.T) {
	f := newFixture(t, true)
	a := f.connect(testAgent)

	res := a.ok("exec", map[string]any{"session": "st", "code": "print('hi')\n10"})
	var raw map[string]any
	structured(t, res, &raw)
	for _, k := range []string{"session", "generation", "cell", "status"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("structured content lacks %q: %v", k, raw)
		}
	}
	// The output and the value are the text's, not said again (issue 40).
	for _, k := range []string{"output", "value", "display"} {
		if _, ok := raw[k]; ok {
			t.Errorf("structured content has %q, which the text says: %v", k, raw)
		}
	}
	var r api.CellResult
	structured(t, res, &r)
	if r.Session != "st" || r.Cell != 1 || r.Status != api.StatusDone || r.Error != nil {
		t.Errorf("structured result %+v, want session st, cell 1, status done", r)
	}
	if len(notesOf(r, api.NoteCreated)) != 1 {
		t.Errorf("notes %+v, want one %q note", r.Notes, api.NoteCreated)
	}
	txt := text(res)
	// Laid out as for a person: what happened first (the session was
	// created), then the output and the value.
	if !strings.HasPrefix(txt, "[Created session 'st'") || !strings.HasSuffix(txt, "]\nhi\nOut[1]: 10") {
		t.Errorf("text %q: want the note [Created session 'st' …], then the output, then Out[1]: 10", txt)
	}

	// A cell that raises: the tool worked, the cell failed.
	res = a.call("exec", map[string]any{"session": "st", "code": "def f():\n    return 1/0\nf()"})
	if res.IsError {
		t.Errorf("a raising cell gave IsError true; it is the cell that failed, not the tool: %s", text(res))
	}
	structured(t, res, &r)
	if r.Status != api.StatusError || r.Error == nil || r.Error.Type != "ZeroDivisionError" || r.Generation != "" {
		t.Fatalf("structured result %+v, want status error with a ZeroDivisionError, the generation not given again", r)
	}
	wantContains(t, "error text", text(res), "ZeroDivisionError", "return 1/0")

	// The names stay; a cell with no output says so.
	r, txt = a.cell("exec", map[string]any{"session": "st", "code": "y = 2"})
	if r.Status != api.StatusDone || r.Cell != 3 {
		t.Errorf("exec y = 2: %+v, want done, cell 3", r)
	}
	wantContains(t, "text of a silent cell", txt, "no output")

	// cwd (relative to where the server runs) and python are used for a
	// new session.
	sub := filepath.Join(f.cwd, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	r, txt = a.cell("exec", map[string]any{"session": "cw", "cwd": "sub", "python": f.python,
		"code": "import os, sys\n(os.getcwd(), sys.executable)"})
	if r.Status != api.StatusDone {
		t.Fatalf("exec with cwd and python: %+v", r)
	}
	wantContains(t, "value of (getcwd(), executable)", txt, "'"+sub+"'")
}

func TestClientLabels(t *testing.T) {
	f := newFixture(t, true)
	a := f.connect(testAgent)
	a.mustStart("lab")

	r, _ := a.cell("exec", map[string]any{"session": "lab", "code": "import time\ntime.sleep(3)", "timeout": 0.5})
	if r.Status != api.StatusRunning {
		t.Fatalf("exec timeout 0.5 of sleep(3): status %q, want running", r.Status)
	}

	// A second cell is refused, naming who runs the first and through what.
	res := a.call("exec", map[string]any{"session": "lab", "code": "1"})
	if !res.IsError {
		t.Fatalf("exec on a busy session: IsError false, want a busy refusal; text: %s", text(res))
	}
	wantContains(t, "busy refusal", text(res), "busy", "Test Agent via mcp", "wait tool")
	wantLacks(t, "busy refusal", text(res), cliAdvice...)

	running := func(want api.Client) {
		t.Helper()
		res := a.ok("sessions", map[string]any{"session": "lab"})
		var list sessionsFacts
		structured(t, res, &list)
		if len(list.Sessions) != 1 || list.Sessions[0].State != api.StateRunning {
			t.Fatalf("sessions lab: %+v, want one session running a cell", list.Sessions)
		}
		wantContains(t, "sessions lab", text(res), "running cell", "("+want.Label()+")")
		// The daemon keeps the connection apart from others of the label.
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		infos, err := f.client.Sessions(ctx, "lab")
		if err != nil || len(infos) != 1 || infos[0].Running == nil {
			t.Fatalf("the daemon's sessions lab: %+v, %v", infos, err)
		}
		if got := infos[0].Running.Client; got.Who != want.Who || got.How != want.How || got.Conn == "" {
			t.Errorf("running.client = %+v, want %+v", got, want)
		}
	}
	running(api.Client{Who: "Test Agent", How: "mcp"})
	if r, _ := a.cell("interrupt", map[string]any{"session": "lab"}); r.Status != api.StatusInterrupted {
		t.Errorf("interrupt: status %q, want interrupted", r.Status)
	}

	// A client with a name and no title is labelled by its name.
	b := f.connect(&mcp.Implementation{Name: "bare-agent", Version: "0.1"})
	r, _ = b.cell("exec", map[string]any{"session": "lab", "code": "time.sleep(3)", "timeout": 0.5})
	if r.Status != api.StatusRunning {
		t.Fatalf("exec timeout 0.5 of sleep(3): status %q, want running", r.Status)
	}
	running(api.Client{Who: "bare-agent", How: "mcp"})
	b.ok("interrupt", map[string]any{"session": "lab"})
}

var elapsedRE = regexp.MustCompile(`\b\d+(\.\d+)?\s?s\b`)

func TestProgress(t *testing.T) {
	f := newFixture(t, true)
	withToken := f.connect(testAgent)
	without := f.connect(testAgent)
	withToken.mustStart("pa")
	without.mustStart("pb")

	code := "import time\nprint('first line')\nprint('latest line')\ntime.sleep(7.5)\n'fin'"
	var wg sync.WaitGroup
	results := make([]api.CellResult, 2)
	texts := make([]string, 2)
	errs := make([]error, 2)
	for i, a := range []*agent{withToken, without} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &mcp.CallToolParams{Name: "exec", Arguments: map[string]any{"session": []string{"pa", "pb"}[i], "code": code}}
			if i == 0 {
				p.SetProgressToken("tok-1")
			}
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			res, err := a.cs.CallTool(ctx, p)
			if err == nil && res.IsError {
				err = fmt.Errorf("tool error: %s", text(res))
			}
			if err != nil {
				errs[i] = err
				return
			}
			texts[i] = text(res)
			b, _ := json.Marshal(res.StructuredContent)
			errs[i] = json.Unmarshal(b, &results[i])
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if r := results[i]; r.Status != api.StatusDone || !strings.Contains(texts[i], "Out[2]: 'fin'") {
			t.Errorf("call %d: %+v, %q, want done with 'fin'", i, r, texts[i])
		}
	}

	got := withToken.progressSeen()
	if len(got) < 2 {
		t.Errorf("with a progress token: %d progress notifications over a 7.5 s cell, want at least 2: %+v", len(got), got)
	}
	last := 0.0
	for _, p := range got {
		t.Logf("progress %.1f: %s", p.Progress, p.Message)
		if p.ProgressToken != "tok-1" {
			t.Errorf("progress token %v, want tok-1", p.ProgressToken)
		}
		if p.Progress <= last {
			t.Errorf("progress %v after %v: want it to increase", p.Progress, last)
		}
		last = p.Progress
		if !elapsedRE.MatchString(p.Message) {
			t.Errorf("progress message %q lacks the elapsed time", p.Message)
		}
		wantContains(t, "progress message", p.Message, "latest line")
	}
	if n := without.progressSeen(); len(n) != 0 {
		t.Errorf("without a progress token: got %d progress notifications, want none: %+v", len(n), n)
	}
}

func TestCancelKeepsTheCell(t *testing.T) {
	f := newFixture(t, true)
	a := f.connect(testAgent)
	a.mustStart("cx")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: "exec", Arguments: map[string]any{
			"session": "cx", "code": "import time\ntime.sleep(3)\nprint('done')\n7"}})
		done <- outcome{res, err}
	}()
	// Cancel once the cell runs (about half a second in).
	time.Sleep(500 * time.Millisecond)
	running := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		list, err := f.client.Sessions(context.Background(), "cx")
		if err == nil && len(list) == 1 && list[0].Running != nil {
			running = true
			break
		}
	}
	if !running {
		t.Fatalf("the cell never showed as running")
	}
	cancel()
	select {
	case o := <-done:
		if o.err == nil {
			t.Fatalf("cancelled call returned no error; result: %s", text(o.res))
		}
	case <-time.After(callTimeout):
		t.Fatalf("the cancelled call did not return")
	}

	// The cell ran on, and wait collects all of it.
	r, txt := a.cell("wait", map[string]any{"session": "cx", "timeout": 30})
	if r.Status != api.StatusDone {
		t.Errorf("wait after a cancelled exec: %+v, want done", r)
	}
	wantContains(t, "wait text", txt, "done\n", "Out[2]: 7")
}

func TestTimeoutThenWait(t *testing.T) {
	f := newFixture(t, true)
	a := f.connect(testAgent)
	a.mustStart("tw")

	r, txt := a.cell("exec", map[string]any{"session": "tw", "timeout": 1,
		"code": "import time\nprint('first part')\ntime.sleep(2)\nprint('rest part')\n6*7"})
	if r.Status != api.StatusRunning {
		t.Fatalf("exec timeout 1 of a 2 s cell: %+v, want running", r)
	}
	if len(notesOf(r, api.NoteRunning)) != 1 {
		t.Errorf("notes %+v, want one %q note", r.Notes, api.NoteRunning)
	}
	wantContains(t, "text of a running cell", txt, "first part\n", "still running", "wait")
	wantLacks(t, "text of a running cell", txt, cliAdvice...)

	r, txt = a.cell("wait", map[string]any{"session": "tw"})
	if r.Status != api.StatusDone || r.Cell != 2 {
		t.Errorf("wait: %+v, want done, cell 2", r)
	}
	wantContains(t, "wait text", txt, "rest part\nOut[2]: 42")
	wantLacks(t, "wait text", txt, "first part")

	r, txt = a.cell("wait", map[string]any{"session": "tw"})
	if len(notesOf(r, api.NoteCollected)) != 1 {
		t.Errorf("second wait: %+v, want a %q note", r, api.NoteCollected)
	}
	wantContains(t, "second wait text", txt, "Nothing new")
	wantLacks(t, "second wait text", txt, "rest part")
}

func TestInterruptRestartKill(t *testing.T) {
	f := newFixture(t, true)
	a := f.connect(testAgent)
	a.ok("exec", map[string]any{"session": "ir", "code": "import time\nx = 5"})

	r, _ := a.cell("exec", map[string]any{"session": "ir", "code": "time.sleep(100)", "timeout": 0.5})
	if r.Status != api.StatusRunning {
		t.Fatalf("exec timeout 0.5 of sleep(100): status %q, want running", r.Status)
	}
	start := time.Now()
	r, txt := a.cell("interrupt", map[string]any{"session": "ir"})
	if r.Status != api.StatusInterrupted || r.Cell != 2 {
		t.Errorf("interrupt: %+v, want status interrupted, cell 2", r)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("interrupt took %s", d)
	}
	wantContains(t, "interrupt text", txt, "KeyboardInterrupt")

	// The names are kept.
	if _, txt := a.cell("exec", map[string]any{"session": "ir", "code": "x"}); txt != "Out[3]: 5" {
		t.Errorf("x after interrupt: %q, want Out[3]: 5", txt)
	}
	var list sessionsFacts
	res := a.ok("sessions", nil)
	structured(t, res, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].Name != "ir" || list.Sessions[0].State != api.StateIdle {
		t.Errorf("sessions: %+v, want ir, idle", list.Sessions)
	}
	wantContains(t, "sessions text", text(res), "ir  pid ", "names: x")
	pid := regexp.MustCompile(`pid \d+`).FindString(text(res))

	// restart clears the names and says which were lost; its new life's
	// generation is news.
	var kr lifeFacts
	res = a.ok("restart", map[string]any{"session": "ir"})
	structured(t, res, &kr)
	if kr.Session != "ir" || kr.State != api.StateIdle || kr.Generation == "" || len(kr.Notes) != 1 || kr.Notes[0].Kind != api.NoteRestarted {
		t.Errorf("restart: %+v, want ir idle, its new generation, a restarted note", kr)
	}
	wantContains(t, "restart text", text(res), "Restarted", "Lost names: x")
	wantLacks(t, "restart text", text(res), pid+")")
	if r, _ := a.cell("exec", map[string]any{"session": "ir", "code": "x"}); r.Status != api.StatusError || r.Error == nil || r.Error.Type != "NameError" {
		t.Errorf("x after restart: %+v, want a NameError", r)
	}

	// kill reports the names lost.
	a.ok("exec", map[string]any{"session": "ir", "code": "yy = 1"})
	res = a.ok("kill", map[string]any{"session": "ir"})
	structured(t, res, &kr)
	if kr.Session != "ir" || kr.State != api.StateDead || kr.Transcript == "" {
		t.Errorf("kill: %+v, want ir dead, with its transcript", kr)
	}
	wantContains(t, "kill text", text(res), "Killed session 'ir'", "names lost", "yy")
	structured(t, a.ok("sessions", nil), &list)
	for _, s := range list.Sessions {
		if s.Name == "ir" && s.State != "dead" {
			t.Errorf("sessions after kill: %+v, want ir gone", s)
		}
	}
}

// TestMaxWaitCaps: --max-wait bounds every call's wait, the default's
// too, and leaves shorter timeouts alone.
func TestMaxWaitCaps(t *testing.T) {
	secs := func(p *float64) string {
		if p == nil {
			return "the default"
		}
		return fmt.Sprint(*p)
	}
	s := &Server{MaxWait: 20}
	for _, c := range []struct{ in, want *float64 }{
		{nil, api.Seconds(20)}, {api.Seconds(0), api.Seconds(0)}, {api.Seconds(5), api.Seconds(5)},
		{api.Seconds(20), api.Seconds(20)}, {api.Seconds(300), api.Seconds(20)},
	} {
		if got := s.capped(c.in); secs(got) != secs(c.want) {
			t.Errorf("max-wait 20, timeout %s: waits %s, want %s", secs(c.in), secs(got), secs(c.want))
		}
	}
	s.MaxWait = 50
	if got := s.capped(nil); got != nil {
		t.Errorf("max-wait 50, no timeout: asks %s, want the default", secs(got))
	}
	s.MaxWait = 0
	if got := s.capped(api.Seconds(300)); secs(got) != "300" {
		t.Errorf("no max-wait, timeout 300: asks %s", secs(got))
	}
}

// A reply to a model keeps about 8,000 characters of output and 4,000 of
// a value inline (polyrepl mcp --max-output), the whole saved to a file
// the cut names; the structured content keeps less still, naming the
// same file.
func TestModelBounds(t *testing.T) {
	f := newFixture(t, true)
	a := f.connect(testAgent)
	res := a.ok("exec", map[string]any{"session": "mb", "code": "for i in range(5000): print('line', i)"})
	txt := text(res)
	if n := len([]rune(txt)); n > DefaultMaxOutput+600 {
		t.Errorf("a 5,000-line print gave %d characters of text, want about %d", n, DefaultMaxOutput)
	}
	wantContains(t, "long output", txt, "line 0\n", "line 4999", "output cut: 48,890 characters in all")
	var r api.CellResult
	structured(t, res, &r)
	if r.OutputCut == nil || r.OutputCut.File == "" {
		t.Fatalf("structured output cut %+v: want the file of the whole", r.OutputCut)
	}
	whole, err := os.ReadFile(r.OutputCut.File)
	if err != nil || !strings.Contains(string(whole), "line 2500\n") || len(whole) != 48890 {
		t.Errorf("the whole output's file: %d bytes, %v", len(whole), err)
	}
	wantContains(t, "long output", txt, r.OutputCut.File)

	// A value under the daemon's bound but over the model's is saved
	// whole by the daemon and cut in the reply.
	res = a.ok("exec", map[string]any{"session": "mb", "code": "'v' * 6000"})
	structured(t, res, &r)
	if r.ValueCut == nil || r.ValueCut.Total != 6002 || r.ValueCut.File == "" {
		t.Fatalf("value cut %+v: want 6,002 characters in all and the file", r.ValueCut)
	}
	if b, err := os.ReadFile(r.ValueCut.File); err != nil || string(b) != "'"+strings.Repeat("v", 6000)+"'" {
		t.Errorf("the whole value's file: %d bytes, %v", len(b), err)
	}
	if n := len([]rune(text(res))); n > DefaultMaxOutput/2+600 {
		t.Errorf("a 6,000-character value gave %d characters of text", n)
	}

	// A value over the daemon's own bound is cut by the runtime, which
	// saves the whole for the record to keep.
	res = a.ok("exec", map[string]any{"session": "mb", "code": "'w' * 62000"})
	structured(t, res, &r)
	if r.ValueCut == nil || r.ValueCut.Total != 62002 || r.ValueCut.File == "" {
		t.Fatalf("value cut %+v: want 62,002 characters in all and the file", r.ValueCut)
	}
	if b, err := os.ReadFile(r.ValueCut.File); err != nil || string(b) != "'"+strings.Repeat("w", 62000)+"'" {
		t.Errorf("the whole value's file %s: %d bytes, %v", r.ValueCut.File, len(b), err)
	}
	wantContains(t, "a 62k value", text(res), r.ValueCut.File)
}

// A matplotlib figure reaches the model as an image block it can see (a
// PNG of the figure's size), listed in the structured content with its
// file; the same image is not sent twice to one client.
func TestFigureAsImage(t *testing.T) {
	f := newFixture(t, true)
	if err := exec.Command(f.python, "-c", "import matplotlib").Run(); err != nil {
		t.Skipf("%s has no matplotlib (Debian: python3-matplotlib)", f.python)
	}
	a := f.connect(testAgent)
	code := "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.title('rising');"
	res := a.ok("exec", map[string]any{"session": "fig", "code": code})
	var img *mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			img = ic
		}
	}
	if img == nil || img.MIMEType != "image/png" {
		t.Fatalf("no PNG image block: %s", text(res))
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img.Data))
	if err != nil || cfg.Width != 640 || cfg.Height != 480 {
		t.Errorf("the image block: %v, %dx%d; want a 640x480 PNG", err, cfg.Width, cfg.Height)
	}
	var r api.CellResult
	structured(t, res, &r)
	if len(r.Rich) != 1 || r.Rich[0].File == "" || r.Rich[0].Width != 640 {
		t.Fatalf("structured rich outputs %+v", r.Rich)
	}
	if b, err := os.ReadFile(r.Rich[0].File); err != nil || !bytes.Equal(b, img.Data) {
		t.Errorf("the figure's file %s differs from the image sent: %v", r.Rich[0].File, err)
	}
	wantContains(t, "figure text", text(res), "[image 1: 640×480 PNG", r.Rich[0].File)

	res = a.ok("exec", map[string]any{"session": "fig", "code": code})
	for _, c := range res.Content {
		if _, ok := c.(*mcp.ImageContent); ok {
			t.Errorf("the same figure was sent again")
		}
	}
	wantContains(t, "the same figure again", text(res), "the same as one you were already sent")

	// A 6000×4000 figure is scaled down to the model's bounds; its file
	// keeps the full size.
	res = a.ok("exec", map[string]any{"session": "fig", "code": "plt.figure(figsize=(60, 40))\nplt.plot(range(100))\nplt.show()"})
	img = nil
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			img = ic
		}
	}
	if img == nil {
		t.Fatalf("no image block for the large figure: %s", text(res))
	}
	big, _, err := image.DecodeConfig(bytes.NewReader(img.Data))
	if err != nil || max(big.Width, big.Height) > imageSide || len(img.Data) > imageBudget {
		t.Errorf("the large figure sent as %dx%d, %d bytes (%v); want within %d pixels and %d bytes", big.Width, big.Height, len(img.Data), err, imageSide, imageBudget)
	}
	structured(t, res, &r)
	if len(r.Rich) != 1 || r.Rich[0].Width != 6000 || r.Rich[0].Height != 4000 {
		t.Errorf("the large figure's file: %+v, want 6000x4000", r.Rich)
	}
	wantContains(t, "the large figure", text(res), "Scaled down for you", "to 1568×1045")
}
