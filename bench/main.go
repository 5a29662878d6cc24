// Command bench is polyrepl's side-by-side benchmark harness: it builds the
// binary, runs a private daemon, and measures polyrepl against what people
// use instead (a fresh python3 -c per command, a Jupyter kernel driven by
// jupyter_client, a tmux pane driven by send-keys and capture-pane), in one
// run, interleaving the alternatives round-robin so the machine's drift
// cancels. It prints the tables with each target of issue 4 marked met or
// missed, and writes them to docs/benchmarks.md.
//
//	go run ./bench            # the full run, a few minutes
//	go run ./bench -quick     # a smoke run, well under a minute
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
}

func main() {
	var c config
	flag.BoolVar(&c.quick, "quick", false, "few repetitions: a smoke run for CI (under a minute)")
	flag.IntVar(&c.reps, "reps", 0, "repetitions of each round-trip row (default 200, or 15 with -quick)")
	flag.StringVar(&c.out, "o", "docs/benchmarks.md", "write the report here (relative to the module root); \"-\" for nowhere")
	flag.StringVar(&c.python, "python", "/usr/bin/python3", "the Python interpreter of every Python row")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./bench [-quick] [-reps N] [-o FILE] [-python PATH]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	c.createReps, c.interruptReps, c.concRounds, c.throughputReps = 15, 10, 5, 3
	c.idleCounts = []int{0, 10, 100}
	if c.quick {
		c.createReps, c.interruptReps, c.concRounds, c.throughputReps = 2, 3, 1, 1
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
	rep.trivial, rep.big, rep.runtimes = roundTrips(ctx, w, c)
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
	if err := w.stopDaemon(ctx); err != nil {
		return err
	}
	rep.skips = w.skips
	rep.elapsed = time.Since(began)

	text := rep.markdown()
	fmt.Println(rep.console())
	if c.out != "" && c.out != "-" {
		path := c.out
		if !strings.HasPrefix(path, "/") {
			path = w.moduleRoot + "/" + path
		}
		if err := writeReport(path, text); err != nil {
			return err
		}
		logf("wrote %s", path)
	}
	return nil
}

// logf reports progress on stderr, so stdout holds only the results.
func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...)
}
