package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

// failure is a section of the run that failed: the run went on without
// it, and the report says so with its error.
type failure struct {
	section string
	err     string
}

// sectionTime is how long one section of the run took.
type sectionTime struct {
	section string
	took    time.Duration
}

// tookMarkdown says where the run's time went, section by section, so
// that a run growing past its budget shows what to trim.
func tookMarkdown(ts []sectionTime, all time.Duration) string {
	if len(ts) == 0 {
		return ""
	}
	var rows [][]string
	var sum time.Duration
	for _, t := range ts {
		rows = append(rows, []string{t.section, fmtDur(t.took.Seconds())})
		sum += t.took
	}
	rows = append(rows, []string{"the rest (building, starting and stopping daemons, the context section, Jupyter)", fmtDur((all - sum).Seconds())})
	return "## Where the run's time went\n\n" + table([]string{"section", "wall time"}, rows) + "\n"
}

// fail records a failed section and says so now.
func (r *report) fail(section string, err error) {
	logf("FAILED %s: %v", section, err)
	r.failed = append(r.failed, failure{section: section, err: err.Error()})
}

// guard runs one section, turning its error or its panic into a
// failure, so that the sections after it still run, and keeps how long
// it took.
func (r *report) guard(section string, f func() error) {
	t0 := time.Now()
	defer func() {
		if p := recover(); p != nil {
			r.fail(section, fmt.Errorf("panic: %v\n%s", p, debug.Stack()))
		}
		d := time.Since(t0)
		r.took = append(r.took, sectionTime{section, d})
		logf("%s: %s", section, d.Round(100*time.Millisecond))
	}()
	if err := f(); err != nil {
		r.fail(section, err)
	}
}

// restart gives the next section a fresh daemon. If the daemon cannot be
// stopped or started, that is reported, and a new daemon is made once
// more (the old one killed, its sessions taken up by a new one and
// ended); false if none runs, the section then reported as not run.
func (r *report) restart(ctx context.Context, w *world, section string) bool {
	err := w.restartDaemon(ctx)
	if err == nil {
		return true
	}
	r.fail("a fresh daemon for "+section, err)
	if err := w.resetDaemon(ctx); err != nil {
		r.fail(section, fmt.Errorf("not run, no daemon: %w", err))
		return false
	}
	return true
}

// resetDaemon starts a daemon after one that could not be stopped: it
// takes up what the last one left in its holders, is stopped (ending
// those sessions), and another starts, with none.
func (w *world) resetDaemon(ctx context.Context) error {
	if err := w.startDaemon(ctx); err != nil {
		return err
	}
	if err := w.stopDaemon(ctx); err != nil {
		return err
	}
	return w.startDaemon(ctx)
}

// daemonGone explains a daemon that could not be stopped: whether its
// process still runs (then it is killed, so that the next one can take
// its place) and the end of its log, where a crash says why.
func (w *world) daemonGone(pid int, err error) error {
	state := "its process had exited"
	if alive(pid) {
		state = "its process was still running (now killed)"
		syscall.Kill(pid, syscall.SIGKILL)
		for deadline := time.Now().Add(10 * time.Second); alive(pid) && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
	}
	log := filepath.Join(w.runtimeDir, "polyrepl", "daemon.log")
	// The harness removes its directory at the end: the whole log is kept
	// where a person can read it.
	kept := ""
	if b, err := os.ReadFile(log); err == nil {
		p := filepath.Join(os.TempDir(), fmt.Sprintf("polyrepl-bench-daemon-%d.log", pid))
		if os.WriteFile(p, b, 0o600) == nil {
			kept = " (the whole log kept in " + p + ")"
		}
	}
	return fmt.Errorf("stopping the daemon (pid %d): %w; %s; its log%s ends:\n%s", pid, err, state, kept, logTail(log, 6, fmt.Sprintf("polyrepl[%d] ", pid)))
}

// logTail is the last n lines of a log and the last n of its own lines
// (those starting with own: the daemon's, among its holders'), each
// clipped, and before them any line that tells of a crash (a panic, a
// fatal error) which the last lines would miss.
func logTail(path string, n int, own string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "  (no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	var crash, mine []string
	tail := lines[max(0, len(lines)-n):]
	for _, l := range lines[:len(lines)-len(tail)] {
		if (strings.HasPrefix(l, "panic") || strings.HasPrefix(l, "fatal error")) && len(crash) < 4 {
			crash = append(crash, l)
		}
		if own != "" && strings.HasPrefix(l, own) {
			mine = append(mine, l)
		}
	}
	out := append(crash, mine[max(0, len(mine)-n):]...)
	out = append(out, tail...)
	for i, l := range out {
		out[i] = "  " + clip(l)
	}
	return strings.Join(out, "\n")
}

// failedMarkdown lists the sections that failed, for the top of the
// report: a person must not read a table that is missing rows as whole.
func failedMarkdown(fs []failure) string {
	if len(fs) == 0 {
		return ""
	}
	var rows [][]string
	for _, f := range fs {
		rows = append(rows, []string{cellText(f.section), cellText(clipLong(f.err, 1500))})
	}
	return "## Sections that failed\n\nThe run went on without them; their rows below are missing or marked failed, and their targets are not measured.\n\n" +
		table([]string{"section", "error"}, rows) + "\n"
}

// clipLong keeps at most n bytes of s, cut at a rune boundary, and says so.
func clipLong(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && (s[i]&0xC0) == 0x80 {
		i--
	}
	return s[:i] + fmt.Sprintf(" … (%d bytes more)", len(s)-i)
}
