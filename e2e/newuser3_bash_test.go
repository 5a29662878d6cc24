package e2e

import (
	"strings"
	"testing"
)

// TestNewUser3BashPlumbing is issue 35's first item as a user met it: a
// cell that turns set -e on, and then an interrupt of a later cell, ended
// the session (SessionDied, status 2, "Lost names: A") and interrupt
// exited 0. Now the session lives, A survives, set -e staying on is said,
// what a cell did to the session's output is put back and said, and the
// background jobs of earlier cells live through the interrupt.
func TestNewUser3BashPlumbing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "bash", "apt install bash")
	out := e.mustSeen(1, "exec", "b", "--runtime", "bash", "A=1; set -e; false")
	wantContains(t, "set -e cell", out, "set -e stopped the cell", "set -e stays on")
	// Jobs of an earlier cell: a command, and a { …; } group whose sleep
	// does not ignore SIGINT.
	e.must(0, "exec", "b", "sleep 300 & j1=$!; { sleep 300; } & j2=$!")
	e.must(124, "exec", "b", "sleep 30", "-t", "1")
	out = e.mustSeen(0, "interrupt", "b")
	wantContains(t, "interrupt", out, "interrupted")
	wantLacks(t, "interrupt", out, "SessionDied")
	out = e.mustSeen(0, "exec", "b", `echo "A=$A"; kill -0 $j1 $j2 && echo jobs alive`)
	wantContains(t, "after the interrupt", out, "A=1", "jobs alive")
	// exec >file for good would hide every later cell's output.
	out = e.mustSeen(0, "exec", "b", "exec >/dev/null; echo gone")
	wantContains(t, "exec >/dev/null", out, "standard output was put back")
	out = e.mustSeen(0, "exec", "b", "echo back")
	wantContains(t, "the next cell", out, "back")
	// A user's ERR trap with set -e on ends the cell, not the session.
	out = e.mustSeen(1, "exec", "b", "trap 'echo err-trap' ERR; false; echo not here")
	wantContains(t, "ERR trap", out, "err-trap", "set -e stopped the cell")
	wantLacks(t, "ERR trap", out, "not here")
	out = e.mustSeen(0, "exec", "b", `set +e; echo "A=$A"`)
	wantContains(t, "at the end", out, "A=1")
}

// TestNewUser3ExitStatuses drives every command through its main outcomes
// — done, refused, the session dead or dying, no session of that name,
// still running, a question — and checks each exit status against what
// `polyrepl help` and the command's own help say.
func TestNewUser3ExitStatuses(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	help, _ := e.must(0, "help")
	wantContains(t, "help", strings.Join(strings.Fields(help), " "),
		"Exit status, for every command: 0 done", "1 the cell raised or was interrupted, or the session is dead or died",
		"2 the request was refused (usage, bad input, no session of that name", "3 the cell waits for input", "124 the cell still runs",
		"interrupt exits 0 once the cell stopped; status exits 1 when no daemon runs; setup exits 1 when the client's file could not be written")
	ih, _ := e.must(0, "help", "interrupt")
	wantContains(t, "help interrupt", strings.Join(strings.Fields(ih), " "),
		"0 the cell stopped (or nothing was running), 1 the session is dead or died meanwhile, 2 refused (no session of that name), 3 the cell asks for input, 124 the cell is still running")

	for _, c := range []struct {
		what string
		want int
		args []string
	}{
		{"exec: done", 0, []string{"exec", "p", "x = 1"}},
		{"exec: raised", 1, []string{"exec", "p", "1/0"}},
		{"exec: refused (unknown flag)", 2, []string{"exec", "p", "1", "--no-such-flag"}},
		{"exec: still running", 124, []string{"exec", "p", "import time; time.sleep(60)", "-t", "0.5"}},
		{"exec: refused (busy)", 2, []string{"exec", "p", "1"}},
		{"wait: still running", 124, []string{"wait", "p", "-t", "0.5"}},
		{"interrupt: stopped", 0, []string{"interrupt", "p"}},
		{"interrupt: nothing running", 0, []string{"interrupt", "p"}},
		{"wait: done", 0, []string{"wait", "p", "-t", "0"}},
		{"exec: asks for input", 3, []string{"exec", "p", "input('q? ')"}},
		{"input: done", 0, []string{"input", "p", "yes"}},
		{"input: refused (no question)", 2, []string{"input", "p", "again"}},
		{"sessions: done", 0, []string{"sessions"}},
		{"history: done", 0, []string{"history", "p"}},
		{"log: done", 0, []string{"log", "p"}},
		{"export: done", 0, []string{"export", "p"}},
		{"restart: done", 0, []string{"restart", "p"}},
		// The session dies of the interrupt: as exec says a death.
		{"exec: still running (SIGINT ends the runtime)", 124, []string{"exec", "p", "import os, signal, time; signal.signal(signal.SIGINT, lambda *a: os._exit(5)); time.sleep(60)", "-t", "0.5"}},
		{"interrupt: the session died", 1, []string{"interrupt", "p"}},
		{"wait: the session is dead", 1, []string{"wait", "p"}},
		{"interrupt: the session is dead", 1, []string{"interrupt", "p"}},
		{"exec: the session died", 1, []string{"exec", "p", "import os; os._exit(3)"}},
		{"exec: done (a new life)", 0, []string{"exec", "p", "1"}},
		{"kill: done", 0, []string{"kill", "p"}},
		{"kill: the session is dead", 1, []string{"kill", "p"}},
		{"exec: no such session is a fresh one", 0, []string{"exec", "q", "1"}},
		{"exec: still running, past its interrupt", 124, []string{"exec", "sh", "--runtime", "bash", "sh -c 'trap \"\" INT; sleep 60'", "-t", "0.5"}},
		{"interrupt: still running", 124, []string{"interrupt", "sh"}},
		{"kill: the session still running", 0, []string{"kill", "sh"}},
		{"wait: no such session", 2, []string{"wait", "nosuch"}},
		{"interrupt: no such session", 2, []string{"interrupt", "nosuch"}},
		{"input: no such session", 2, []string{"input", "nosuch", "x"}},
		{"kill: no such session", 2, []string{"kill", "nosuch"}},
		{"restart: no such session", 2, []string{"restart", "nosuch"}},
		{"history: no such session", 2, []string{"history", "nosuch"}},
		{"log: no such session", 2, []string{"log", "nosuch"}},
		{"export: no such session", 2, []string{"export", "nosuch"}},
		{"sessions: no such session", 2, []string{"sessions", "nosuch"}},
		{"runtimes: done", 0, []string{"runtimes"}},
		{"status: a daemon runs", 0, []string{"status"}},
		{"start: done (already running)", 0, []string{"start"}},
		{"help: done", 0, []string{"help", "exec"}},
		{"help: unknown command", 2, []string{"help", "nosuch"}},
		{"an unknown command", 2, []string{"nosuch"}},
		{"setup: unknown client", 2, []string{"setup", "nosuch"}},
		{"attach: refused (no terminal)", 2, []string{"attach", "q"}},
		{"stop: done", 0, []string{"stop"}},
		{"status: no daemon runs", 1, []string{"status"}},
		{"stop: done (none was running)", 0, []string{"stop"}},
	} {
		stdout, stderr, code := e.run(c.args...)
		if code != c.want {
			t.Errorf("%s: polyrepl %s exited %d, want %d\nstdout: %s\nstderr: %s", c.what, strings.Join(c.args, " "), code, c.want, clip(stdout), clip(stderr))
		}
	}
}
