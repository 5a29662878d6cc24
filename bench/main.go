// Command bench is polyrepl's side-by-side benchmark harness: it builds the
// binary, runs a private daemon, and measures polyrepl against what people
// use instead (a fresh python3 -c per command, a Jupyter kernel driven by
// jupyter_client, a tmux pane driven by send-keys and capture-pane), in one
// run, interleaving the alternatives round-robin so the machine's drift
// cancels. It prints the tables with each target of issue 4 marked met or
// missed, and writes them to docs/benchmarks.md.
//
// It also measures what MCP replies cost a model (issue 15): a scripted
// agent run of about 30 calls by two MCP clients through the real
// `polyrepl mcp`, counting the characters of each reply's text and
// structured content, of the tool list and of the instructions, against
// the run before the replies were made lean (bench/testdata/context-before.json).
//
// An agent's own round trip (issue 21) is timed by an MCP client nobody
// here wrote: the official TypeScript SDK driving `polyrepl mcp` over
// stdio, against a unix-socket echo from the same Node process. It needs
// node and the SDK: POLYREPL_BENCH_MCP_SDK (or POLYREPL_TEST_MCP_SDK) names
// a node_modules holding @modelcontextprotocol/sdk; without it those rows
// are skipped and say why.
//
// The peers (issue 40) are the MCP servers a user would install instead
// (desktop-commander, code-runner), driven by that same SDK on one
// scripted task: POLYREPL_BENCH_PEERS names a node_modules holding them
// (see peers.go); without it their rows are skipped and say why.
//
// A section that fails (an error, a panic, a daemon that would not
// restart) is reported as failed, with its error, and the rest of the
// run is kept and written; the harness then exits non-zero.
//
//	go run ./bench                   # the full run, a few minutes
//	go run ./bench -quick            # a smoke run, well under a minute
//	go run ./bench -only context     # the context-cost section alone, under a minute
//	go run ./bench -only owner       # one owner of a session's live state (issue 34), a few minutes
//	go run ./bench -only fork        # forking a session holding a gigabyte (issue 39), under a minute
//	go run ./bench -only output      # a 100 KB cell and 100 MB printed (issue 40, item 5), under a minute
//	go run ./bench -only many        # 500 idle sessions: listing, a new one, stop (issue 40, item 6), 1–2 minutes
//	go run ./bench -only peers       # polyrepl against desktop-commander and code-runner (issue 40), a minute
//	go run ./bench -only context -save-before bench/testdata/context-before.json
//	                                 # ... and keep this run as the "before"
//
// The report's generated part lies between markers (see writeReport), and
// within it each section that can run alone lies between its own
// (sectionMarkers): a full run rewrites the whole generated part, an
// -only run just its section, or adds it at the end of the generated part
// if the report lacks it.
//
// Everything it starts carries a tag in its environment, and at the end it
// proves that no such process is left.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/holder"

	// The runtimes of the hop rows, driven in-process and by a holder.
	_ "github.com/polyrepl/polyrepl/internal/driver/all"
)

// config is what the flags chose.
type config struct {
	quick  bool
	reps   int    // repetitions of each round-trip row
	out    string // where the report goes; "" or "-" for nowhere
	python string // the interpreter for every Python row

	createReps     int // session creations per row
	interruptReps  int // interrupts per cell
	concRounds     int // rounds of the 1/10/50-client runs
	throughputReps int // 100 MB cells
	idleCounts     []int
	adoptCounts    []int // sessions a new daemon takes up
	adoptReps      int

	only       string // run only this section ("context")
	saveBefore string // write the context run's numbers here, as the "before"
	dump       string // write each reply of the context run into this directory
}

func main() {
	// The holders of the hop rows are this binary, re-executed.
	holder.IfHolder()
	var c config
	flag.BoolVar(&c.quick, "quick", false, "few repetitions: a smoke run for CI (under a minute)")
	flag.IntVar(&c.reps, "reps", 0, "repetitions of each round-trip row (default 120, or 15 with -quick)")
	flag.StringVar(&c.out, "o", "docs/benchmarks.md", "write the report here (relative to the module root); \"-\" for nowhere")
	flag.StringVar(&c.python, "python", "/usr/bin/python3", "the Python interpreter of every Python row")
	flag.StringVar(&c.only, "only", "", "run only this section: "+contextSection+" (the context cost of an agent run, issue 15), "+ownerSection+" (one owner of a session's live state, issue 34), "+forkSection+" (forking a session, issue 39), "+outputSection+" (large output, issue 40 item 5), "+manySection+" (many sessions, issue 40 item 6) or "+peersSection+" (the MCP servers a user would install instead, issue 40)")
	flag.StringVar(&c.saveBefore, "save-before", "", "write the context-cost run's numbers to this JSON file (relative to the module root), as the \"before\" of later runs")
	flag.StringVar(&c.dump, "dump", "", "write each reply of the context-cost run (text and structured content) into this directory, to read what is counted")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./bench [-quick] [-only SECTION] [-save-before FILE] [-reps N] [-o FILE] [-python PATH]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 || (c.only != "" && onlySections[c.only] == nil) {
		flag.Usage()
		os.Exit(2)
	}
	c.createReps, c.interruptReps, c.concRounds, c.throughputReps = 15, 10, 5, 3
	c.idleCounts = []int{0, 10, 100}
	c.adoptCounts, c.adoptReps = []int{1, 10, 100}, 3
	if c.quick {
		c.createReps, c.interruptReps, c.concRounds, c.throughputReps = 2, 3, 1, 1
		c.adoptCounts, c.adoptReps = []int{1, 10}, 1
		if c.reps == 0 {
			c.reps = 15
		}
	}
	if c.reps <= 0 {
		// 120 of each of the trivial cell's 24 rows: the round trips
		// were 4m19s of a 9-minute run at 200 (issue 40's 8 minutes).
		c.reps = 120
	}
	if err := run(c); err != nil {
		fmt.Fprintf(os.Stderr, "bench: error: %v\n", err)
		os.Exit(1)
	}
}

func run(c config) (err error) {
	began := time.Now()
	w, err := newWorld(c)
	if err != nil {
		return err
	}
	// Whatever happens, end what we started and say if anything was left.
	defer func() {
		if cerr := w.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		logf("%s: cleaning up", sig)
		w.close()
		os.Exit(130)
	}()

	rep := &report{cfg: c, began: began, machine: describeMachine(c.python)}
	ctx := context.Background()
	if err := w.startDaemon(ctx); err != nil {
		return err
	}
	if only := onlySections[c.only]; only != nil {
		text, err := only(ctx, w, c, rep)
		if serr := w.stopDaemon(ctx); serr != nil && err == nil {
			err = serr
		}
		if text == "" {
			return err
		}
		fmt.Println(text)
		if path := w.reportPath(); path != "" {
			if werr := writeSection(path, c.only, text); werr != nil {
				return werr
			}
			logf("wrote the %s section of %s", c.only, path)
		}
		return err
	}
	// The context run goes first, on a daemon with no other session, so
	// that its sessions listing is the same in every run.
	rep.context = contextCost(ctx, w, c)
	if err := saveBefore(w, c, rep.context); err != nil {
		return err
	}
	// From here on a section that fails is reported as failed and the
	// run goes on: one failure must not lose every other measurement.
	rep.guard("peers", func() error { rep.peers = peers(ctx, w, c); return nil })
	rep.guard("round trips", func() error { rep.trivial, rep.big, rep.runtimes = roundTrips(ctx, w, c); return nil })
	rep.guard("plots", func() error { rep.plot = plots(ctx, w, c); return nil })
	rep.guard("session creation", func() error { rep.create = creation(ctx, w, c); return nil })
	w.stopJupyter()
	rep.guard("interrupts", func() error { rep.interrupt = interrupts(ctx, w, c); return nil })
	rep.guard("concurrency", func() error { rep.conc = concurrency(ctx, w, c); return nil })
	// The memory sections each start from a fresh daemon, so what earlier
	// sections left in its heap does not count.
	if rep.restart(ctx, w, "throughput") {
		rep.guard("throughput", func() error { rep.through = throughput(ctx, w, c); return nil })
	}
	rep.holders = &holderResult{}
	if rep.restart(ctx, w, "idle-session memory") {
		rep.guard("idle-session memory", func() error {
			rep.idle = idleMemory(ctx, w, c)
			holderMemory(ctx, w, rep.holders)
			return nil
		})
	}
	if rep.restart(ctx, w, "taking sessions up") {
		rep.guard("taking sessions up", func() error {
			rep.holders.adopt = adoptions(ctx, w, c, c.adoptCounts, c.adoptReps)
			return nil
		})
	}
	if rep.restart(ctx, w, "one owner") {
		rep.guard("one owner", func() error { rep.owner = owner(ctx, w, c); return nil })
		rep.guard("forks", func() error { rep.fork = forks(ctx, w, c); return nil })
	}
	if rep.restart(ctx, w, "many sessions") {
		rep.guard("many sessions", func() error { rep.many = many(ctx, w, c); return nil })
	}
	if err := w.stopDaemon(ctx); err != nil {
		rep.fail("stopping the daemon at the end", err)
	}
	rep.guard("the holder's hop", func() error { rep.holders.hop, rep.holders.through = hopRows(ctx, w, c); return nil })
	rep.skips = w.skips
	rep.elapsed = time.Since(began)

	text := rep.markdown()
	fmt.Println(rep.console())
	if path := w.reportPath(); path != "" {
		if err := writeReport(path, text); err != nil {
			return err
		}
		logf("wrote %s", path)
	}
	if len(rep.failed) > 0 {
		return fmt.Errorf("%d section(s) failed (the report says which): %s", len(rep.failed), rep.failed[0].section)
	}
	return nil
}

// onlySections are the sections -only runs alone, each on the bench's
// daemon, returning its text for the report.
var onlySections = map[string]func(ctx context.Context, w *world, c config, rep *report) (string, error){
	ownerSection: func(ctx context.Context, w *world, c config, rep *report) (string, error) {
		return ownerMarkdown(owner(ctx, w, c)), nil
	},
	forkSection: func(ctx context.Context, w *world, c config, rep *report) (string, error) {
		return forkMarkdown(forks(ctx, w, c)), nil
	},
	contextSection: func(ctx context.Context, w *world, c config, rep *report) (string, error) {
		r := contextCost(ctx, w, c)
		if err := saveBefore(w, c, r); err != nil {
			return "", err
		}
		return contextMarkdown(r), r.err
	},
	outputSection: func(ctx context.Context, w *world, c config, rep *report) (string, error) {
		return outputMarkdown(outputRows(ctx, w, c)), nil
	},
	manySection: func(ctx context.Context, w *world, c config, rep *report) (string, error) {
		return manyMarkdown(many(ctx, w, c)), nil
	},
	peersSection: func(ctx context.Context, w *world, c config, rep *report) (string, error) {
		r := peers(ctx, w, c)
		return peersMarkdown(r), nil
	},
}

// reportPath is where the report goes, "" for nowhere.
func (w *world) reportPath() string {
	return w.modulePath(w.cfg.out)
}

// modulePath resolves a path given relative to the module root; "" and
// "-" are nowhere.
func (w *world) modulePath(p string) string {
	switch {
	case p == "" || p == "-":
		return ""
	case strings.HasPrefix(p, "/"):
		return p
	}
	return w.moduleRoot + "/" + p
}

// saveBefore keeps the context run as the "before", if -save-before asked.
func saveBefore(w *world, c config, r *contextResult) error {
	path := w.modulePath(c.saveBefore)
	if path == "" {
		return nil
	}
	if r.now == nil || r.err != nil {
		return fmt.Errorf("not saving %s: the context run failed: %v", path, r.err)
	}
	if err := writeContextRun(path, r.now); err != nil {
		return err
	}
	logf("saved the context run to %s", path)
	r.before = r.now
	return nil
}

// logf reports progress on stderr, so stdout holds only the results.
func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...)
}
