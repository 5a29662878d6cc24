package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/holder"
)

// What the holders of issue 16 cost: the hop through a holder on a
// trivial cell and on 100 MB, measured against the same worker driven
// in-process (neither through the daemon, so the difference is the hop
// alone); an idle holder's memory; and how long a new daemon takes to
// take up 1, 10 and 100 sessions.

// holderResult is the holders section of the report.
type holderResult struct {
	hop     []*alt // 1+1: the driver in-process, and through a holder
	through []*alt // 100 MB: the same two
	// rss, pss and anon are per idle holder (bytes), over every holder of
	// the idle sessions.
	rss, pss, anon series
	holders        int
	adopt          []adoptRow
}

// adoptRow is the time to take up n sessions: until the new daemon
// answers (a `polyrepl start` process, after a SIGKILL of the last), and
// the taking up alone, as the daemon's log says it.
type adoptRow struct {
	n            int
	start, adopt series
	err          error
}

// events collects what a driver or a holder reports, for the hop rows.
type events struct {
	out  atomic.Int64
	done chan driver.Result
}

func newEvents() *events { return &events{done: make(chan driver.Result, 1)} }

func (e *events) Output(p []byte)           { e.out.Add(int64(len(p))) }
func (e *events) CellDone(r driver.Result)  { e.done <- r }
func (e *events) Exited(driver.Exit)        {}
func (e *events) HolderLost(string)         {}
func (e *events) LogCut(int, int64, string) {}

// cell runs one cell through run and waits for its result, checking that
// it printed want bytes (-1: any) and gave value (if not "").
func (e *events) cell(run func() error, want int64, value string) (float64, error) {
	e.out.Store(0)
	t0 := time.Now()
	if err := run(); err != nil {
		return 0, err
	}
	select {
	case r := <-e.done:
		t := secs(time.Since(t0))
		if r.Status != api.StatusDone || (value != "" && r.Value != value) {
			return t, fmt.Errorf("the cell ended %s with %q (%v)", r.Status, r.Value, r.Error)
		}
		if want >= 0 && e.out.Load() != want {
			return t, fmt.Errorf("the cell printed %d bytes, want %d", e.out.Load(), want)
		}
		return t, nil
	case <-time.After(2 * time.Minute):
		return 0, fmt.Errorf("no result within 2 minutes")
	}
}

// hopRows measures the python worker driven in-process against the same
// worker through a holder process (this binary as `polyrepl holder`): on
// 1+1 and on 100 MB, interleaved.
func hopRows(ctx context.Context, w *world, c config) (hop, through []*alt) {
	drv, err := driver.Lookup("python")
	if err != nil {
		w.skip("the holder's hop", err.Error())
		return nil, nil
	}
	dir := filepath.Join(w.root, "hop")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		w.skip("the holder's hop", err.Error())
		return nil, nil
	}
	spec := driver.Spec{Exe: c.python, Cwd: w.home, Env: w.env, Cookie: "POLYREPL_SESSION=" + nonce(), RuntimeDir: dir, ValueLimit: api.ValueLimit}
	de := newEvents()
	direct, err := drv.Start(ctx, spec, de)
	if err != nil {
		w.skip("the holder's hop", err.Error())
		return nil, nil
	}
	defer direct.Tree().Kill(time.Second)
	gen := nonce()
	he := newEvents()
	ex := &holder.Reexec{}
	defer ex.Close()
	hp, err := holder.Start(ctx, ex, holder.Brief{
		Name: "hop", Generation: gen, Created: time.Now(),
		Spawn:  api.Spawn{Runtime: "python", Exe: c.python, Cwd: w.home, Env: w.env},
		Cookie: "POLYREPL_SESSION=" + gen, RuntimeDir: dir, ValueLimit: api.ValueLimit,
		SpoolDir: dir, Socket: holder.SocketName(filepath.Join(dir, "holders"), gen), Log: filepath.Join(dir, "holder.log"),
	})
	if err != nil {
		w.skip("the holder's hop", err.Error())
		return nil, nil
	}
	hp.Start(he)
	defer hp.End()

	n := 0
	directRun := func(code string) func() error {
		return func() error { n++; return direct.Run(n, code) }
	}
	holderRun := func(code string) func() error {
		return func() error {
			n++
			if err := hp.Run(holder.CellMeta{Cell: n, Started: time.Now()}, code); err != nil {
				return err
			}
			return nil
		}
	}
	// As a session does: a reply reads the result and the output, and
	// the holder is told how far its reader read.
	delivered := func(t float64, err error) (float64, error) {
		if err == nil {
			hp.MarkRead(n, "cli\x00bench\x00", he.out.Load(), true)
		}
		return t, err
	}
	hop = []*alt{
		{key: "direct", ref: true, label: "the python worker driven in-process (no holder, no daemon)",
			run: func(int) (float64, error) { return de.cell(directRun(cellTrivial), -1, "2") }},
		{key: "holder", label: "the same worker through its holder process (no daemon)",
			run: func(int) (float64, error) { return delivered(he.cell(holderRun(cellTrivial), -1, "2")) }},
	}
	interleave("the holder's hop on 1+1", hop, 20, c.reps)
	through = []*alt{
		{key: "direct", ref: true, label: "100 MB from the python worker driven in-process (no holder, no daemon)",
			run: func(int) (float64, error) { return de.cell(directRun(throughputCell), throughputBytes, "") }},
		{key: "holder", label: "100 MB through the holder process (no daemon; it spools past its first MB, as it does for a session)",
			run: func(int) (float64, error) { return delivered(he.cell(holderRun(throughputCell), throughputBytes, "")) }},
	}
	interleave("100 MB through a holder", through, 0, c.throughputReps)
	return hop, through
}

func nonce() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// holderMemory measures every holder of the daemon's sessions once they
// have been quiet long enough to give back what their work used: RSS,
// PSS and anonymous (private) memory, from /proc.
func holderMemory(ctx context.Context, w *world, res *holderResult) {
	infos, err := w.newClient().Sessions(ctx, "")
	if err != nil {
		w.skip("holder memory", err.Error())
		return
	}
	time.Sleep(holderQuiet)
	for _, s := range infos {
		if s.Holder == 0 {
			continue
		}
		st := procFields(fmt.Sprintf("/proc/%d/status", s.Holder), "VmRSS:", "RssAnon:")
		roll := procFields(fmt.Sprintf("/proc/%d/smaps_rollup", s.Holder), "Pss:")
		if st["VmRSS:"] == 0 {
			continue
		}
		res.rss = append(res.rss, st["VmRSS:"])
		res.anon = append(res.anon, st["RssAnon:"])
		res.pss = append(res.pss, roll["Pss:"])
		res.holders++
	}
}

// holderQuiet is how long the harness lets holders be quiet before it
// measures them: past the 5 s after which a holder trims.
const holderQuiet = 7 * time.Second

// procFields reads "Key: N kB" lines of a /proc file, in bytes.
func procFields(path string, keys ...string) map[string]float64 {
	out := map[string]float64{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			continue
		}
		for _, k := range keys {
			if fs[0] == k {
				n, _ := strconv.ParseFloat(fs[1], 64)
				out[k] = n * 1024
			}
		}
	}
	return out
}

// adoptions times, for each count of sessions, a new daemon taking them
// up after the last one was SIGKILLed: reps times each, the sessions
// made up to each count in turn.
func adoptions(ctx context.Context, w *world, c config, counts []int, reps int) []adoptRow {
	var rows []adoptRow
	have := 0
	logPath := filepath.Join(w.runtimeDir, "polyrepl", "daemon.log")
	for _, n := range counts {
		row := adoptRow{n: n}
		var names []string
		for i := have; i < n; i++ {
			names = append(names, fmt.Sprintf("adopt%d", i))
		}
		if err := w.createSessions(ctx, names, 4); err != nil {
			row.err = err
			rows = append(rows, row)
			break
		}
		have = n
		logf("taking up %d sessions, %d times", n, reps)
		for range reps {
			w.killDaemon()
			t0 := time.Now()
			if err := w.startDaemon(ctx); err != nil {
				row.err = err
				break
			}
			row.start = append(row.start, secs(time.Since(t0)))
			if d, ok := lastAdoption(logPath, n); ok {
				row.adopt = append(row.adopt, d)
			}
		}
		rows = append(rows, row)
		if row.err != nil {
			break
		}
	}
	return rows
}

var adoptLine = regexp.MustCompile(`took up (\d+) sessions from their holders in ([0-9.]+[µmn]?s)`)

// lastAdoption is the time the daemon's log gives for its last taking
// up of n sessions.
func lastAdoption(path string, n int) (float64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	ms := adoptLine.FindAllStringSubmatch(string(b), -1)
	if len(ms) == 0 || ms[len(ms)-1][1] != strconv.Itoa(n) {
		return 0, false
	}
	d, err := time.ParseDuration(ms[len(ms)-1][2])
	return secs(d), err == nil
}

// holdersMarkdown is the holders section of the report.
func holdersMarkdown(h *holderResult) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## Holders: what keeping sessions through the daemon's end costs (issue 16)\n\n")
	if len(h.hop) > 0 {
		p("### The hop through a holder\n\n")
		p("%s\n", latencyTable(h.hop, "direct", "in-process driver"))
		p("Both rows run the same python worker, in turn, with no daemon: the first drives it from this process as the daemon did before holders; the second through a holder process (`polyrepl holder`), over its unix socket, as every session now does. ")
		if d, ok := hopAdded(h.hop); ok {
			p("The hop adds **%s** to a trivial cell (median of the paired differences).\n\n", fmtDur(d))
		} else {
			p("\n\n")
		}
		rows := [][]string{}
		for _, a := range h.through {
			rows = append(rows, []string{label(a), fmtDur(a.samples.median()), fmt.Sprintf("%.0f MB/s", throughputBytes/a.samples.median()/1e6), fmt.Sprint(a.samples.n())})
		}
		p("%s\n", table([]string{"route", "median time", "throughput (median)", "n"}, rows))
	}
	if h.holders > 0 {
		p("### An idle holder's memory\n\n")
		p("%s\n", table([]string{"measure, per idle holder", "median", "worst"}, [][]string{
			{"RSS (`VmRSS`)", fmtMB(h.rss.median()), fmtMB(h.rss.max())},
			{"PSS (`Pss` of `smaps_rollup`: pages shared with the daemon and the other holders counted in part)", fmtMB(h.pss.median()), fmtMB(h.pss.max())},
			{"anonymous memory, its own (`RssAnon`)", fmtMB(h.anon.median()), fmtMB(h.anon.max())},
		}))
		p("Over the %d holders of the idle sessions above, each of which ran one cell, measured %s after it, once each holder had given back what its work used. The rest of an RSS is pages of the polyrepl binary, shared with the daemon and every other holder.\n\n", h.holders, holderQuiet)
	}
	if len(h.adopt) > 0 {
		p("### A new daemon taking sessions up\n\n")
		var rows [][]string
		for _, r := range h.adopt {
			if r.err != nil {
				rows = append(rows, []string{fmt.Sprint(r.n), "failed: " + clip(r.err.Error()), "–", "–"})
				continue
			}
			rows = append(rows, []string{fmt.Sprint(r.n), fmtDur(r.start.median()), fmtDur(r.adopt.median()), fmt.Sprint(r.start.n())})
		}
		p("%s\n", table([]string{"idle python sessions", "SIGKILL to the new daemon answering (`polyrepl start`, median)", "taking them up (the daemon's log, median)", "n"}, rows))
		p("The daemon is SIGKILLed; `polyrepl start` starts a new one, which takes every session up from its holder before it answers.\n\n")
	}
	return b.String()
}

// hopAdded is the median of the paired differences, holder minus direct.
func hopAdded(alts []*alt) (float64, bool) {
	d, h := samplesOf(alts, "direct"), samplesOf(alts, "holder")
	if len(d) == 0 || len(d) != len(h) {
		return 0, false
	}
	var diffs series
	for i := range d {
		diffs = append(diffs, h[i]-d[i])
	}
	return diffs.median(), true
}
