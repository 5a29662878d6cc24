package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// report is everything one run measured.
type report struct {
	cfg     config
	began   time.Time
	elapsed time.Duration
	machine []string

	trivial, big []*alt
	plot         []*alt
	runtimes     []runtimeResult
	create       []*alt
	interrupt    []*alt
	conc         *concResult
	through      []*alt
	idle         *idleResult
	holders      *holderResult
	context      *contextResult
	owner        *ownerResult
	fork         *forkResult
	many         *manyResult
	peers        *peersResult
	skips        []string
	failed       []failure // sections that failed; the run went on
	took         []sectionTime
}

// describeMachine says what the numbers were measured on.
func describeMachine(python string) []string {
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := "unknown"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				var kb float64
				fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
				mem = fmt.Sprintf("%.1f GiB", kb/(1<<20))
			}
		}
	}
	kernel := "unknown"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = "Linux " + strings.TrimSpace(string(b))
	}
	say := func(argv ...string) string {
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			return "not available"
		}
		return strings.TrimSpace(string(out))
	}
	return []string{
		"CPU: " + cpu,
		fmt.Sprintf("Cores: %d", runtime.NumCPU()),
		"Memory: " + mem,
		"Kernel: " + kernel,
		fmt.Sprintf("Go: %s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH),
		"Python: " + python + " (" + say(python, "--version") + ")",
		"jupyter_client / ipykernel: " + say(python, "-c", "import jupyter_client, ipykernel; print(jupyter_client.__version__, '/', ipykernel.__version__)"),
		"tmux: " + say("tmux", "-V"),
	}
}

// target is one goal of issue 4 next to its measurement.
type target struct {
	text     string
	measured string
	met      bool
	known    bool // false: not measured (a row was skipped or failed)
}

func (t target) verdict() string {
	switch {
	case !t.known:
		return "not measured"
	case t.met:
		return "met"
	default:
		return "**missed**"
	}
}

func judge(text string, v float64, ok func(float64) bool, measured string) target {
	if math.IsNaN(v) {
		return target{text: text, measured: "–"}
	}
	return target{text: text, measured: measured, met: ok(v), known: true}
}

func atMost(lim float64) func(float64) bool  { return func(v float64) bool { return v <= lim } }
func atLeast(lim float64) func(float64) bool { return func(v float64) bool { return v >= lim } }
func below(lim float64) func(float64) bool   { return func(v float64) bool { return v < lim } }

func (r *report) targets() []target {
	var ts []target
	cli, hello, pass := samplesOf(r.trivial, "cli"), samplesOf(r.trivial, "hello"), samplesOf(r.trivial, "pass")
	x := pairedRatio(cli, hello)
	ts = append(ts, judge("`polyrepl exec NAME '1+1'` as a process: median at most 1.5x the start-and-exit of a static Go hello-world binary",
		x, atMost(1.5), fmt.Sprintf("%s vs %s: %s", fmtDur(cli.median()), fmtDur(hello.median()), fmtRatio(x))))
	x = pairedRatio(pass, cli)
	ts = append(ts, judge("… and at least 3x faster than `/usr/bin/python3 -c pass`",
		x, atLeast(3), fmt.Sprintf("%s vs %s: %s faster", fmtDur(cli.median()), fmtDur(pass.median()), fmtRatio(x))))

	cl := samplesOf(r.trivial, "client")
	ts = append(ts,
		judge("In-process client, `1+1`: p50 at most 0.5 ms", cl.median(), atMost(0.5e-3), fmtDur(cl.median())),
		judge("In-process client, `1+1`: p99 at most 2 ms", cl.p99(), atMost(2e-3), fmtDur(cl.p99())))
	jup := samplesOf(r.trivial, "jupyter")
	x = pairedRatio(jup, cl)
	ts = append(ts, judge("In-process client, `1+1`: at least 10x faster than the Jupyter route",
		x, atLeast(10), fmt.Sprintf("%s vs %s: %s faster", fmtDur(cl.median()), fmtDur(jup.median()), fmtRatio(x))))

	bc := samplesOf(r.big, "client")
	ts = append(ts, judge("A cell printing 100 KB: at most 1 ms end to end in-process", bc.median(), atMost(1e-3), fmtDur(bc.median())))
	if a := find(r.through, "client"); a != nil && a.samples != nil {
		rate := throughputBytes / a.samples.median() / 1e6
		ts = append(ts, judge("100 MB printed: at least 500 MB/s through the daemon", rate, atLeast(500), fmt.Sprintf("%.0f MB/s", rate)))
		g := a.extra.max()
		ts = append(ts, judge("… with its memory growth under 20 MB", g, below(20e6), fmtMB(g)+" (peak, worst run)"))
	} else {
		ts = append(ts, target{text: "100 MB printed: at least 500 MB/s through the daemon", measured: "–"},
			target{text: "… with its memory growth under 20 MB", measured: "–"})
	}

	cpass := samplesOf(r.create, "pass")
	for _, k := range []struct{ key, how string }{{"client", "in-process client"}, {"cli", "`polyrepl exec` process"}} {
		s := samplesOf(r.create, k.key)
		x := pairedRatio(s, cpass)
		ts = append(ts, judge(fmt.Sprintf("New Python session ready (%s): at most 1.5x `/usr/bin/python3 -c pass`", k.how),
			x, atMost(1.5), fmt.Sprintf("%s vs %s: %s", fmtDur(s.median()), fmtDur(cpass.median()), fmtRatio(x))))
	}
	gocl := samplesOf(r.create, "client")
	for _, k := range []struct{ key, policy string }{{"sandbox-ro", api.SandboxReadOnly}, {"sandbox-ws", api.SandboxWorkspaceWrite}} {
		s := samplesOf(r.create, k.key)
		d := pairedDiff(s, gocl)
		ts = append(ts, judge(fmt.Sprintf("New Python session sandboxed %s: at most 10 ms more than without (in-process client, paired)", k.policy),
			d, atMost(10e-3), fmt.Sprintf("%s vs %s: %+.1f ms", fmtDur(s.median()), fmtDur(gocl.median()), d*1e3)))
	}
	per := math.NaN()
	if r.idle != nil && len(r.idle.rss) == len(r.idle.counts) && len(r.idle.counts) > 1 {
		n := len(r.idle.counts) - 1
		per = (r.idle.rss[n] - r.idle.rss[0]) / float64(r.idle.counts[n]-r.idle.counts[0])
	}
	ts = append(ts, judge("Daemon overhead per idle session: under 1 MB", per, below(1e6), fmt.Sprintf("%.0f KB", per/1e3)))

	for _, k := range []struct{ key, what string }{{"sleep", "`time.sleep`"}, {"loop", "a pure-Python loop"}} {
		s := samplesOf(r.interrupt, k.key)
		ts = append(ts, judge(fmt.Sprintf("Interrupt of a cell in %s: reported within 50 ms", k.what),
			s.max(), atMost(50e-3), fmt.Sprintf("worst %s, median %s", fmtDur(s.max()), fmtDur(s.median()))))
	}
	x = math.NaN()
	if c := r.conc; c != nil && c.err == nil && len(c.rounds) == 3 {
		x = pairedRatio(c.rounds[2], c.rounds[0])
		ts = append(ts, judge("50 concurrent clients: p50 at most 3x the single-client p50",
			x, atMost(3), fmt.Sprintf("%s vs %s: %s", fmtDur(c.pooled[2].median()), fmtDur(c.pooled[0].median()), fmtRatio(x))))
	} else {
		ts = append(ts, target{text: "50 concurrent clients: p50 at most 3x the single-client p50", measured: "–"})
	}
	ts = append(append(ts, r.holderTargets()...), r.roundTwoTargets()...)
	return append(ts, peersTargets(r.peers)...)
}

// roundTwoTargets are issue 21's aims ("performance, round two"), from
// the same samples as the rows above and the concurrency section.
func (r *report) roundTwoTargets() []target {
	var ts []target
	m, e := samplesOf(r.trivial, "mcp-ts"), samplesOf(r.trivial, "echo-ts")
	x := pairedRatio(m, e)
	ts = append(ts, judge("(issue 21) An agent's round trip — `exec 1+1` through `polyrepl mcp` driven by the TypeScript MCP SDK over stdio — p50 at most 5x a unix-socket echo round trip from the same client process",
		x, atMost(5), fmt.Sprintf("%s vs %s: %s", fmtDur(m.median()), fmtDur(e.median()), fmtRatio(x))))

	c := r.conc
	haveConc := c != nil && c.err == nil && len(c.cpu) == 3 && len(c.pooled) == 3
	if haveConc {
		ts = append(ts, judge("(issue 21) The daemon's CPU per trivial cell at most 100 µs (one client)", c.cpu[0][0], atMost(100e-6),
			fmt.Sprintf("%s (and its holder's: %s)", fmtDur(c.cpu[0][0]), fmtDur(c.cpu[0][3]))))
	} else {
		ts = append(ts, target{text: "(issue 21) The daemon's CPU per trivial cell at most 100 µs (one client)", measured: "–"})
	}
	st := samplesOf(r.trivial, "status")
	ts = append(ts, judge("(issue 21) `Status` round trip in-process at most 80 µs", st.median(), atMost(80e-6), fmtDur(st.median())))
	if haveConc {
		b := c.pooled[0].median()
		ts = append(ts, judge("(issue 21) In-process `1+1` back to back (one client): p50 at most 300 µs", b, atMost(300e-6), fmtDur(b)))
	} else {
		ts = append(ts, target{text: "(issue 21) In-process `1+1` back to back (one client): p50 at most 300 µs", measured: "–"})
	}
	cl := samplesOf(r.trivial, "client")
	ts = append(ts,
		judge("(issue 21) In-process `1+1` interleaved: p50 at most 500 µs", cl.median(), atMost(500e-6), fmtDur(cl.median())),
		judge("(issue 21) In-process `1+1` interleaved: p99 at most 1.5 ms", cl.p99(), atMost(1.5e-3), fmtDur(cl.p99())))
	if haveConc {
		cpu := c.cpu[2][0] + c.cpu[2][1] + c.cpu[2][2] + c.cpu[2][3]
		bound := 0.8 * float64(runtime.NumCPU()) / cpu
		ts = append(ts,
			judge("(issue 21) 50 concurrent clients: cells per second at least 80% of cores ÷ CPU per cell (daemon + holder + worker + client)",
				c.rate[2]/bound, atLeast(1), fmt.Sprintf("%.0f/s vs %.0f/s (%d cores, %s CPU a cell)", c.rate[2], bound, runtime.NumCPU(), fmtDur(cpu))),
			judge("(issue 21) … and at least 3x the 2,166 cells/s of 2026-12-02", c.rate[2], atLeast(3*2166), fmt.Sprintf("%.0f/s", c.rate[2])))
	} else {
		ts = append(ts, target{text: "(issue 21) 50 concurrent clients: cells per second at least 80% of cores ÷ CPU per cell (daemon + holder + worker + client)", measured: "–"},
			target{text: "(issue 21) … and at least 3x the 2,166 cells/s of 2026-12-02", measured: "–"})
	}
	cli, hello := samplesOf(r.trivial, "cli"), samplesOf(r.trivial, "hello")
	x = pairedRatio(cli, hello)
	ts = append(ts, judge("(issue 21) `polyrepl exec NAME 1+1` as a process: at most 2x the Go hello-world",
		x, atMost(2), fmt.Sprintf("%s vs %s: %s", fmtDur(cli.median()), fmtDur(hello.median()), fmtRatio(x))))
	bc := samplesOf(r.big, "client")
	ts = append(ts, judge("(issue 21) A 100 KB cell: at most 1.5 ms in-process", bc.median(), atMost(1.5e-3), fmtDur(bc.median())))
	if a := find(r.through, "client"); a != nil && a.samples != nil {
		rate := throughputBytes / a.samples.median() / 1e6
		ts = append(ts, judge("(issue 21) 100 MB printed: at least 400 MB/s through the daemon (its growth: the 20 MB row above)", rate, atLeast(400),
			fmt.Sprintf("%.0f MB/s, growth %s", rate, fmtMB(a.extra.max()))))
	} else {
		ts = append(ts, target{text: "(issue 21) 100 MB printed: at least 400 MB/s through the daemon (its growth: the 20 MB row above)", measured: "–"})
	}
	// Issue 40's aims on the same rows (its items 1, 2, 5 and 6 have
	// their own sections' tables).
	m, e = samplesOf(r.trivial, "mcp-ts"), samplesOf(r.trivial, "echo-ts")
	x = pairedRatio(m, e)
	ts = append(ts, judge("(issue 40) An agent's round trip, as above: p50 at most 8x the echo", x, atMost(8),
		fmt.Sprintf("%s vs %s: %s", fmtDur(m.median()), fmtDur(e.median()), fmtRatio(x))))
	x = pairedRatio(cli, hello)
	ts = append(ts, judge("(issue 40) `polyrepl exec NAME 1+1` as a process: at most 2x the Go hello-world (`polyrepl --version` alone: the trivial cell's table)",
		x, atMost(2), fmt.Sprintf("%s vs %s: %s", fmtDur(cli.median()), fmtDur(hello.median()), fmtRatio(x))))
	if !r.cfg.quick && r.cfg.only == "" && r.elapsed > 0 {
		ts = append(ts, judge("(issue 40) The full run: under 8 minutes, every section reported", r.elapsed.Seconds(), atMost(8*60),
			fmt.Sprintf("%s, %d section(s) failed", r.elapsed.Round(time.Second), len(r.failed))))
	}
	return ts
}

// holderTargets are issue 16's aims for the holders.
func (r *report) holderTargets() []target {
	h := r.holders
	if h == nil {
		return nil
	}
	var ts []target
	if d, ok := hopAdded(h.hop); ok {
		ts = append(ts, judge("(issue 16) The hop through a holder adds at most 50 µs to `1+1`", d, atMost(50e-6), fmtDur(d)))
	}
	if len(h.through) == 2 {
		x := pairedRatio(samplesOf(h.through, "holder"), samplesOf(h.through, "direct"))
		ts = append(ts, judge("(issue 16) 100 MB through a holder: throughput no lower than without one (within 10%)", x, atMost(1.1),
			fmt.Sprintf("%s vs %s: %s the time", fmtDur(samplesOf(h.through, "holder").median()), fmtDur(samplesOf(h.through, "direct").median()), fmtRatio(x))))
	}
	if h.holders > 0 {
		ts = append(ts, judge("(issue 16) An idle holder's RSS: at most 3 MB", h.rss.median(), atMost(3e6),
			fmt.Sprintf("%s (PSS %s, its own %s)", fmtMB(h.rss.median()), fmtMB(h.pss.median()), fmtMB(h.anon.median()))))
	}
	return ts
}

// table renders rows as a Markdown table.
func table(head []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for i := range head {
		if i == 0 {
			b.WriteString(" --- |")
		} else {
			b.WriteString(" ---: |")
		}
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

func label(a *alt) string {
	l := a.label
	if a.ref {
		l += " *(reference)*"
	}
	if a.err != nil {
		l += fmt.Sprintf(" — failed: %s", strings.ReplaceAll(clip(a.err.Error()), "|", "\\|"))
	}
	return l
}

// latencyTable shows each row's median and p99, and its paired ratio to
// the row with key base.
func latencyTable(alts []*alt, base, baseName string) string {
	b := samplesOf(alts, base)
	var rows [][]string
	for _, a := range alts {
		rows = append(rows, []string{label(a), fmtDur(a.samples.median()), fmtDur(a.samples.p99()),
			fmt.Sprint(a.samples.n()), fmtRatio(pairedRatio(a.samples, b))})
	}
	return table([]string{"route", "median", "p99", "n", "÷ " + baseName + " (paired)"}, rows)
}

func (r *report) body() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# polyrepl benchmarks\n\n")
	p("Measured %s with `%s`, in %s.\n\n", r.began.UTC().Format("2006-01-02 15:04 MST"), r.command(), r.elapsed.Round(time.Second))
	for _, m := range r.machine {
		p("- %s\n", m)
	}
	p("\nHow to read it: the rows of each table ran interleaved, round-robin, one sample per row per repetition, ")
	p("so the machine's drift hits all of them alike. Medians and p99 (nearest rank) are over the repetitions; ")
	p("a ratio is computed pair by pair — each repetition's ratio, then their median — not as a ratio of medians. ")
	p("MB is 10⁶ bytes. Every process runs with `%s` as its Python, under private `XDG_RUNTIME_DIR`/`XDG_STATE_HOME`/`HOME`.\n\n", r.cfg.python)

	p("## Targets (issue 4)\n\n")
	var rows [][]string
	for _, t := range r.targets() {
		rows = append(rows, []string{t.text, t.measured, t.verdict()})
	}
	p("%s\n", table([]string{"target", "measured", "verdict"}, rows))
	p("%s", failedMarkdown(r.failed))

	p("## Round trip of the trivial cell `1+1`\n\n")
	p("%s\n", latencyTable(r.trivial, "client", "in-process client"))
	p("The Jupyter rows are timed from Go and include one pipe round trip to the Python driver process ")
	p("that holds the `BlockingKernelClient`; the ping row is that pipe alone. The tmux row writes the cell to a file, ")
	p("types a loader line with `send-keys` and polls `capture-pane` (a tmux client process per poll, no sleep between) ")
	p("until the loader's marker shows, as pi-repl does.\n\n")
	p("%s", kernelsMarkdown(r.trivial))

	p("## Round trip of a cell printing 100 KB\n\n")
	p("%s\n", latencyTable(r.big, "client", "in-process client"))
	p("polyrepl bounds a reply to 30,000 characters (head and tail) and saves the whole output to a file; the other routes carry all 100 KB.\n\n")
	if len(r.plot) > 0 {
		p("## Round trip of a cell drawing a 640×480 line plot (issue 17)\n\n")
		p("%s\n", latencyTable(r.plot, "client", "in-process client"))
		p("polyrepl saves the figure as a PNG the reply names (an MCP reply carries it as an image block); the Jupyter kernel sends it base64 in a display_data message; the fresh process imports matplotlib and writes the PNG each time.\n\n")
	}

	p("## Runtimes: a fresh process per command against a polyrepl session\n\n")
	rows = nil
	for _, rt := range r.runtimes {
		row := []string{rt.row.name, "–", "–", "–", rt.skipped}
		if rt.spawn != nil {
			row[1] = fmtDur(rt.spawn.samples.median())
		}
		if rt.session != nil {
			row[2] = fmtDur(rt.session.samples.median())
			if rt.spawn != nil {
				row[3] = fmtRatio(pairedRatio(rt.spawn.samples, rt.session.samples))
			}
		}
		rows = append(rows, row)
	}
	p("%s\n", table([]string{"runtime", "fresh process per command (median)", "polyrepl session, in-process (median)", "fresh ÷ session (paired)", "note"}, rows))

	p("## Session creation, and memory per session\n\n")
	rows = nil
	pass := samplesOf(r.create, "pass")
	for _, a := range r.create {
		mem := "–"
		if !a.ref {
			mem = fmtMB(a.extra.median())
		}
		rows = append(rows, []string{label(a), fmtDur(a.samples.median()), fmtDur(a.samples.p99()), fmt.Sprint(a.samples.n()),
			fmtRatio(pairedRatio(a.samples, pass)), mem})
	}
	p("%s\n", table([]string{"route", "median", "p99", "n", "÷ python3 -c pass (paired)", "RSS of the new session's process tree (median)"}, rows))
	p("polyrepl's memory is the `memory` field of `sessions --json` after the first cell (the whole process tree); the kernel's is the RSS of its process tree once ready.\n\n")

	p("## Throughput of a cell printing 100 MB\n\n")
	p("The cell: `%s` (%d bytes).\n\n", strings.ReplaceAll(throughputCell, "\n", "; "), throughputBytes)
	rows = nil
	for _, a := range r.through {
		growth := "–"
		if !math.IsNaN(a.extra.max()) {
			growth = fmt.Sprintf("%s (median %s)", fmtMB(a.extra.max()), fmtMB(a.extra.median()))
		}
		rows = append(rows, []string{label(a), fmtDur(a.samples.median()), fmt.Sprintf("%.0f MB/s", throughputBytes/a.samples.median()/1e6), fmt.Sprint(a.samples.n()), growth})
	}
	p("%s\n", table([]string{"route", "median time", "throughput (median)", "n", "daemon peak RSS growth (worst)"}, rows))
	p("The daemon's RSS (`VmRSS` of `/proc/PID/status`) is sampled every 10 ms from the start of the call; growth is the peak minus the value before it, on a freshly started daemon.\n\n")

	p("## The daemon's own memory with idle sessions\n\n")
	rows = nil
	if r.idle != nil {
		for i, n := range r.idle.counts {
			if i >= len(r.idle.rss) {
				break
			}
			per := "–"
			if n > 0 {
				per = fmt.Sprintf("%.0f KB", (r.idle.rss[i]-r.idle.rss[0])/float64(n)/1e3)
			}
			rows = append(rows, []string{fmt.Sprint(n), fmtMB(r.idle.rss[i]), fmtMB(r.idle.rss[i] - r.idle.rss[0]), per})
		}
	}
	p("%s\n", table([]string{"idle python sessions", "daemon RSS", "growth over none", "per session"}, rows))
	p("A freshly started daemon; each session ran one cell; the RSS is the median of 5 samples after 0.5 s of quiet. The runtimes' own memory is not counted.\n\n")

	p("## Interrupt latency\n\n")
	rows = nil
	for _, a := range r.interrupt {
		rows = append(rows, []string{label(a), fmtDur(a.samples.median()), fmtDur(a.samples.p99()), fmtDur(a.samples.max()), fmt.Sprint(a.samples.n())})
	}
	p("%s\n", table([]string{"cell", "median", "p99", "worst", "n"}, rows))
	p("From sending `interrupt` (the in-process client's `Interrupt`) to its reply saying the cell was interrupted.\n\n")

	p("## Concurrent clients\n\n")
	rows = nil
	if c := r.conc; c != nil && c.pooled != nil {
		for i, n := range c.clients {
			cpu := c.cpu[i]
			rows = append(rows, []string{fmt.Sprint(n), fmtDur(c.pooled[i].median()), fmtDur(c.pooled[i].p99()), fmt.Sprint(c.pooled[i].n()),
				fmtRatio(pairedRatio(c.rounds[i], c.rounds[0])), fmt.Sprintf("%.0f", c.rate[i]),
				fmt.Sprintf("%s / %s / %s / %s", fmtDur(cpu[0]), fmtDur(cpu[1]), fmtDur(cpu[2]), fmtDur(cpu[3]))})
		}
	}
	p("%s\n", table([]string{"clients at once", "p50", "p99", "n", "p50 ÷ one client's p50 (paired per round)", "cells/s in all", "CPU per cell: daemon / clients / python workers / holders"}, rows))
	p("Each client is its own `client.New()` in a goroutine of the harness, on its own session, running `1+1` back to back; the client counts take turns, round by round. ")
	p("CPU per cell is from `/proc/PID/task/*/schedstat` of the daemon, of the harness (the clients), of the sessions' workers and of their holders, over the bursts. ")
	p("With every client busy, a cell's round trip is at least the clients × the CPU per cell ÷ the cores (Little's law).\n\n")

	if r.holders != nil {
		p("%s", holdersMarkdown(r.holders))
	}

	if r.context != nil {
		p("%s\n", fenced(contextSection, contextMarkdown(r.context)))
	}

	if r.peers != nil {
		p("%s\n", fenced(peersSection, peersMarkdown(r.peers)))
	}

	if r.owner != nil {
		p("%s\n", fenced(ownerSection, ownerMarkdown(r.owner)))
	}
	if r.fork != nil {
		p("%s\n", fenced(forkSection, forkMarkdown(r.fork)))
	}
	p("%s\n", fenced(outputSection, outputMarkdown(&outputResult{big: r.big, through: r.through})))
	if r.many != nil {
		p("%s\n", fenced(manySection, manyMarkdown(r.many)))
	}

	p("%s", tookMarkdown(r.took, r.elapsed))

	if len(r.skips) > 0 {
		p("## Not measured here\n\n")
		for _, s := range r.skips {
			p("- %s\n", s)
		}
		p("\n")
	}
	return b.String()
}

func (r *report) command() string {
	parts := []string{"go run ./bench"}
	parts = append(parts, os.Args[1:]...)
	return strings.Join(parts, " ")
}

func (r *report) markdown() string { return r.body() }

func (r *report) console() string { return r.body() }

// The generated part of docs/benchmarks.md lies between these markers;
// what is outside them (the "What was tried" section) is a person's and
// is kept.
const (
	beginMarker  = "<!-- bench: generated by `go run ./bench`; everything down to the end marker is rewritten by each run -->"
	endMarker    = "<!-- bench: end of the generated part -->"
	triedHeading = "## What was tried"
	triedBody    = "\n\n_For a person to fill in: for each missed target, what was profiled, what was changed, and what remains._\n"
)

func writeReport(path, generated string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	gen := beginMarker + "\n\n" + strings.TrimRight(generated, "\n") + "\n\n" + endMarker
	text := string(old)
	var out string
	i, j := strings.Index(text, beginMarker), strings.Index(text, endMarker)
	switch {
	case i >= 0 && j > i:
		out = text[:i] + gen + text[j+len(endMarker):]
	case strings.Contains(text, triedHeading):
		out = gen + "\n\n" + text[strings.Index(text, triedHeading):]
	default:
		out = gen + "\n\n" + triedHeading + triedBody
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(out), 0o644)
}
