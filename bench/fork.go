package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// forkSection measures issue 39's fork: how long a fork of a session
// holding a gigabyte takes, and the memory it adds until pages change.
const forkSection = "fork"

// forkResult is that section's numbers.
type forkResult struct {
	held   int64  // bytes the forked session holds, every page touched
	fork   series // the fork call, seconds
	added  series // bytes both sessions' PSS came to above the parent's RSS before
	parent float64
	errs   []string
}

func forks(ctx context.Context, w *world, c config) *forkResult {
	res := &forkResult{held: 1 << 30}
	if c.quick {
		res.held = 100 << 20
	}
	cl := w.newClient()
	fail := func(what string, err error) { res.errs = append(res.errs, what+": "+err.Error()) }
	logf("forks of a session holding %d MB", res.held>>20)
	hold := fmt.Sprintf("x = bytearray(%d)\nx[::4096] = b'\\x01' * (len(x) // 4096)\nlen(x)", res.held)
	if _, err := clientExec(ctx, cl, "fsrc", w.execReq(hold), valueIs(fmt.Sprint(res.held))); err != nil {
		fail("the session to fork", err)
		return res
	}
	res.parent = sessionMemory(ctx, cl, "fsrc")
	reps := c.reps
	if reps > 10 {
		reps = 10
	}
	for i := range reps {
		name := fmt.Sprintf("fcopy%d", i)
		t0 := time.Now()
		_, err := cl.Fork(ctx, "fsrc", api.ForkRequest{New: name, Client: api.Client{Who: "bench", How: "go"}})
		t := secs(time.Since(t0))
		if err != nil {
			fail("a fork", err)
			break
		}
		res.fork = append(res.fork, t)
		res.added = append(res.added, sessionMemory(ctx, cl, "fsrc")+sessionMemory(ctx, cl, name)-res.parent)
		if err := w.kill(ctx, cl, name); err != nil {
			fail("ending a fork", err)
			break
		}
	}
	w.kill(ctx, cl, "fsrc")
	return res
}

// forkMarkdown is the section of the report.
func forkMarkdown(r *forkResult) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## Forking a session (issue 39)\n\n")
	mb := r.held >> 20
	rows := [][]string{
		{fmt.Sprintf("`fork` of a Python session holding %d MB, every page touched (Go client; median, worst)", mb),
			fmtDur(r.fork.median()) + ", " + fmtDur(r.fork.max()), "under 100 ms"},
		{"memory the fork adds until pages change: both sessions' PSS less the parent's RSS before (" + fmtMB(r.parent) + "; median)",
			fmtMB(r.added.median()), "under 10 MB"},
	}
	p("%s\n", table([]string{"measure", "this run", "aim"}, rows))
	p("The call is the whole `polyrepl fork`: the new holder started, the parent's worker forked, the copy adopted and recorded. `go run ./bench -only %s` reruns this section alone.\n\n", forkSection)
	for _, e := range r.errs {
		p("- not measured: %s\n", e)
	}
	return b.String()
}
