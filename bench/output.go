package main

import (
	"context"
	"fmt"
	"strings"
)

// outputSection is issue 40's item 5, large output at disk speed: the
// 100 KB cell through the in-process client and the 100 MB cell's
// throughput with the daemon's growth. A full run takes both from the
// round-trip and throughput tables above it; `-only output` measures just
// these rows.
const outputSection = "output"

// outputResult is that section's rows.
type outputResult struct {
	big     []*alt // the 100 KB cell (key "client": in-process)
	through []*alt // the 100 MB cell (throughput's rows)
	err     error
}

// outputRows measures the section alone: the 100 KB cell beside `1+1`
// (both in-process, interleaved), then the 100 MB rows on a fresh daemon.
func outputRows(ctx context.Context, w *world, c config) *outputResult {
	res := &outputResult{}
	cl := w.newClient()
	for _, name := range []string{"go", "one"} {
		if _, err := cl.Exec(ctx, name, w.execReq("import sys")); err != nil {
			res.err = err
			return res
		}
	}
	goBig, one := w.execReq(cellBig), w.execReq(cellTrivial)
	res.big = []*alt{
		{key: "client", label: "polyrepl, Go client in-process",
			run: func(int) (float64, error) { return clientExec(ctx, cl, "go", goBig, bigOutput) }},
		{key: "one", ref: true, label: "`1+1`, Go client in-process (python session)",
			run: func(int) (float64, error) { return clientExec(ctx, cl, "one", one, valueIs("2")) }},
	}
	interleave("100 KB cell", res.big, 2, c.reps)
	w.kill(ctx, cl, "go")
	w.kill(ctx, cl, "one")
	if err := w.restartDaemon(ctx); err != nil {
		res.err = err
		return res
	}
	res.through = throughput(ctx, w, c)
	return res
}

// outputMarkdown is the section of the report, with item 5's targets.
func outputMarkdown(r *outputResult) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## Large output at disk speed (issue 40, item 5)\n\n")
	bc := samplesOf(r.big, "client")
	rows := [][]string{{"a 100 KB cell (`print(\"x\"*100000)`), Go client in-process: at most 1.5 ms",
		fmt.Sprintf("%s (p99 %s, n %d)", fmtDur(bc.median()), fmtDur(bc.p99()), bc.n()), verdictOf(bc.median(), atMost(1.5e-3))}}
	if a := find(r.through, "client"); a != nil && a.samples.n() > 0 {
		rate := throughputBytes / a.samples.median() / 1e6
		g := a.extra.max()
		rows = append(rows,
			[]string{"100 MB printed: at least 300 MB/s through the daemon", fmt.Sprintf("%.0f MB/s (%s, n %d)", rate, fmtDur(a.samples.median()), a.samples.n()), verdictOf(rate, atLeast(300))},
			[]string{"… the daemon's growth under 20 MB", fmtMB(g) + " (peak, worst run)", verdictOf(g, below(20e6))})
	} else {
		rows = append(rows, []string{"100 MB printed: at least 300 MB/s through the daemon", "–", "not measured"},
			[]string{"… the daemon's growth under 20 MB", "–", "not measured"})
	}
	p("%s\n", table([]string{"target", "this run", "verdict"}, rows))
	if len(r.big) > 0 {
		p("%s\n", latencyTable(r.big, "client", "the 100 KB cell"))
	}
	if len(r.through) > 0 {
		var rows [][]string
		for _, a := range r.through {
			rows = append(rows, []string{label(a), fmtDur(a.samples.median()), fmt.Sprintf("%.0f MB/s", throughputBytes/a.samples.median()/1e6), fmt.Sprint(a.samples.n()), fmtMB(a.extra.max())})
		}
		p("%s\n", table([]string{"100 MB", "median time", "throughput (median)", "n", "daemon peak RSS growth (worst)"}, rows))
	}
	p("The 100 MB cell is `%s`. `go run ./bench -only %s` reruns this section alone.\n\n", strings.ReplaceAll(throughputCell, "\n", "; "), outputSection)
	if r.err != nil {
		p("- not measured: %v\n", r.err)
	}
	return b.String()
}
