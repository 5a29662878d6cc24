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
//	go run ./bench                   # the full run, a few minutes
//	go run ./bench -quick            # a smoke run, well under a minute
//	go run ./bench -only context     # the context-cost section alone, under a minute
//	go run ./bench -only owner       # one owner of a session's live state (issue 34), a few minutes
//	go run ./bench -only fork        # forking a session holding a gigabyte (issue 39), under a minute
//	go run ./bench -only output      # a 100 KB cell and 100 MB printed (issue 40, item 5), under a minute
//	go run ./bench -only many        # 500 idle sessions: listing, a new one, stop (issue 40, item 6), 1–2 minutes
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
	flag.IntVar(&c.reps, "reps", 0, "repetitions of each round-trip row (default 200, or 15 with -quick)")
	flag.StringVar(&c.out, "o", "docs/benchmarks.md", "write the report here (relative to the module root); \"-\" for nowhere")
	flag.StringVar(&c.python, "python", "/usr/bin/python3", "the Python interpreter of every Python row")
	flag.StringVar(&c.only, "only", "", "run only this section: "+contextSection+" (the context cost of an agent run, issue 15), "+ownerSection+" (one owner of a session's live state, issue 34), "+forkSection+" (forking a session, issue 39), "+outputSection+" (large output, issue 40 item 5) or "+manySection+" (many sessions, issue 40 item 6)")
	flag.StringVar(&c.saveBefore, "save-before", "", "write the context-cost run's numbers to this JSON file (relative to the module root), as the \"before\" of later runs")
	flag.StringVar(&c.dump, "dump", "", "write each reply of the context-cost run (text and structured content) into this directory, to read what is counted")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./bench [-quick] [-only SECTION] [-save-before FILE] [-reps N] [-o FILE] [-python PATH]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 || (c.only != "" && c.only != contextSection && c.only != ownerSection && c.only != forkSection && standalone[c.only] == nil) {
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
		c.reps = 200
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
	if c.only == ownerSection {
		rep.owner = owner(ctx, w, c)
		if err := w.stopDaemon(ctx); err != nil {
			return err
		}
		text := ownerMarkdown(rep.owner)
		fmt.Println(text)
		if path := w.reportPath(); path != "" {
			if err := writeSection(path, ownerSection, text); err != nil {
				return err
			}
			logf("wrote the %s section of %s", ownerSection, path)
		}
		return nil
	}
	if s := standalone[c.only]; s != nil {
		text := s(ctx, w, c)
		if err := w.stopDaemon(ctx); err != nil {
			return err
		}
		fmt.Println(text)
		if path := w.reportPath(); path != "" {
			if err := writeSection(path, c.only, text); err != nil {
				return err
			}
			logf("wrote the %s section of %s", c.only, path)
		}
		return nil
	}
	if c.only == forkSection {
		r := forks(ctx, w, c)
		if err := w.stopDaemon(ctx); err != nil {
			return err
		}
		text := forkMarkdown(r)
		fmt.Println(text)
		if path := w.reportPath(); path != "" {
			if err := writeSection(path, forkSection, text); err != nil {
				return err
			}
			logf("wrote the %s section of %s", forkSection, path)
		}
		return nil
	}
	// The context run goes first, on a daemon with no other session, so
	// that its sessions listing is the same in every run.
	rep.context = contextCost(ctx, w, c)
	if err := saveBefore(w, c, rep.context); err != nil {
		return err
	}
	if c.only == contextSection {
		if err := w.stopDaemon(ctx); err != nil {
			return err
		}
		text := contextMarkdown(rep.context)
		fmt.Println(text)
		if path := w.reportPath(); path != "" {
			if err := writeSection(path, contextSection, text); err != nil {
				return err
			}
			logf("wrote the %s section of %s", contextSection, path)
		}
		return rep.context.err
	}
	rep.trivial, rep.big, rep.runtimes = roundTrips(ctx, w, c)
	rep.plot = plots(ctx, w, c)
	rep.create = creation(ctx, w, c)
	w.stopJupyter()
	rep.interrupt = interrupts(ctx, w, c)
	rep.conc = concurrency(ctx, w, c)
	// The memory sections each start from a fresh daemon, so what earlier
	// sections left in its heap does not count.
	if err := w.restartDaemon(ctx); err != nil {
		return err
	}
	rep.through = throughput(ctx, w, c)
	if err := w.restartDaemon(ctx); err != nil {
		return err
	}
	rep.idle = idleMemory(ctx, w, c)
	rep.holders = &holderResult{}
	holderMemory(ctx, w, rep.holders)
	if err := w.restartDaemon(ctx); err != nil {
		return err
	}
	rep.holders.adopt = adoptions(ctx, w, c, c.adoptCounts, c.adoptReps)
	if err := w.restartDaemon(ctx); err != nil {
		return err
	}
	rep.owner = owner(ctx, w, c)
	rep.fork = forks(ctx, w, c)
	if err := w.restartDaemon(ctx); err != nil {
		return err
	}
	rep.many = many(ctx, w, c)
	if err := w.stopDaemon(ctx); err != nil {
		return err
	}
	rep.holders.hop, rep.holders.through = hopRows(ctx, w, c)
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
	return nil
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
