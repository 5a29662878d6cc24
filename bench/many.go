package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// manySection measures issue 40's item 6: a daemon keeping many idle
// sessions. `polyrepl sessions` listing them (a process, as a person runs
// it), a new Python session's creation beside them against its creation
// with none, and `polyrepl stop` ending them all. The idle sessions are
// `sh` (the terminal family's cheapest runtime: a holder and a shell, a
// few MB each), so that 500 of them start within the minute on a small
// machine; what is measured is the daemon's handling of many, not the
// runtime's weight.
const manySection = "many"

// manyIdle is how many idle sessions the section keeps (fewer with -quick).
const manyIdle = 500

// manyResult is that section's numbers.
type manyResult struct {
	idle        int
	runtime     string        // the idle sessions' runtime
	created     time.Duration // making the idle sessions, 8 at a time
	createNone  series        // a new python session with no other (before and after the idle ones), seconds
	createMany  series        // the same beside the idle sessions
	listNone    series        // `polyrepl sessions`, no session
	listMany    series        // `polyrepl sessions` beside the idle sessions
	stop        float64       // `polyrepl stop` ending them all, seconds
	stopLeft    int           // processes left after it
	stopDaemonS float64       // until the daemon's process was gone
	errs        []string
}

// manyCreateReps is how many new sessions are timed in each phase.
const manyCreateReps = 8

func many(ctx context.Context, w *world, c config) *manyResult {
	res := &manyResult{idle: manyIdle, runtime: "sh"}
	reps := manyCreateReps
	if c.quick {
		res.idle, reps = 50, 3
	}
	cl := w.newClient()
	fail := func(what string, err error) { res.errs = append(res.errs, what+": "+err.Error()) }
	n := 0
	// create times one new python session until its first cell returns;
	// its kill is not timed.
	create := func(into *series) {
		n++
		name := fmt.Sprintf("newmany%d", n)
		t, err := clientExec(ctx, cl, name, w.execReq(cellTrivial), valueIs("2"))
		if err != nil {
			fail("a new session", err)
			return
		}
		*into = append(*into, t)
		if err := w.kill(ctx, cl, name); err != nil {
			fail("killing a new session", err)
		}
	}
	list := func(into *series, want int) {
		t, err := w.timeProcess([]string{w.bin, "sessions"}, func(out string) error {
			if got := strings.Count(out, " idle"); got < want {
				return fmt.Errorf("listed %d idle sessions, want %d", got, want)
			}
			return nil
		})
		if err != nil {
			fail("polyrepl sessions", err)
			return
		}
		*into = append(*into, t)
	}
	// A first life starts the spare holder every creation below takes.
	create(new(series))
	logf("a new session with no other, %d times", reps)
	for range reps {
		create(&res.createNone)
		list(&res.listNone, 0)
	}

	logf("%d idle %s sessions, 8 at a time", res.idle, res.runtime)
	names := make([]string, res.idle)
	for i := range names {
		names[i] = fmt.Sprintf("idle%d", i)
	}
	t0 := time.Now()
	if err := w.createSessionsOf(ctx, names, 8, res.runtime); err != nil {
		fail(fmt.Sprintf("%d idle sessions", res.idle), err)
		return res
	}
	res.created = time.Since(t0)
	// Let them settle: the daemon closes a quiet session's files after a
	// few seconds, which is the idle state a person lists.
	time.Sleep(6 * time.Second)
	logf("beside them: a new session and `polyrepl sessions`, %d times", reps)
	for range reps {
		create(&res.createMany)
		list(&res.listMany, res.idle)
	}

	logf("`polyrepl stop` with %d sessions", res.idle)
	pid := w.daemonPID
	t0 = time.Now()
	out, err := w.command(w.bin, "stop").CombinedOutput()
	res.stop = secs(time.Since(t0))
	if err != nil {
		fail("polyrepl stop", fmt.Errorf("%v: %s", err, clip(string(out))))
	}
	for deadline := time.Now().Add(30 * time.Second); alive(pid) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	res.stopDaemonS = secs(time.Since(t0))
	w.daemonPID = 0
	time.Sleep(500 * time.Millisecond)
	res.stopLeft = len(w.tagged(false))

	// With none again, so that drift over the section counts on both sides.
	if err := w.startDaemon(ctx); err != nil {
		fail("starting the daemon again", err)
		return res
	}
	create(new(series))
	for range reps {
		create(&res.createNone)
	}
	return res
}

// createSessionsOf makes sessions of a runtime with no cell of their own
// beyond a trivial one, parallel at a time.
func (w *world) createSessionsOf(ctx context.Context, names []string, parallel int, runtime string) error {
	work := make(chan string)
	errs := make(chan error, len(names))
	for range parallel {
		go func() {
			cl := w.newClient()
			for name := range work {
				req := w.execReq("echo ok")
				req.Spawn.Runtime, req.Spawn.Exe = runtime, ""
				_, err := cl.Exec(ctx, name, req)
				errs <- err
			}
		}()
	}
	for _, n := range names {
		work <- n
	}
	close(work)
	var first error
	for range names {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// manyMarkdown is the section of the report, with issue 40's item 6
// targets.
func manyMarkdown(r *manyResult) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## Many sessions (issue 40, item 6)\n\n")
	x := r.createMany.median() / r.createNone.median()
	rows := [][]string{
		{fmt.Sprintf("`polyrepl sessions` (a process) with %d idle sessions: under 0.5 s", r.idle),
			fmt.Sprintf("%s (with none: %s)", fmtDur(r.listMany.median()), fmtDur(r.listNone.median())), verdictOf(r.listMany.median(), atMost(0.5))},
		{fmt.Sprintf("a new Python session beside %d idle ones: within 20%% of its time with none", r.idle),
			fmt.Sprintf("%s vs %s: %s", fmtDur(r.createMany.median()), fmtDur(r.createNone.median()), fmtRatio(x)), verdictOf(x, atMost(1.2))},
		{fmt.Sprintf("`polyrepl stop` ending %d sessions: under 10 s", r.idle),
			fmt.Sprintf("%s (daemon gone after %s; %d processes left)", fmtDur(r.stop), fmtDur(r.stopDaemonS), r.stopLeft), verdictOf(r.stop, atMost(10))},
	}
	p("%s\n", table([]string{"target", "this run", "verdict"}, rows))
	p("The idle sessions are `%s` sessions (a holder and a shell each), made 8 at a time in %s, then left quiet for 6 s. ", r.runtime, r.created.Round(100*time.Millisecond))
	p("A new session is the in-process client's first `1+1` in a new Python session (its kill not timed), %d times with none before the idle ones and %d after `stop`, %d times beside them. ", r.createNone.n()/2, r.createNone.n()-r.createNone.n()/2, r.createMany.n())
	p("`polyrepl sessions` and `polyrepl stop` are the CLI as a person runs it, timed from its start to its exit. `go run ./bench -only %s` reruns this section alone.\n\n", manySection)
	for _, e := range r.errs {
		p("- not measured: %s\n", e)
	}
	return b.String()
}

// verdictOf is a target's verdict for a value, "not measured" for NaN.
func verdictOf(v float64, ok func(float64) bool) string {
	return judge("", v, ok, "").verdict()
}
