package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
)

// runtimeRow is one language compared as a fresh process per command
// against a polyrepl session of it. Another runtime is one more line in
// runtimes; a runtime whose spawn command is not installed, or that the
// daemon does not know yet, is skipped with the reason.
type runtimeRow struct {
	name    string   // as the tables show it
	spawn   []string // a fresh process that evaluates the trivial cell and prints it; "{python}" is -python
	session string   // the polyrepl session runtime, "" if polyrepl has none
	code    string   // the trivial cell in that language, for the session
	printed string   // what the fresh process prints (trimmed)
	shown   string   // the session's value for the cell, or its output if the runtime has no values
}

var runtimes = []runtimeRow{
	{name: "python", spawn: []string{"{python}", "-c", "print(1+1)"}, session: "python", code: "1+1", printed: "2", shown: "2"},
	{name: "R", spawn: []string{"Rscript", "-e", "1+1"}, session: "r", code: "1+1", printed: "[1] 2", shown: "[1] 2"},
	{name: "ruby", spawn: []string{"ruby", "-e", "p 1+1"}, session: "ruby", code: "1+1", printed: "2", shown: "2"},
	{name: "node", spawn: []string{"node", "-e", "console.log(1+1)"}, session: "node", code: "1+1", printed: "2", shown: "2"},
	{name: "bash", spawn: []string{"bash", "-c", "echo $((1+1))"}, session: "bash", code: "echo $((1+1))", printed: "2", shown: "2\n"},
	// GHCi prints values, so its session's answer is output.
	{name: "ghci", spawn: []string{"ghc", "-e", "1+1"}, session: "ghci", code: "1+1", printed: "2", shown: "2\n"},
}

// alt is one row measured side by side with others: run takes one sample
// (seconds), doing any untimed preparation or cleanup itself.
type alt struct {
	key   string // for targets and pairing
	label string
	ref   bool // a reference point, not a way to run a cell
	note  string
	run   func(rep int) (float64, error)

	samples series
	extra   series // a second measure per sample, e.g. memory; NaN if none
	err     error
}

// interleave runs every alt once per repetition, round-robin, starting
// each repetition one alt further on so no row always follows the same
// one. A row that fails stops there, with its error kept.
func interleave(what string, alts []*alt, warm, reps int) {
	for _, a := range alts {
		a.samples, a.extra = nanSeries(reps), nanSeries(reps)
	}
	logf("%s: %d rows × %d repetitions", what, len(alts), reps)
	for _, a := range alts {
		for i := 0; i < warm && a.err == nil; i++ {
			if _, err := a.run(-1); err != nil {
				a.err = err
				logf("%s: %s failed while warming up: %v", what, a.label, err)
			}
		}
	}
	for rep := range reps {
		for k := range alts {
			a := alts[(rep+k)%len(alts)]
			if a.err != nil {
				continue
			}
			t, err := a.run(rep)
			if err != nil {
				a.err = err
				logf("%s: %s failed (repetition %d): %v", what, a.label, rep, err)
				continue
			}
			a.samples[rep] = t
		}
	}
}

func find(alts []*alt, key string) *alt {
	for _, a := range alts {
		if a.key == key {
			return a
		}
	}
	return nil
}

// samplesOf is a row's samples, or an empty series if the row is missing.
func samplesOf(alts []*alt, key string) series {
	if a := find(alts, key); a != nil && a.samples != nil {
		return a.samples
	}
	return nil
}

// timeProcess runs argv to its end and returns how long that took; check
// judges what it printed.
func (w *world) timeProcess(argv []string, check func(stdout string) error) (float64, error) {
	cmd := w.command(argv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if err != nil {
		return 0, fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, clip(errb.String()))
	}
	if check != nil {
		if err := check(out.String()); err != nil {
			return 0, fmt.Errorf("%s: %v", strings.Join(argv, " "), err)
		}
	}
	return secs(d), nil
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

const (
	cellTrivial = "1+1"
	cellBig     = `print("x"*100000)`
)

func wantValue(v string) func(string) error {
	return func(out string) error {
		if strings.TrimSpace(out) != v {
			return fmt.Errorf("printed %q, want %q", clip(out), v)
		}
		return nil
	}
}

func wantLen(n int) func(string) error {
	return func(out string) error {
		if len(out) < n {
			return fmt.Errorf("printed %d bytes, want at least %d", len(out), n)
		}
		return nil
	}
}

// clientExec times one cell through an in-process client.
func clientExec(ctx context.Context, c *client.Client, name string, req api.ExecRequest, check func(api.CellResult) error) (float64, error) {
	t0 := time.Now()
	r, err := c.Exec(ctx, name, req)
	d := time.Since(t0)
	if err != nil {
		return 0, err
	}
	if r.Status != api.StatusDone {
		return 0, fmt.Errorf("status %s: %s %v", r.Status, clip(r.Output), r.Error)
	}
	if check != nil {
		if err := check(r); err != nil {
			return 0, err
		}
	}
	return secs(d), nil
}

func valueIs(v string) func(api.CellResult) error {
	return func(r api.CellResult) error {
		if r.Value != v {
			return fmt.Errorf("value %q, want %q", r.Value, v)
		}
		return nil
	}
}

// shownIs checks a cell's value, or its output for a runtime without
// values (a shell).
func shownIs(v string) func(api.CellResult) error {
	return func(r api.CellResult) error {
		if r.Value != v && (r.Value != "" || r.Output != v) {
			return fmt.Errorf("value %q, output %q; want %q", r.Value, r.Output, v)
		}
		return nil
	}
}

func bigOutput(r api.CellResult) error {
	if r.OutputCut == nil || r.OutputCut.Total < 100000 {
		return fmt.Errorf("want a cut 100 KB output, got %d bytes, cut %+v", len(r.Output), r.OutputCut)
	}
	return nil
}

func (w *world) resolve(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = strings.ReplaceAll(a, "{python}", w.cfg.python)
	}
	return out
}

// runtimeResult is one line of the runtimes table.
type runtimeResult struct {
	row            runtimeRow
	spawn, session *alt
	skipped        string
}

// roundTrips measures the trivial cell and the 100 KB cell through every
// route, each table in one interleaved run.
func roundTrips(ctx context.Context, w *world, c config) (trivial, big []*alt, rts []runtimeResult) {
	cl := w.newClient()
	// One session per route, so no route pays for another's output.
	for _, name := range []string{"cli", "go"} {
		if _, err := cl.Exec(ctx, name, w.execReq("import sys")); err != nil {
			w.skip("polyrepl rows", err.Error())
			return nil, nil, nil
		}
	}
	var tm *tmuxPane
	if t, why := startTmux(w); why != "" {
		w.skip("tmux pane rows", why)
	} else {
		tm = t
	}
	if j, why := startJupyter(w); why != "" {
		w.skip("Jupyter rows", why)
	} else {
		w.jup = j
	}
	kernels, stopKernels := kernelRows(ctx, w, cl)

	// The trivial cell.
	trivial = append(trivial,
		&alt{key: "hello", label: "static Go hello-world: start and exit", ref: true,
			run: func(int) (float64, error) { return w.timeProcess([]string{w.hello}, wantValue("hello, world")) }},
		&alt{key: "pass", label: fmt.Sprintf("`%s -c pass`", c.python), ref: true,
			run: func(int) (float64, error) { return w.timeProcess([]string{c.python, "-c", "pass"}, nil) }},
		// The CLI's start alone (every package's initialisation, no
		// daemon): the part of the row below a command cannot skip.
		&alt{key: "start", label: "`polyrepl --version`: the binary's start and exit (no daemon)", ref: true,
			run: func(int) (float64, error) { return w.timeProcess([]string{w.bin, "--version"}, nil) }},
		&alt{key: "cli", label: "`polyrepl exec NAME '1+1'` (a process)",
			run: func(int) (float64, error) {
				return w.timeProcess([]string{w.bin, "exec", "cli", cellTrivial}, func(out string) error {
					if !strings.Contains(out, "2") {
						return fmt.Errorf("printed %q", clip(out))
					}
					return nil
				})
			}},
	)
	for _, rt := range runtimes {
		res := runtimeResult{row: rt}
		argv := w.resolve(rt.spawn)
		if _, err := exec.LookPath(argv[0]); err != nil {
			res.skipped = fmt.Sprintf("%s is not installed", argv[0])
			w.skip(rt.name+" rows", res.skipped)
			rts = append(rts, res)
			continue
		}
		res.spawn = &alt{key: "spawn:" + rt.name, label: fmt.Sprintf("%s: a fresh `%s` per command", rt.name, strings.Join(argv, " ")),
			run: func(int) (float64, error) { return w.timeProcess(argv, wantValue(rt.printed)) }}
		trivial = append(trivial, res.spawn)
		if rt.session == "" {
			res.skipped = "polyrepl has no " + rt.name + " session runtime yet"
			w.skip(rt.name+" polyrepl session row", res.skipped)
		} else {
			name := "rt-" + rt.session
			req := w.execReq(rt.code)
			req.Spawn.Runtime = rt.session
			if rt.session != "python" {
				req.Spawn.Exe = ""
			}
			if _, err := cl.Exec(ctx, name, req); err != nil {
				res.skipped = err.Error()
				w.skip(rt.name+" polyrepl session row", res.skipped)
			} else {
				res.session = &alt{key: "session:" + rt.name, label: fmt.Sprintf("%s: polyrepl session, Go client in-process", rt.name),
					run: func(int) (float64, error) { return clientExec(ctx, cl, name, req, shownIs(rt.shown)) }}
				trivial = append(trivial, res.session)
			}
		}
		rts = append(rts, res)
	}
	trivial = append(trivial, &alt{key: "status", label: "polyrepl, Go client in-process: `Status` (the HTTP round trip alone, no session)", ref: true,
		run: func(int) (float64, error) {
			t0 := time.Now()
			_, err := cl.Status(ctx)
			return secs(time.Since(t0)), err
		}})
	if w.jup != nil {
		trivial = append(trivial,
			&alt{key: "jupyter", label: "Jupyter kernel via jupyter_client (from Go, through the driver's pipe)",
				run: func(int) (float64, error) { return w.jup.exec(cellTrivial, 1) }},
			&alt{key: "ping", label: "the Jupyter driver's pipe alone (a ping, no kernel)", ref: true,
				run: func(int) (float64, error) { return w.jup.ping() }})
	}
	// polyrepl's own sessions on a Jupyter kernel (kernels.go), in this
	// run so they pair with the jupyter_client row.
	trivial = append(trivial, kernels...)
	if tm != nil {
		trivial = append(trivial, &alt{key: "tmux", label: "tmux pane: send-keys, poll capture-pane for a marker",
			run: func(int) (float64, error) {
				return tm.run(cellTrivial, func(s string) bool { return strings.HasSuffix(strings.TrimSpace(s), "\n2") })
			}})
	}
	// An agent's route: an MCP client nobody here wrote, over stdio.
	mr, why := startMCPRoute(w)
	if why != "" {
		w.skip("the TypeScript MCP client rows", why)
	} else {
		trivial = append(trivial, mr.rows()...)
	}
	interleave("trivial cell 1+1", trivial, 3, c.reps)
	stopKernels()
	if mr != nil {
		mr.close()
	}

	// The 100 KB cell.
	goBig := w.execReq(cellBig)
	big = append(big,
		&alt{key: "cli", label: "`polyrepl exec NAME 'print(\"x\"*100000)'` (a process)",
			run: func(int) (float64, error) {
				return w.timeProcess([]string{w.bin, "exec", "cli", cellBig}, wantLen(30000))
			}},
		&alt{key: "client", label: "polyrepl, Go client in-process",
			run: func(int) (float64, error) { return clientExec(ctx, cl, "go", goBig, bigOutput) }},
		&alt{key: "spawn:python", label: fmt.Sprintf("a fresh `%s -c 'print(\"x\"*100000)'` per command", c.python),
			run: func(int) (float64, error) { return w.timeProcess([]string{c.python, "-c", cellBig}, wantLen(100001)) }},
	)
	if w.jup != nil {
		big = append(big, &alt{key: "jupyter", label: "Jupyter kernel via jupyter_client",
			run: func(int) (float64, error) { return w.jup.exec(cellBig, 100000) }})
	}
	if tm != nil {
		big = append(big, &alt{key: "tmux", label: "tmux pane: send-keys, poll capture-pane for a marker",
			run: func(int) (float64, error) {
				return tm.run(cellBig, func(s string) bool { return strings.Contains(s, strings.Repeat("x", 100000)) })
			}})
	}
	interleave("100 KB cell", big, 2, c.reps)
	if tm != nil {
		w.stopTmux()
	}
	// The in-process row of the trivial table is the python session row.
	if a := find(trivial, "session:python"); a != nil {
		a.key = "client"
		a.label = "polyrepl, Go client in-process (python session)"
	}
	return trivial, big, rts
}

// cellPlot draws a 640×480 line plot (matplotlib's default figure).
const cellPlot = "import matplotlib\nmatplotlib.use('agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2, 4])\nplt.show()"

// plots times the round trip of a cell that draws a plot: in a polyrepl
// session (the figure saved as a PNG file the reply names), in a Jupyter
// kernel (its inline backend sends the PNG base64), and in a fresh
// process per command that imports matplotlib and saves the figure.
func plots(ctx context.Context, w *world, c config) []*alt {
	if err := exec.Command(c.python, "-c", "import matplotlib").Run(); err != nil {
		w.skip("plot rows", c.python+" has no matplotlib (Debian: python3-matplotlib)")
		return nil
	}
	cl := w.newClient()
	req := w.execReq(cellPlot)
	if _, err := cl.Exec(ctx, "plot", req); err != nil {
		w.skip("plot rows", err.Error())
		return nil
	}
	png := filepath.Join(w.home, "plot.png")
	alts := []*alt{
		{key: "client", label: "polyrepl, Go client in-process (the PNG saved, named in the reply)",
			run: func(int) (float64, error) {
				return clientExec(ctx, cl, "plot", req, func(r api.CellResult) error {
					if len(r.Rich) != 1 || r.Rich[0].Width != 640 {
						return fmt.Errorf("rich outputs %+v, want one 640-wide PNG", r.Rich)
					}
					return nil
				})
			}},
		{key: "spawn:python", label: fmt.Sprintf("a fresh `%s -c` per command, saving the figure to a file", c.python),
			run: func(int) (float64, error) {
				return w.timeProcess([]string{c.python, "-c", strings.Replace(cellPlot, "plt.show()", "plt.savefig("+strconv.Quote(png)+")", 1)}, nil)
			}},
	}
	if w.jup != nil {
		inline := "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2, 4])\nplt.show()"
		if _, err := w.jup.exec(inline, 1000); err != nil {
			w.skip("Jupyter plot row", err.Error())
		} else {
			alts = append(alts, &alt{key: "jupyter", label: "Jupyter kernel via jupyter_client (inline backend, the PNG base64 in display_data)",
				run: func(int) (float64, error) { return w.jup.exec(inline, 1000) }})
		}
	}
	interleave("plot cell", alts, 2, max(c.reps/5, 5))
	return alts
}
