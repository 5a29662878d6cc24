package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
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
	// checkpoint and rollback, seconds; ckMemory, a checkpoint's PSS
	// after the session changed a tenth of its pages.
	checkpoint, rollback series
	ckMemory             series
	errs                 []string
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
	rollbacks(ctx, cl, res, reps, fail)
	w.kill(ctx, cl, "fsrc")
	return res
}

// rollbacks times checkpoints of the session and rollbacks to them: each
// round keeps a checkpoint, changes a tenth of the pages, and rolls back.
func rollbacks(ctx context.Context, cl *client.Client, res *forkResult, reps int, fail func(string, error)) {
	who := api.Client{Who: "bench", How: "go"}
	change := fmt.Sprintf("x[:%d:4096] = b'\\x02' * len(range(0, %d, 4096))\nx[0]", res.held/10, res.held/10)
	for range reps {
		t0 := time.Now()
		_, err := cl.Checkpoint(ctx, "fsrc", api.CheckpointRequest{Label: "b", Client: who})
		t := secs(time.Since(t0))
		if err != nil {
			fail("a checkpoint", err)
			return
		}
		res.checkpoint = append(res.checkpoint, t)
		if _, err := clientExec(ctx, cl, "fsrc", api.ExecRequest{Code: change, Client: who}, valueIs("2")); err != nil {
			fail("a change after the checkpoint", err)
			return
		}
		if infos, err := cl.Sessions(ctx, "fsrc"); err == nil && len(infos) == 1 && len(infos[0].Checkpoints) > 0 {
			res.ckMemory = append(res.ckMemory, float64(infos[0].Checkpoints[len(infos[0].Checkpoints)-1].Memory))
		}
		t0 = time.Now()
		_, err = cl.Rollback(ctx, "fsrc", api.CheckpointRequest{Label: "b", Client: who})
		t = secs(time.Since(t0))
		if err != nil {
			fail("a rollback", err)
			return
		}
		res.rollback = append(res.rollback, t)
		if _, err := clientExec(ctx, cl, "fsrc", api.ExecRequest{Code: "x[0]", Client: who}, valueIs("1")); err != nil {
			fail("the value after a rollback", err)
			return
		}
	}
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
		{"`checkpoint` of that session (median, worst)", fmtDur(r.checkpoint.median()) + ", " + fmtDur(r.checkpoint.max()), ""},
		{fmt.Sprintf("a checkpoint's memory (PSS) once the session changed a tenth of its pages (%d MB; median)", mb/10), fmtMB(r.ckMemory.median()), ""},
		{"`rollback` to that checkpoint: the runtime ended, a copy of the checkpoint adopted in its place (median, worst)",
			fmtDur(r.rollback.median()) + ", " + fmtDur(r.rollback.max()), "under 100 ms"},
	}
	p("%s\n", table([]string{"measure", "this run", "aim"}, rows))
	p("The call is the whole `polyrepl fork`: the new holder started, the parent's worker forked, the copy adopted and recorded. `go run ./bench -only %s` reruns this section alone.\n\n", forkSection)
	for _, e := range r.errs {
		p("- not measured: %s\n", e)
	}
	return b.String()
}
