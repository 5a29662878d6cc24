package main

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/paths"
)

// ownerSection measures what issue 34's one owner of a session's live
// state costs and saves: the disk a large print takes (the holder's cell
// log is its one copy), a holder's memory while its runtime prints a
// gigabyte, the trivial cell's round trip through the holder, and how
// soon a new daemon answers with many sessions and with silent sockets
// among its holders'.
const ownerSection = "owner"

// ownerResult is that section's numbers.
type ownerResult struct {
	printed               int64   // bytes of the large print
	diskPeak, diskAfter   int64   // the session's files, at the print's peak and after
	rssPrinted            int64   // bytes the holder's runtime printed
	holderIdle, holderTop float64 // the holder's RSS before and at its peak
	trivial               series  // 1+1 through the client, seconds
	answer100, answer40   series  // SIGKILL to the next daemon answering, seconds
	errs                  []string
}

func owner(ctx context.Context, w *world, c config) *ownerResult {
	res := &ownerResult{printed: 300 << 20, rssPrinted: 1 << 30}
	if c.quick {
		res.printed, res.rssPrinted = 30<<20, 100<<20
	}
	cl := w.newClient()
	fail := func(what string, err error) { res.errs = append(res.errs, what+": "+err.Error()) }

	// The disk a large print takes, sampled while it runs and after.
	logf("a %d MB print: the disk it takes", res.printed>>20)
	dirs := []string{w.stateDir, w.runtimeDir}
	before := diskOf(dirs...)
	stop, peak := make(chan struct{}), make(chan int64)
	go func() {
		top := int64(0)
		for {
			top = max(top, diskOf(dirs...)-before)
			select {
			case <-stop:
				peak <- top
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	_, err := clientExec(ctx, cl, "own", w.execReq(printCell(res.printed)), nil)
	close(stop)
	res.diskPeak, res.diskAfter = <-peak, diskOf(dirs...)-before
	if err != nil {
		fail("the large print", err)
	}

	// A holder's memory while its runtime prints a gigabyte.
	logf("a %d MB print: the holder's memory", res.rssPrinted>>20)
	if _, err := clientExec(ctx, cl, "rss", w.execReq("0"), nil); err != nil {
		fail("the holder's memory", err)
	} else if infos, err := cl.Sessions(ctx, "rss"); err != nil || len(infos) != 1 || infos[0].Holder == 0 {
		fail("the holder's memory", fmt.Errorf("no holder listed: %v", err))
	} else {
		hpid := infos[0].Holder
		time.Sleep(holderQuiet)
		res.holderIdle = float64(vmRSS(hpid))
		stop, top := make(chan struct{}), make(chan uint64)
		go func() {
			m := uint64(0)
			for {
				m = max(m, vmRSS(hpid))
				select {
				case <-stop:
					top <- m
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
		}()
		_, err := clientExec(ctx, cl, "rss", w.execReq(printCell(res.rssPrinted)), nil)
		close(stop)
		res.holderTop = float64(<-top)
		if err != nil {
			fail("the holder's memory", err)
		}
	}
	w.kill(ctx, cl, "own")
	w.kill(ctx, cl, "rss")

	// 1+1 through the holder.
	logf("1+1, %d times", c.reps)
	for range c.reps {
		t, err := clientExec(ctx, cl, "one", w.execReq("1+1"), valueIs("2"))
		if err != nil {
			fail("1+1", err)
			break
		}
		res.trivial = append(res.trivial, t)
	}
	w.kill(ctx, cl, "one")

	// A new daemon answering: with 100 sessions, then with 40 silent
	// sockets among its holders' as well.
	names := make([]string, 100)
	for i := range names {
		names[i] = fmt.Sprintf("own%d", i)
	}
	if err := w.createSessions(ctx, names, 4); err != nil {
		fail("100 sessions", err)
		return res
	}
	reps := 3
	if c.quick {
		reps = 1
	}
	answer := func() (float64, error) {
		w.killDaemon()
		t0 := time.Now()
		if err := w.startDaemon(ctx); err != nil {
			return 0, err
		}
		return secs(time.Since(t0)), nil
	}
	for range reps {
		t, err := answer()
		if err != nil {
			fail("a new daemon with 100 sessions", err)
			return res
		}
		res.answer100 = append(res.answer100, t)
	}
	holders := paths.HoldersDir(filepath.Join(w.runtimeDir, "polyrepl"))
	var silent []*net.UnixListener
	for i := range 40 {
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(holders, fmt.Sprintf("silent%02d.sock", i)), Net: "unix"})
		if err != nil {
			fail("planting a silent socket", err)
			break
		}
		silent = append(silent, ln) // it listens and never accepts
	}
	for range reps {
		t, err := answer()
		if err != nil {
			fail("a new daemon with 40 silent sockets", err)
			break
		}
		res.answer40 = append(res.answer40, t)
	}
	for _, ln := range silent {
		ln.Close()
	}
	for _, n := range names {
		w.kill(ctx, cl, n)
	}
	return res
}

// printCell prints n bytes of lines of 1,024 characters, in writes of a
// megabyte.
func printCell(n int64) string {
	return fmt.Sprintf("import sys\nblock = ('x' * 1023 + '\\n') * 1024\nfor _ in range(%d):\n    sys.stdout.write(block)\nsys.stdout.flush()", n>>20)
}

// diskOf is the bytes the files under dirs take.
func diskOf(dirs ...string) int64 {
	var n int64
	for _, d := range dirs {
		filepath.WalkDir(d, func(_ string, de fs.DirEntry, err error) error {
			if err == nil && de.Type().IsRegular() {
				if fi, err := de.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
	}
	return n
}

// ownerMarkdown is the section of the report.
func ownerMarkdown(r *ownerResult) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## One owner of a session's live state (issue 34)\n\n")
	ratio := func(n int64) string { return fmt.Sprintf("%.2f×", float64(n)/float64(r.printed)) }
	rows := [][]string{
		{fmt.Sprintf("disk taken by a %d MB print, at its peak", r.printed>>20), fmtMB(float64(r.diskPeak)) + " (" + ratio(r.diskPeak) + ")", "one copy, at most 1.1×"},
		{fmt.Sprintf("disk taken by a %d MB print, after it", r.printed>>20), fmtMB(float64(r.diskAfter)) + " (" + ratio(r.diskAfter) + ")", "one copy, at most 1.1×"},
		{fmt.Sprintf("a holder's RSS while its runtime prints %d MB, above idle (%s)", r.rssPrinted>>20, fmtMB(r.holderIdle)), fmtMB(r.holderTop - r.holderIdle), "at most 64 MB"},
		{"`1+1` through the client, the daemon and the holder (median)", fmtDur(r.trivial.median()), "no regression (see the round trips above)"},
		{"SIGKILL to a new daemon answering, 100 idle sessions (median)", fmtDur(r.answer100.median()), "within 2 s"},
		{"the same with 40 silent sockets among the holders' (median)", fmtDur(r.answer40.median()), "within 2 s"},
	}
	p("%s\n", table([]string{"measure", "this run", "aim"}, rows))
	p("The print's disk is every file under the state and runtime directories, sampled every 20 ms while the cell runs; its one copy is the cell's output log, which the reply's cut and the record's entry point at. A silent socket listens and never accepts. `go run ./bench -only %s` reruns this section alone.\n\n", ownerSection)
	for _, e := range r.errs {
		p("- not measured: %s\n", e)
	}
	return b.String()
}
