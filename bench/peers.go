package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// The peers section (issue 40): the MCP servers a user would install
// instead of polyrepl, driven through the official TypeScript SDK over
// stdio on one scripted agent task — build 200,000 rows, six questions,
// a mistake and its fix, and where a server can, a plot, a cell longer
// than the client's patience and an interrupt — timing each call in the
// client and counting what each reply costs a model as the context
// section counts it (runes of the text and of the structured content as
// compact JSON; once per conversation, the tool list).
//
// The peers are found through $POLYREPL_BENCH_PEERS, a node_modules
// holding @wonderwhy-er/desktop-commander, mcp-server-code-runner and
// @modelcontextprotocol/sdk (installed once, outside the repository;
// nothing is downloaded while the harness runs). Without it their rows
// are skipped and say why; polyrepl's row then needs the SDK from
// $POLYREPL_BENCH_MCP_SDK.

// peersSection names the section for -only and its markers.
const peersSection = "peers"

// peerPatience is how long the scripted client waits for a cell before it
// comes back later (the long cell runs longer than this).
const peerPatience = 2 * time.Second

// peerLongCellSecs is how long the long cell runs; peerLongDone is what
// it prints last.
const (
	peerLongCellSecs = 5
	peerLongDone     = "done 200000"
)

// The servers, as the tables name them.
const (
	peerPolyrepl = "polyrepl"
	peerDC       = "desktop-commander"
	peerRunner   = "code-runner"
)

// peerCall is one tool call of the task and what its reply cost.
type peerCall struct {
	phase string // build, q1…q6, mistake, fix, plot, long, interrupt
	round int    // the questions are asked again in later rounds, for time only
	tool  string
	secs  float64
	text  int // runes of the text content
	sc    int // runes of structuredContent as compact JSON
	other int // content blocks that are not text (images), not counted in characters
	isErr bool
	err   string // the call itself failed (a timeout, a protocol error)
	reply string // the text content, to check the answer; not kept in the report
}

// peerRun is one server's run of the task.
type peerRun struct {
	name        string
	version     string
	keepsState  bool
	skipped     string // why the server did not run
	connectSecs float64
	toolList    int
	tools       int
	instr       int
	calls       []peerCall
	notes       []string // what failed or needed a workaround
	cannot      []string // the phases it has no way to do
	wall        float64  // the whole task, first round, seconds
	open        func(ctx context.Context) error
	cell        func(ctx context.Context, phase string, c peerCell) error
	long        func(ctx context.Context) error
	interrupt   func(ctx context.Context) error
	plot        func(ctx context.Context) error
	drv         *peerDriver
	round       int
	dcPID       int    // desktop-commander's python, once started
	dump        string // -dump: write each call and its reply here
	// protocolErrors counts what the client could not read of the
	// server's stdout (lines that are not JSON-RPC).
	protocolErrors    int
	lastProtocolError string
}

func (r *peerRun) note(format string, a ...any) {
	s := fmt.Sprintf(format, a...)
	for _, n := range r.notes {
		if n == s {
			return
		}
	}
	r.notes = append(r.notes, s)
}

// peersResult is the section's measurement.
type peersResult struct {
	runs   []*peerRun
	cells  peerCells
	data   string // "pandas" or "plain Python lists"
	rounds int
	err    error
}

// peersDir is the node_modules holding the peers, or "" and why not.
func peersDir() (string, string) {
	dir := os.Getenv("POLYREPL_BENCH_PEERS")
	if dir == "" {
		return "", "set POLYREPL_BENCH_PEERS to a node_modules holding @wonderwhy-er/desktop-commander, mcp-server-code-runner and @modelcontextprotocol/sdk (see docs/benchmarks.md)"
	}
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Sprintf("POLYREPL_BENCH_PEERS: %v", err)
	}
	return dir, ""
}

// peersSDK is the node_modules the driver loads the TypeScript SDK from.
func peersSDK(peers string) string {
	for _, d := range []string{peers, os.Getenv("POLYREPL_BENCH_MCP_SDK"), os.Getenv("POLYREPL_TEST_MCP_SDK")} {
		if d == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "@modelcontextprotocol", "sdk", "package.json")); err == nil {
			return d
		}
	}
	return ""
}

// peers runs the task against every server it can, interleaved phase by
// phase (each phase's servers in a rotating order), so that the
// machine's drift hits them alike.
func peers(ctx context.Context, w *world, c config) *peersResult {
	res := &peersResult{rounds: 2}
	if c.quick {
		res.rounds = 1
	}
	dir, why := peersDir()
	sdk := peersSDK(dir)
	if _, err := exec.LookPath("node"); err != nil {
		res.err = errors.New("needs node")
		w.skip("the peers' rows", "needs node")
		return res
	}
	pandas := exec.Command(c.python, "-c", "import pandas, numpy").Run() == nil
	cells := peerCellsLists
	res.data = "plain Python lists (" + c.python + " has no pandas)"
	if pandas {
		cells, res.data = peerCellsPandas, "pandas"
	}
	res.cells = cells
	want, err := peerAnswers(w, c.python, cells)
	if err != nil {
		res.err = err
		w.skip("the peers' rows", err.Error())
		return res
	}

	pr := &peerRun{name: peerPolyrepl, keepsState: true}
	dc := &peerRun{name: peerDC, keepsState: true}
	cr := &peerRun{name: peerRunner}
	res.runs = []*peerRun{pr, dc, cr}
	for _, r := range res.runs {
		r.dump = w.modulePath(c.dump)
	}
	if sdk == "" {
		pr.skipped = "needs the TypeScript MCP SDK: POLYREPL_BENCH_PEERS or POLYREPL_BENCH_MCP_SDK naming a node_modules holding @modelcontextprotocol/sdk"
	}
	for _, r := range []*peerRun{dc, cr} {
		if r.skipped == "" && dir == "" {
			r.skipped = why
		}
	}
	if pr.skipped == "" {
		pr.skipped = startPolyreplPeer(ctx, w, sdk, pr, cells)
	}
	if dc.skipped == "" {
		dc.skipped = startDCPeer(ctx, w, sdk, dir, dc, cells)
	}
	if cr.skipped == "" {
		cr.skipped = startRunnerPeer(ctx, w, sdk, dir, c.python, cr, cells)
	}
	var live []*peerRun
	for _, r := range res.runs {
		if r.skipped != "" {
			w.skip(fmt.Sprintf("the peers' %s row", r.name), r.skipped)
			continue
		}
		live = append(live, r)
	}
	defer func() {
		for _, r := range live {
			r.drv.close()
		}
	}()
	logf("peers: the scripted task against %d servers (%s, %d rounds of the questions)", len(live), res.data, res.rounds)
	turn := 0
	each := func(phase string, f func(r *peerRun) error) {
		for i := range live {
			r := live[(i+turn)%len(live)]
			t0 := time.Now()
			if err := f(r); err != nil {
				r.note("%s: %v", phase, err)
			}
			if r.round == 0 {
				r.wall += secs(time.Since(t0))
			}
		}
		turn++
	}
	each("open", func(r *peerRun) error {
		if r.open == nil {
			return nil
		}
		return r.open(ctx)
	})
	each("build", func(r *peerRun) error { return r.cell(ctx, "build", cells.build) })
	for round := range res.rounds {
		for _, r := range live {
			r.round = round
		}
		for i, q := range cells.questions {
			phase := fmt.Sprintf("q%d", i+1)
			each(phase, func(r *peerRun) error { return r.cell(ctx, phase, q) })
		}
		if round == 0 {
			each("mistake", func(r *peerRun) error { return r.cell(ctx, "mistake", cells.mistake) })
			each("fix", func(r *peerRun) error { return r.cell(ctx, "fix", cells.fix) })
			extra := func(phase string, f func(r *peerRun) func(context.Context) error) {
				each(phase, func(r *peerRun) error {
					if g := f(r); g != nil {
						return g(ctx)
					}
					return nil
				})
			}
			extra("plot", func(r *peerRun) func(context.Context) error { return r.plot })
			extra("long", func(r *peerRun) func(context.Context) error { return r.long })
			extra("interrupt", func(r *peerRun) func(context.Context) error { return r.interrupt })
		}
	}
	for _, r := range live {
		checkAnswers(r, want)
		if r.protocolErrors > 0 {
			r.note("%d line(s) on its stdout were not MCP (the client skipped them; the last: %s)", r.protocolErrors, clip(r.lastProtocolError))
		}
	}
	if pr.skipped == "" {
		w.kill(ctx, w.newClient(), peerSession)
	}
	return res
}

// peerSession is polyrepl's session of the task.
const peerSession = "peers"

// checkAnswers notes each question whose reply lacks the answer a fresh
// python3 gave for it.
func checkAnswers(r *peerRun, want map[string]string) {
	for _, c := range r.calls {
		a, ok := want[c.phase]
		if !ok || c.round != 0 || c.tool == "start_process" || c.tool == "read_process_output" {
			continue
		}
		if c.err == "" && !strings.Contains(c.reply, a) {
			r.note("%s: the reply lacks the answer %q", c.phase, clip(a))
		}
	}
}

// connect starts the server under the SDK's default environment plus env
// and counts its tool list and instructions.
func (r *peerRun) connect(w *world, sdk string, command string, args []string, env map[string]string) error {
	d, err := startPeerDriver(w, sdk)
	if err != nil {
		return err
	}
	r.drv = d
	// Every process the harness causes carries its tag.
	env[tagVar] = w.tag
	rep, err := d.do(map[string]any{"op": "connect", "command": command, "args": args, "env": env, "cwd": w.home})
	if err == nil && !rep.OK {
		err = errors.New(rep.Error)
	}
	if err != nil {
		d.close()
		r.drv = nil
		return err
	}
	r.connectSecs = rep.Secs
	r.toolList, r.tools = jsonRunes(rep.Tools), len(rep.Tools)
	r.instr = utf8.RuneCountInString(rep.Instructions)
	r.version = rep.Server.Version
	return nil
}

// call makes one tool call, keeps its cost, and returns its text.
func (r *peerRun) call(phase, tool string, args map[string]any, timeout time.Duration) (peerCall, error) {
	c := peerCall{phase: phase, round: r.round, tool: tool}
	rep, err := r.drv.do(map[string]any{"op": "call", "name": tool, "arguments": args, "timeout_ms": timeout.Milliseconds()})
	if err == nil && !rep.OK {
		c.secs = rep.Secs
		err = errors.New(rep.Error)
	}
	if err != nil {
		c.err = err.Error()
		r.calls = append(r.calls, c)
		return c, fmt.Errorf("%s: %w", tool, err)
	}
	c.secs = rep.Secs
	if rep.ProtocolErrors > 0 {
		r.protocolErrors, r.lastProtocolError = rep.ProtocolErrors, rep.LastProtocolError
	}
	if r.dump != "" {
		os.MkdirAll(r.dump, 0o755)
		name := fmt.Sprintf("peers-%s-%02d-%s-%s.txt", r.name, len(r.calls)+1, phase, tool)
		os.WriteFile(filepath.Join(r.dump, name), []byte(compactJSON(args)+"\n\n"+compactJSON(rep.Result)+"\n"), 0o644)
	}
	if res := rep.Result; res != nil {
		var text []string
		for _, b := range res.Content {
			if b["type"] == "text" {
				t, _ := b["text"].(string)
				text = append(text, t)
				c.text += utf8.RuneCountInString(t)
			} else {
				c.other++
			}
		}
		if res.StructuredContent != nil {
			c.sc = jsonRunes(res.StructuredContent)
		}
		c.isErr = res.IsError
		c.reply = strings.Join(text, "\n")
		if s := compactJSON(res.StructuredContent); res.StructuredContent != nil {
			c.reply += "\n" + s
		}
	}
	r.calls = append(r.calls, c)
	return c, nil
}

// startPolyreplPeer runs `polyrepl mcp` against the bench's daemon.
func startPolyreplPeer(ctx context.Context, w *world, sdk string, r *peerRun, cells peerCells) string {
	env := map[string]string{}
	for _, kv := range w.env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "HOME", "POLYREPL_PYTHON":
			env[k] = v
		}
	}
	if err := r.connect(w, sdk, w.bin, []string{"mcp"}, env); err != nil {
		return fmt.Sprintf("polyrepl mcp: %v", err)
	}
	w.kill(ctx, w.newClient(), peerSession)
	exec := func(phase, code string, timeout float64) (peerCall, error) {
		args := map[string]any{"session": peerSession, "code": code}
		if timeout > 0 {
			args["timeout"] = timeout
		}
		return r.call(phase, "exec", args, 2*time.Minute)
	}
	r.cell = func(_ context.Context, phase string, c peerCell) error {
		_, err := exec(phase, c.repl(), 0)
		return err
	}
	r.plot = func(context.Context) error {
		c, err := exec("plot", cells.plot+"\nplt.show()", 0)
		if err == nil && c.other == 0 && !strings.Contains(c.reply, ".png") {
			r.note("plot: the reply names no figure")
		}
		return err
	}
	r.long = func(context.Context) error {
		c, err := exec("long", cells.long.repl(), peerPatience.Seconds())
		if err != nil {
			return err
		}
		if strings.Contains(c.reply, peerLongDone) {
			r.note("long: the cell ended within the client's patience")
			return nil
		}
		_, err = r.call("long", "wait", map[string]any{"session": peerSession, "timeout": 30}, time.Minute)
		return err
	}
	r.interrupt = func(context.Context) error {
		if _, err := exec("interrupt", "import time\ntime.sleep(60)", 0.5); err != nil {
			return err
		}
		if _, err := r.call("interrupt", "interrupt", map[string]any{"session": peerSession}, time.Minute); err != nil {
			return err
		}
		c, err := exec("interrupt", "n", 0)
		if err == nil && !strings.Contains(c.reply, "200000") {
			r.note("interrupt: the data did not survive it (%s)", clip(c.reply))
		}
		return err
	}
	return ""
}

var dcPID = regexp.MustCompile(`PID (\d+)`)

// startDCPeer runs desktop-commander, quietened: its own configuration
// written before it first runs, with telemetry off and no welcome page,
// no feature flags fetched, and a placeholder where it would download a
// Chrome for PDF output.
func startDCPeer(ctx context.Context, w *world, sdk, dir string, r *peerRun, cells peerCells) string {
	pkg := filepath.Join(dir, "@wonderwhy-er", "desktop-commander", "dist")
	if _, err := os.Stat(filepath.Join(pkg, "index.js")); err != nil {
		return "not installed in POLYREPL_BENCH_PEERS (npm install @wonderwhy-er/desktop-commander@0.2.52, with PUPPETEER_SKIP_DOWNLOAD=1)"
	}
	cfgDir := filepath.Join(w.home, ".claude-server-commander")
	chrome := filepath.Join(cfgDir, "puppeteer-cache", "chrome", "none", "chrome-linux64", "chrome")
	if err := os.MkdirAll(filepath.Dir(chrome), 0o700); err != nil {
		return err.Error()
	}
	if err := os.WriteFile(chrome, []byte("#!/bin/sh\nexit 1\n"), 0o700); err != nil {
		return err.Error()
	}
	d, err := startPeerDriver(w, sdk)
	if err != nil {
		return err.Error()
	}
	rep, err := d.do(map[string]any{"op": "dc-config", "module": filepath.Join(pkg, "config-manager.js"), "file": filepath.Join(cfgDir, "config.json"),
		"set": map[string]any{"telemetryEnabled": false, "pendingWelcomeOnboarding": false, "welcomeOnboardingEligible": false}})
	d.close()
	if err == nil && !rep.OK {
		err = errors.New(rep.Error)
	}
	if err != nil {
		return fmt.Sprintf("writing its configuration: %v", err)
	}
	env := map[string]string{"DESKTOP_COMMANDER_DISABLE_TELEMETRY": "1", "DC_FLAG_URL": "http://127.0.0.1:9/flags.json"}
	if err := r.connect(w, sdk, "node", []string{filepath.Join(pkg, "index.js"), "--no-onboarding"}, env); err != nil {
		return fmt.Sprintf("desktop-commander: %v", err)
	}
	r.packageVersion(filepath.Dir(pkg))
	r.note("telemetry off (its config and DESKTOP_COMMANDER_DISABLE_TELEMETRY), feature flags from a closed port, a placeholder Chrome so that it downloads none")
	python := w.cfg.python
	r.open = func(context.Context) error {
		// Unbuffered: python3 -i on a pipe holds a cell's prints until
		// its next prompt, so a cell still running shows nothing.
		c, err := r.call("build", "start_process", map[string]any{"command": python + " -i -u", "timeout_ms": 30000}, time.Minute)
		if err != nil {
			return err
		}
		m := dcPID.FindStringSubmatch(c.reply)
		if m == nil {
			return fmt.Errorf("start_process named no pid: %s", clip(c.reply))
		}
		fmt.Sscan(m[1], &r.dcPID)
		r.note("`python3 -i -u`: without -u a running cell's prints wait for its next prompt")
		return nil
	}
	interact := func(phase, input string, timeout time.Duration) (peerCall, error) {
		if r.dcPID == 0 {
			return peerCall{}, errors.New("no python process")
		}
		return r.call(phase, "interact_with_process", map[string]any{"pid": r.dcPID, "input": input, "timeout_ms": timeout.Milliseconds()}, timeout+time.Minute)
	}
	r.cell = func(_ context.Context, phase string, c peerCell) error {
		_, err := interact(phase, c.repl(), time.Minute)
		return err
	}
	r.plot = func(context.Context) error {
		_, err := interact("plot", cells.plot+"\nplt.savefig('daily.png'); plt.close('all'); print('daily.png')", time.Minute)
		return err
	}
	// read collects what a running cell printed, until it shows until
	// or python prompts again. A read from where the last left off
	// returns as soon as there is new output (or after its timeout with
	// none); when it says there were new lines but shows none, the end
	// of the output is read instead, as an agent would.
	read := func(phase, until string) error {
		args := map[string]any{"pid": r.dcPID, "timeout_ms": 30000}
		for i := range 5 {
			c, err := r.call(phase, "read_process_output", args, time.Minute)
			if err != nil {
				return err
			}
			if strings.Contains(c.reply, until) || strings.Contains(c.reply, "waiting for input") {
				return nil
			}
			if strings.Contains(c.reply, "No output in requested range") && !strings.Contains(c.reply, "Reading 0 new lines") {
				r.note("%s: read_process_output said it read new lines but showed none: read again from the end (offset -5)", phase)
				args = map[string]any{"pid": r.dcPID, "offset": -5}
			}
			if _, ok := args["offset"]; ok && i > 0 {
				time.Sleep(time.Second)
			}
		}
		return fmt.Errorf("no %q after 5 reads", until)
	}
	r.long = func(context.Context) error {
		c, err := interact("long", cells.long.repl(), peerPatience)
		if err != nil {
			return err
		}
		if strings.Contains(c.reply, peerLongDone) {
			r.note("long: the cell ended within the client's patience")
			return nil
		}
		r.note("long cell: collected with read_process_output, which repeats all the output since the last read (by default, the whole process's)")
		return read("long", peerLongDone)
	}
	r.interrupt = func(context.Context) error {
		if _, err := interact("interrupt", "import time; time.sleep(60)", 500*time.Millisecond); err != nil {
			return err
		}
		// force_terminate sends SIGINT and SIGKILL a second later: the
		// session would be lost. A second process sends SIGINT alone.
		if _, err := r.call("interrupt", "start_process", map[string]any{"command": fmt.Sprintf("kill -INT %d", r.dcPID), "timeout_ms": 10000}, time.Minute); err != nil {
			return err
		}
		r.note("interrupt: no tool for it (force_terminate kills the process a second after SIGINT): `kill -INT PID` through start_process")
		if err := read("interrupt", "KeyboardInterrupt"); err != nil {
			return err
		}
		c, err := interact("interrupt", "n", time.Minute)
		if err == nil && !strings.Contains(c.reply, "200000") {
			r.note("interrupt: the data did not survive it (%s)", clip(c.reply))
		}
		return err
	}
	return ""
}

// startRunnerPeer runs mcp-server-code-runner: a fresh process per call,
// so each call rebuilds the data. Its python is `python` on PATH, which
// the harness points at the bench's python (a directory of its own first
// on PATH), and its one file (tmp.py in the temporary directory) is kept
// in the harness's own.
func startRunnerPeer(ctx context.Context, w *world, sdk, dir, python string, r *peerRun, cells peerCells) string {
	cli := filepath.Join(dir, "mcp-server-code-runner", "dist", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		return "not installed in POLYREPL_BENCH_PEERS (npm install mcp-server-code-runner@0.1.8)"
	}
	bin := filepath.Join(w.root, "peer-bin")
	tmp := filepath.Join(w.root, "peer-tmp")
	for _, d := range []string{bin, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err.Error()
		}
	}
	if err := os.Symlink(python, filepath.Join(bin, "python")); err != nil && !os.IsExist(err) {
		return err.Error()
	}
	env := map[string]string{"PATH": bin + string(os.PathListSeparator) + os.Getenv("PATH"), "TMPDIR": tmp}
	if err := r.connect(w, sdk, "node", []string{cli}, env); err != nil {
		return fmt.Sprintf("code-runner: %v", err)
	}
	r.packageVersion(filepath.Dir(filepath.Dir(cli)))
	r.note("runs `python` from PATH: a directory with `python` → %s put first on PATH", python)
	run := func(phase, code string) (peerCall, error) {
		return r.call(phase, "run-code", map[string]any{"code": code, "languageId": "python"}, 2*time.Minute)
	}
	r.cell = func(_ context.Context, phase string, c peerCell) error {
		code := c.script()
		if phase != "build" {
			code = cells.build.body + "\n" + code
		}
		_, err := run(phase, code)
		return err
	}
	r.plot = func(context.Context) error {
		_, err := run("plot", cells.build.body+"\n"+cells.plot+"\nplt.savefig('daily.png')\nprint('daily.png')")
		return err
	}
	r.cannot = []string{"long", "interrupt"}
	r.note("long cell and interrupt: none (a call runs its process to the end and returns nothing before)")
	return ""
}

// packageVersion is the npm package's version, which the tables show;
// the server's own word, if it differs, in brackets.
func (r *peerRun) packageVersion(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return
	}
	var pkg struct{ Version string }
	if json.Unmarshal(b, &pkg) != nil || pkg.Version == "" {
		return
	}
	if r.version != "" && r.version != pkg.Version {
		r.version = fmt.Sprintf("%s (says %s)", pkg.Version, r.version)
		return
	}
	r.version = pkg.Version
}
