package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
)

// The context-cost section (issue 15) is a scripted agent run: two MCP
// clients, each its own `polyrepl mcp` process over stdio, analyse a
// generated CSV in two sessions of the bench's daemon. What it measures
// is what the replies cost a model, in characters (runes): each call's
// text content and its structured content (compact JSON), the notes in
// both, and once per conversation the tool list and the instructions.
//
// The script is fixed code on fixed data, and a cell whose reply depends
// on timing is given room (a timeout well under the cell's length, a wait
// well over it), so that two runs, before and after a change, compare
// the same calls.

// ctxClients are the two MCP clients' names (Implementation.Name).
var ctxClients = [2]string{"agent-a", "agent-b"}

// contextBeforeFile holds the run measured before issue 15's lean
// replies, relative to the module root.
const contextBeforeFile = "bench/testdata/context-before.json"

// ctxStep is one call of the script.
type ctxStep struct {
	client int    // index into ctxClients
	tool   string // the MCP tool
	what   string // a few words for the table
	args   map[string]any
	// argsFn, if set, makes args when the call is made (for what the
	// run decides, such as an entry's id).
	argsFn func(ctx context.Context) (map[string]any, error)
}

// callCost is what one call's reply cost.
type callCost struct {
	N           int    `json:"n"`
	Client      string `json:"client"`
	Tool        string `json:"tool"`
	What        string `json:"what"`
	Text        int    `json:"text"`             // runes of the text content
	Structured  int    `json:"structured"`       // runes of structuredContent as compact JSON
	TextNotes   int    `json:"text_notes"`       // of Text, the bracketed notes
	StructNotes int    `json:"structured_notes"` // of Structured, the notes array
	IsError     bool   `json:"is_error,omitempty"`
}

// ctxTotals sums a run, with what is paid once per conversation.
type ctxTotals struct {
	Text          int `json:"text"`
	Structured    int `json:"structured"`
	TextNotes     int `json:"text_notes"`
	StructNotes   int `json:"structured_notes"`
	ToolList      int `json:"tool_list"`      // runes of tools/list's tools as compact JSON
	OutputSchemas int `json:"output_schemas"` // of ToolList, the output schemas
	Instructions  int `json:"instructions"`   // runes of InitializeResult.Instructions
}

// contextRun is one measured run, as context-before.json keeps it.
type contextRun struct {
	Commit   string     `json:"commit"`   // `git rev-parse --short HEAD`, "+dirty" if internal/ or cmd/ had changes
	Measured string     `json:"measured"` // when, UTC
	Totals   ctxTotals  `json:"totals"`
	Calls    []callCost `json:"calls"`
}

// contextResult is the section's measurement: this run, the saved
// "before", and what went wrong, if anything.
type contextResult struct {
	now    *contextRun
	before *contextRun
	err    error
}

// The CSV: 100,000 rows from a fixed seed.
const (
	ctxRows      = 100_000
	ctxCustomers = 3450
)

func writeSalesCSV(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	rng := rand.New(rand.NewPCG(15, 15))
	regions := []string{"north", "south", "east", "west", "central"}
	products := []string{"widget", "gadget", "gizmo", "doohickey", "sprocket", "flange"}
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	fmt.Fprintln(w, "id,date,region,customer,product,qty,amount")
	for i := 1; i <= ctxRows; i++ {
		d := day.AddDate(0, 0, rng.IntN(365)).Format("2006-01-02")
		fmt.Fprintf(w, "%d,%s,%s,C%04d,%s,%d,%d.%02d\n", i, d, regions[rng.IntN(len(regions))],
			rng.IntN(ctxCustomers), products[rng.IntN(len(products))], 1+rng.IntN(9), 5+rng.IntN(495), rng.IntN(100))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ctxScript is the agent run. Client 0 does the analysis; client 1 comes
// into the same session half-way, so client 0 hears of it.
func ctxScript(w *world) []ctxStep {
	a, b := 0, 1
	exec := func(c int, session, what, code string, timeout ...float64) ctxStep {
		args := map[string]any{"session": session, "code": code}
		if len(timeout) > 0 {
			args["timeout"] = timeout[0]
		}
		return ctxStep{client: c, tool: "exec", what: what, args: args}
	}
	on := func(c int, tool, session, what string) ctxStep {
		return ctxStep{client: c, tool: tool, what: what, args: map[string]any{"session": session}}
	}
	return []ctxStep{
		{client: a, tool: "sessions", what: "look for a session to reuse (none)", args: map[string]any{}},
		exec(a, "etl", "load the 100k-row CSV (new session)",
			"import csv, collections, statistics, time\nrows = list(csv.DictReader(open('sales.csv', newline='')))\nlen(rows)"),
		exec(a, "etl", "look at one row", "rows[0]"),
		exec(a, "etl", "a mistake: sum strings (TypeError)", "total = sum(r['amount'] for r in rows)\ntotal"),
		exec(a, "etl", "its fix", "total = sum(float(r['amount']) for r in rows)\nround(total, 2)"),
		exec(a, "etl", "totals by region",
			"by_region = collections.defaultdict(float)\nfor r in rows:\n    by_region[r['region']] += float(r['amount'])\n{k: round(v, 2) for k, v in sorted(by_region.items())}"),
		exec(a, "stats", "a second session: load and sort amounts",
			"import csv, statistics\nrows = list(csv.DictReader(open('sales.csv', newline='')))\namounts = sorted(float(r['amount']) for r in rows)\nround(statistics.median(amounts), 2), round(statistics.pstdev(amounts), 2)"),
		exec(a, "stats", "deciles", "[round(q, 2) for q in statistics.quantiles(amounts, n=10)]"),
		exec(a, "etl", "a long cell (4 s) with timeout 1: still running",
			"print('counting rows by month...')\nby_month = collections.Counter(r['date'][:7] for r in rows)\ntime.sleep(4)\nprint('done:', len(by_month), 'months')\ndict(sorted(by_month.items()))", 1),
		exec(a, "stats", "meanwhile, in the other session", "len(amounts)"),
		exec(a, "stats", "… and again, the long cell still running", "amounts[-1]"),
		{client: a, tool: "wait", what: "collect the long cell", args: map[string]any{"session": "etl", "timeout": 30}},
		exec(a, "etl", "a 5,000-line print",
			"for r in rows[:5000]:\n    print(r['id'], r['region'], r['amount'], sep=',')"),
		exec(a, "etl", "a ~62k-character value (a dict)",
			"per_customer = collections.defaultdict(float)\nfor r in rows:\n    per_customer[r['customer']] += float(r['amount'])\nper_customer = {k: round(v, 2) for k, v in sorted(per_customer.items())}\nper_customer"),
		{client: b, tool: "sessions", what: "second client: list sessions", args: map[string]any{}},
		exec(b, "etl", "second client: top customers in etl",
			"top = sorted(per_customer.items(), key=lambda kv: -kv[1])[:5]\ntop"),
		exec(b, "etl", "second client: a print", "print(len(per_customer), 'customers')"),
		exec(a, "etl", "a 5-character answer, after the other's activity", "round(total / len(rows), 2)"),
		on(a, "history", "etl", "history list"),
		{client: a, tool: "history", what: "one entry by id (the other client's)", argsFn: func(ctx context.Context) (map[string]any, error) {
			id, err := firstEntryOf(ctx, w, "etl", ctxClients[b])
			return map[string]any{"session": "etl", "id": id}, err
		}},
		exec(a, "stats", "write a result to a file",
			"import json\njson.dump({'median': statistics.median(amounts)}, open('stats.json', 'w'))\nprint('saved')"),
		on(a, "kill", "stats", "kill a session"),
		exec(a, "stats", "re-exec in the killed session",
			"import json, statistics\njson.load(open('stats.json'))"),
		exec(a, "etl", "a cell to interrupt (timeout 0.5)", "time.sleep(60)", 0.5),
		on(a, "interrupt", "etl", "interrupt it"),
		exec(b, "etl", "second client: after the interrupt", "len(rows)"),
		{client: a, tool: "sessions", what: "list sessions", args: map[string]any{}},
		exec(a, "etl", "a last question", "sorted(by_region, key=by_region.get)[-1]"),
	}
}

// firstEntryOf is the id of the first cell who ran in a session, asked
// of the daemon directly so that it does not depend on a reply's shape.
func firstEntryOf(ctx context.Context, w *world, session, who string) (string, error) {
	r, err := w.newClient().History(ctx, session, 0)
	if err != nil {
		return "", err
	}
	for _, e := range r.Entries {
		if e.Kind == api.EntryCell && e.Who == who {
			return e.ID, nil
		}
	}
	return "", fmt.Errorf("no cell of %s in %s's record", who, session)
}

// contextCost runs the script through two `polyrepl mcp` processes and
// counts what each reply costs.
func contextCost(ctx context.Context, w *world, c config) *contextResult {
	res := &contextResult{}
	res.before, res.err = readContextRun(filepath.Join(w.moduleRoot, contextBeforeFile))
	if res.err != nil {
		logf("context cost: %v", res.err)
		res.err = nil
	}
	logf("context cost: the scripted agent run (issue 15)")
	res.now, res.err = runContextScript(ctx, w)
	if res.err != nil {
		logf("context cost: %v", res.err)
	}
	// The script's sessions end with it, so that later sections start
	// from none.
	cl := w.newClient()
	for _, name := range []string{"etl", "stats"} {
		w.kill(ctx, cl, name)
	}
	return res
}

func runContextScript(ctx context.Context, w *world) (*contextRun, error) {
	run := &contextRun{Commit: gitCommit(w.moduleRoot), Measured: time.Now().UTC().Format("2006-01-02 15:04 MST")}
	if err := writeSalesCSV(filepath.Join(w.home, "sales.csv")); err != nil {
		return nil, err
	}
	var sessions [2]*mcp.ClientSession
	var logs [2]*bytes.Buffer
	defer func() {
		for _, s := range sessions {
			if s != nil {
				s.Close()
			}
		}
	}()
	for i, name := range ctxClients {
		cmd := w.command(w.bin, "mcp")
		logs[i] = &bytes.Buffer{}
		cmd.Stderr = logs[i]
		cl := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		s, err := cl.Connect(cctx, &mcp.CommandTransport{Command: cmd}, nil)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("connecting %s to polyrepl mcp: %w\n%s", name, err, logs[i])
		}
		sessions[i] = s
	}
	init := sessions[0].InitializeResult()
	if init == nil {
		return nil, errors.New("no initialize result")
	}
	run.Totals.Instructions = utf8.RuneCountInString(init.Instructions)
	tl, err := sessions[0].ListTools(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	run.Totals.ToolList, run.Totals.OutputSchemas = toolListCost(tl.Tools)
	if w.cfg.dump != "" {
		os.MkdirAll(w.cfg.dump, 0o755)
		os.WriteFile(filepath.Join(w.cfg.dump, "00-instructions.txt"), []byte(init.Instructions), 0o644)
		os.WriteFile(filepath.Join(w.cfg.dump, "00-tools.json"), []byte(compactJSON(tl.Tools)), 0o644)
	}

	for i, st := range ctxScript(w) {
		args := st.args
		if st.argsFn != nil {
			if args, err = st.argsFn(ctx); err != nil {
				return run, fmt.Errorf("call %d (%s): %w", i+1, st.what, err)
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		r, err := sessions[st.client].CallTool(cctx, &mcp.CallToolParams{Name: st.tool, Arguments: args})
		cancel()
		if err != nil {
			return run, fmt.Errorf("call %d (%s %s): %w\n%s", i+1, st.tool, st.what, err, logs[st.client])
		}
		if w.cfg.dump != "" {
			dumpReply(w.cfg.dump, i+1, st, args, r)
		}
		cc := replyCost(r)
		cc.N, cc.Client, cc.Tool, cc.What = i+1, ctxClients[st.client], st.tool, st.what
		run.Calls = append(run.Calls, cc)
		run.Totals.add(cc)
	}
	return run, nil
}

func (t *ctxTotals) add(c callCost) {
	t.Text += c.Text
	t.Structured += c.Structured
	t.TextNotes += c.TextNotes
	t.StructNotes += c.StructNotes
}

// replyCost counts one reply: its text, its structured content as
// compact JSON, and the notes of each.
func replyCost(r *mcp.CallToolResult) callCost {
	var c callCost
	c.IsError = r.IsError
	for _, ct := range r.Content {
		if t, ok := ct.(*mcp.TextContent); ok {
			c.Text += utf8.RuneCountInString(t.Text)
			c.TextNotes += textNotes(t.Text)
		}
	}
	if r.StructuredContent != nil {
		c.Structured = jsonRunes(r.StructuredContent)
		if m, ok := r.StructuredContent.(map[string]any); ok && m["notes"] != nil {
			c.StructNotes = jsonRunes(m["notes"])
		}
	}
	return c
}

// toolListCost is the runes of the tools as tools/list gives them, and
// of their output schemas.
func toolListCost(tools []*mcp.Tool) (all, outputSchemas int) {
	for _, t := range tools {
		if t.OutputSchema != nil {
			outputSchemas += jsonRunes(t.OutputSchema)
		}
	}
	return jsonRunes(tools), outputSchemas
}

// dumpReply writes a call's reply, text and structured content, for a
// person to read what the numbers count (-dump DIR).
func dumpReply(dir string, n int, st ctxStep, args map[string]any, r *mcp.CallToolResult) {
	var b strings.Builder
	fmt.Fprintf(&b, "### %d %s: %s %s\n\n", n, ctxClients[st.client], st.tool, compactJSON(args))
	for _, ct := range r.Content {
		if t, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(t.Text + "\n")
		}
	}
	fmt.Fprintf(&b, "\n### structuredContent\n\n%s\n", compactJSON(r.StructuredContent))
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d-%s.txt", n, st.tool)), []byte(b.String()), 0o644)
}

// compactJSON is v as compact JSON, HTML characters unescaped.
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// jsonRunes is the length in runes of v as compact JSON, not escaping
// HTML characters (a model reads them as they are).
func jsonRunes(v any) int { return utf8.RuneCountInString(compactJSON(v)) }

// textNotes counts the runes of the notes in a reply's text: each runs
// from a line starting with "[" to the first line ending with "]", as
// the server brackets them, newlines between its lines included. A "["
// never closed is not a note.
func textNotes(text string) int {
	lines := strings.Split(text, "\n")
	n := 0
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "[") {
			continue
		}
		for j := i; j < len(lines); j++ {
			if strings.HasSuffix(lines[j], "]") {
				n += utf8.RuneCountInString(strings.Join(lines[i:j+1], "\n"))
				i = j
				break
			}
		}
	}
	return n
}

// gitCommit names the commit measured, marked dirty if the code under
// measure (internal/, cmd/) differs from it.
func gitCommit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--", "internal", "cmd").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		commit += "+dirty"
	}
	return commit
}

func readContextRun(path string) (*contextRun, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("no \"before\" run: %w", err)
	}
	var r contextRun
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

func writeContextRun(path string, r *contextRun) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
