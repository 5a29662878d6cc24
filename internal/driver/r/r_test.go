package r

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/driver/drivertest"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

// recorder records the worker's events (shared by every runtime's tests).
type recorder = drivertest.Recorder

func testR(t testing.TB) string {
	return drivertest.Exe(t, "POLYREPL_TEST_R", "R", "R 4 (Debian: apt-get install r-base-core)")
}

type options struct {
	exe   string
	env   []string
	limit int
}

func start(t testing.TB) (driver.Process, *recorder) {
	t.Helper()
	return startWith(t, options{})
}

func startWith(t testing.TB, o options) (driver.Process, *recorder) {
	t.Helper()
	if o.exe == "" {
		o.exe = testR(t)
	}
	return drivertest.StartWith(t, worker.Driver{R: Runtime}, o.exe, drivertest.Options{Env: o.env, ValueLimit: o.limit})
}

// interrupt escalates as the session does, a moment apart, until the cell
// ends.
func interrupt(t *testing.T, p driver.Process, rec *recorder) driver.Result {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for attempt := 0; ; attempt++ {
		if err := p.Interrupt(attempt); err != nil {
			t.Fatalf("interrupt %d: %v", attempt, err)
		}
		select {
		case r := <-rec.Done:
			return r
		case <-time.After(300 * time.Millisecond):
		case <-deadline:
			t.Fatal("the cell was not interrupted")
		}
	}
}

func withoutLocale(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "LANG=") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANGUAGE=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// The worker greets with R's version and executable, and leaves the user
// an empty global environment whose names cannot reach the worker's.
func TestStart(t *testing.T) {
	p, rec := start(t)
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(p.Version()) {
		t.Errorf("version = %q, want like 4.2.2", p.Version())
	}
	out, err := exec.Command(testR(t), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "R version "+p.Version()) {
		t.Errorf("version %q is not in R --version: %q", p.Version(), out)
	}
	if !filepath.IsAbs(p.Exe()) {
		t.Errorf("executable %q is not absolute", p.Exe())
	} else if _, err := os.Stat(p.Exe()); err != nil {
		t.Errorf("executable: %v", err)
	}

	r := drivertest.Run(t, p, rec, 1, "ls(globalenv(), all.names = TRUE)")
	if r.Status != "done" || r.Value != "character(0)" || len(r.Names) != 0 {
		t.Errorf("fresh namespace: %+v", r)
	}
	r = drivertest.Run(t, p, rec, 2, "search()")
	if strings.Contains(r.Value, "polyrepl") || strings.Contains(r.Value, "worker") {
		t.Errorf("the worker is on the search path: %s", r.Value)
	}
	// Names the worker uses, and base functions it calls, redefined by the
	// user: the next cells still work.
	r = drivertest.Run(t, p, rec, 3, strings.Join([]string{
		"st <- 1; send <- function(...) stop('clobbered'); run_cell <- 0; json <- NULL",
		"main <- 1; run_top <- NULL; eval_cell <- 2; user_names <- function() 'x'",
		"print <- function(...) stop('clobbered'); cat <- function(...) stop('clobbered')",
		"flush <- NULL; writeBin <- NULL; eval <- function(...) stop('clobbered'); withVisible <- 1",
	}, "\n"))
	if r.Status != "done" {
		t.Fatalf("defining names: %+v %+v", r, r.Error)
	}
	r = drivertest.Run(t, p, rec, 4, "6*7")
	if r.Status != "done" || r.Value != "[1] 42" {
		t.Errorf("after clobbering: %+v %+v", r, r.Error)
	}
	want := []string{"cat", "eval", "eval_cell", "flush", "json", "main", "print", "run_cell", "run_top",
		"send", "st", "user_names", "withVisible", "writeBin"}
	if fmt.Sprint(r.Names) != fmt.Sprint(want) {
		t.Errorf("names = %v, want %v", r.Names, want)
	}
	if got := rec.TakeOutput(); got != "" {
		t.Errorf("output = %q, want none", got)
	}
}

// Rscript takes the same arguments, so $POLYREPL_R may name it.
func TestRscript(t *testing.T) {
	dir := filepath.Dir(testR(t))
	rscript := filepath.Join(dir, "Rscript")
	if _, err := os.Stat(rscript); err != nil {
		t.Skip("no Rscript beside R")
	}
	p, rec := startWith(t, options{exe: rscript})
	if r := drivertest.Run(t, p, rec, 1, "6*7"); r.Value != "[1] 42" {
		t.Errorf("6*7 under Rscript: %+v", r)
	}
}

// Each cell's display equals what R prints for the same code at its
// prompt (R -f prints visible top-level values the same way): earlier
// values in the output, the last one as the value.
func TestValuesAsTheREPL(t *testing.T) {
	p, rec := start(t)
	cells := []string{
		"6*7",
		"1:30",
		"x <- 5",
		"(x <- 5)",
		"invisible(3)",
		"'a'\nc(a = 1.5, b = NA)\nlist(a = 1, b = 'x')",
		"data.frame(n = 1:3, s = c('a', 'b', 'c'))",
		"f <- function(x) {\n  # keeps its source\n  x + 1\n}\nf",
		"print.myclass <- function(x, ...) cat('<myclass', unclass(x), '>\\n')\nstructure(7, class = 'myclass')",
		"setClass('P', representation(x = 'numeric'))\nnew('P', x = 1)",
		"NULL",
		"factor(c('u', 'v', 'u'))",
		"matrix(1:6, 2)",
		"x + 1\n.Last.value * 2",
	}
	// The reference is one R run of every cell, with a marker printed
	// between cells; R -f keeps no source by default, the prompt does.
	const marker = "\x01cell\x01\n"
	var script strings.Builder
	script.WriteString("options(keep.source = TRUE)\n")
	for _, code := range cells {
		script.WriteString("cat('\\001cell\\001\\n')\n" + code + "\n")
	}
	file := filepath.Join(t.TempDir(), "cells.R")
	if err := os.WriteFile(file, []byte(script.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ref, err := exec.Command(testR(t), "--no-echo", "--no-restore", "-f", file).CombinedOutput()
	if err != nil {
		t.Fatalf("reference run: %v\n%s", err, ref)
	}
	want := strings.Split(string(ref), marker)[1:]
	if len(want) != len(cells) {
		t.Fatalf("reference run printed %d cells, want %d:\n%s", len(want), len(cells), ref)
	}
	for i, code := range cells {
		r := drivertest.Run(t, p, rec, i+1, code)
		if r.Status != "done" {
			t.Errorf("%q: %+v %+v", code, r, r.Error)
			continue
		}
		got := rec.TakeOutput()
		if r.Value != "" {
			got += r.Value + "\n"
		}
		if got != want[i] {
			t.Errorf("%q:\n got %q\nwant %q", code, got, want[i])
		}
	}
}

// Multi-line cells, cells over 4 KB, and Unicode in code and output
// round-trip exactly, even with no locale set.
func TestCellsAndUnicode(t *testing.T) {
	p, rec := startWith(t, options{env: withoutLocale(os.Environ())})
	r := drivertest.Run(t, p, rec, 1, "f <- function(a, b) {\n  s <- a +\n    b\n  s * 2\n}\nf(1, 2)")
	if r.Status != "done" || r.Value != "[1] 6" {
		t.Errorf("multi-line: %+v %+v", r, r.Error)
	}
	var big strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&big, "v%03d <- %d # filler to pass 4 KB\n", i, i)
	}
	big.WriteString("sum(sapply(ls(pattern = '^v[0-9]+$'), get)) + f(0, 0)")
	if big.Len() < 8192 {
		t.Fatalf("cell is only %d bytes", big.Len())
	}
	r = drivertest.Run(t, p, rec, 2, big.String())
	if r.Status != "done" || r.Value != "[1] 79800" {
		t.Errorf("big cell: %+v %+v", r, r.Error)
	}
	long := strings.Repeat("ü", 5000)
	r = drivertest.Run(t, p, rec, 3, "s <- '"+long+"'\nnchar(s)")
	if r.Value != "[1] 5000" {
		t.Errorf("long Unicode literal: %+v %+v", r, r.Error)
	}
	rec.TakeOutput()

	text := "héllo ✓ 日本 🎉"
	r = drivertest.Run(t, p, rec, 4, "u <- '"+text+"'\ncat(u, '\\n', sep = '')\nc(nchar(u), nchar(u, 'bytes'))")
	if got := rec.TakeOutput(); got != text+"\n" {
		t.Errorf("Unicode output = %q, want %q", got, text+"\n")
	}
	if r.Value != fmt.Sprintf("[1] %2d %2d", utf8.RuneCountInString(text), len(text)) {
		t.Errorf("Unicode lengths = %q", r.Value)
	}
	r = drivertest.Run(t, p, rec, 5, "'"+text+"'")
	if r.Value != `[1] "`+text+`"` {
		t.Errorf("Unicode value = %q", r.Value)
	}
	r = drivertest.Run(t, p, rec, 6, "stop('ошибка ✗')")
	if r.Error == nil || r.Error.Message != "ошибка ✗" {
		t.Errorf("Unicode error = %+v", r.Error)
	}
}

// All output a cell writes, from R, stderr and a subprocess, arrives in
// order before the cell is reported done, the value is not printed, and
// nothing of the end marker leaks into it.
func TestOutputBeforeDone(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, "cat('a\\n'); message('b'); system('echo c'); cat('d')\nsystem('printf e >&2'); print(1:2); cat('f'); 6*7")
	if r.Status != "done" || r.Value != "[1] 42" {
		t.Fatalf("result = %+v %+v", r, r.Error)
	}
	if got := rec.TakeOutput(); got != "a\nb\nc\nde[1] 1 2\nf" {
		t.Errorf("output = %q", got)
	}
	if last := rec.LastEvent(); last != "done" {
		t.Errorf("last event = %s, want done", last)
	}
	// A long output crossing many pipe reads keeps its bytes exactly.
	r = drivertest.Run(t, p, rec, 2, "for (i in 0:19999) cat(i, ',', sep = '')")
	want := new(strings.Builder)
	for i := 0; i < 20000; i++ {
		want.WriteString(strconv.Itoa(i) + ",")
	}
	if got := rec.TakeOutput(); got != want.String() {
		t.Errorf("long output differs: got %d bytes, want %d", len(got), want.Len())
	}
	if r.Status != "done" || r.Value != "" {
		t.Errorf("result = %+v", r)
	}
	// A sink the cell leaves open diverts R's output, not the end marker.
	r = drivertest.Run(t, p, rec, 3, "sink(file.path(tempdir(), 'sunk.txt')); cat('hidden\\n'); 5")
	if r.Status != "done" || r.Value != "[1] 5" {
		t.Errorf("with a sink: %+v", r)
	}
	r = drivertest.Run(t, p, rec, 4, "sink(); readLines(file.path(tempdir(), 'sunk.txt'))")
	if r.Value != `[1] "hidden"` {
		t.Errorf("after the sink: %+v", r)
	}
	if got := rec.TakeOutput(); got != "" || strings.Contains(got, "polyrepl-end") {
		t.Errorf("output = %q", got)
	}
}

// Warnings are printed after each top-level expression, as the REPL does,
// and kept for warnings().
func TestWarnings(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, "warning('top'); 1")
	if got := rec.TakeOutput(); got != "Warning message:\ntop \n" || r.Value != "[1] 1" {
		t.Errorf("top-level warning: output %q, result %+v", got, r)
	}
	r = drivertest.Run(t, p, rec, 2, "f <- function() { warning('in f'); 2 }\nf()\nlog(-1)")
	if got := rec.TakeOutput(); got != "[1] 2\nWarning message:\nIn f() : in f\nWarning message:\nIn log(-1) : NaNs produced\n" {
		t.Errorf("warnings: output %q", got)
	}
	r = drivertest.Run(t, p, rec, 3, "for (i in 1:12) f()")
	if got := rec.TakeOutput(); got != "There were 12 warnings (use warnings() to see them)\n" {
		t.Errorf("many warnings: output %q", got)
	}
	r = drivertest.Run(t, p, rec, 4, "length(warnings())")
	if r.Value != "[1] 12" {
		t.Errorf("warnings() after many: %+v", r)
	}
	// Warnings before an error are still shown.
	r = drivertest.Run(t, p, rec, 5, "g <- function() { warning('first'); stop('then') }\ng()")
	if got := rec.TakeOutput(); r.Status != "error" || got != "Warning message:\nIn g() : first\n" {
		t.Errorf("warning then error: output %q, result %+v", got, r)
	}
}

// Errors come back with R's class, message and the REPL's text plus the
// user's stack; none of the worker's frames; the session goes on.
func TestErrors(t *testing.T) {
	p, rec := start(t)
	cases := []struct {
		code, typ, msg, tb string
	}{
		{"stop('top')", "simpleError", "top", "Error: top"},
		{"f <- function() stop('boom')\ng <- function() f()\ng()", "simpleError", "boom",
			"Error in f() : boom\n3: stop(\"boom\") at <cell 2>#1\n2: f() at <cell 2>#2\n1: g()"},
		{"log('a')", "simpleError", "non-numeric argument to mathematical function",
			"Error in log(\"a\") : non-numeric argument to mathematical function"},
		{"h <- function() undefined_thing + 1\nh()", "simpleError", "object 'undefined_thing' not found",
			"Error in h() : object 'undefined_thing' not found\n1: h()"},
		{"stop(structure(class = c('myError', 'error', 'condition'), list(message = 'custom', call = NULL)))",
			"myError", "custom", "Error: custom"},
		{"k <- function() stop('a very long message that goes on and on and on and on for a while')\nk()",
			"simpleError", "a very long message that goes on and on and on and on for a while",
			"Error in k() : \n  a very long message that goes on and on and on and on for a while\n2: stop(\"a very long message that goes on and on and on and on for a while\") at <cell 6>#1\n1: k()"},
		{"1 +", "simpleError", "<cell 7>:2:0: unexpected end of input\n1: 1 +\n   ^",
			"Error: <cell 7>:2:0: unexpected end of input\n1: 1 +\n   ^"},
		{"print.bad <- function(x, ...) stop('cannot print')\nstructure(1, class = 'bad')", "simpleError", "cannot print",
			"Error in print.bad(x) : cannot print\n3: stop(\"cannot print\") at <cell 8>#1\n2: print.bad(x)\n1: base::print(x)"},
		{"x <- 1; stop('after x')", "simpleError", "after x", "Error: after x"},
	}
	for i, c := range cases {
		r := drivertest.Run(t, p, rec, i+1, c.code)
		if r.Status != "error" || r.Error == nil {
			t.Errorf("%q: %+v", c.code, r)
			continue
		}
		if r.Error.Type != c.typ || r.Error.Message != c.msg || r.Error.Traceback != c.tb {
			t.Errorf("%q:\n got %q %q\n%s\nwant %q %q\n%s", c.code, r.Error.Type, r.Error.Message, r.Error.Traceback, c.typ, c.msg, c.tb)
		}
		if got := rec.TakeOutput(); got != "" {
			t.Errorf("%q printed %q", c.code, got)
		}
	}
	// A runaway recursion: the error, a shortened stack, and no worker frames.
	r := drivertest.Run(t, p, rec, 20, "deep <- function(n) if (n == 0) stop('deep') else deep(n - 1)\ndeep(100)")
	if r.Error == nil || !strings.Contains(r.Error.Traceback, "calls not shown") ||
		!strings.HasSuffix(r.Error.Traceback, "\n1: deep(100)") {
		t.Errorf("deep stack: %+v", r.Error)
	}
	for _, w := range []string{"run_top", "eval_cell", "cell_expr", "withCallingHandlers", "tryCatch", "sys.source", "handleSimpleError"} {
		if strings.Contains(r.Error.Traceback, w) {
			t.Errorf("worker frame %q in traceback:\n%s", w, r.Error.Traceback)
		}
	}
	// The abort restart R's prompt offers ends the cell, not the session.
	r = drivertest.Run(t, p, rec, 21, "x <- 1\ninvokeRestart('abort')\nx <- 2")
	if r.Status != "error" || r.Error == nil || r.Error.Type != "abort" {
		t.Errorf("abort: %+v %+v", r, r.Error)
	}
	r = drivertest.Run(t, p, rec, 22, "c(x, 1 + 1)")
	if r.Status != "done" || r.Value != "[1] 1 2" {
		t.Errorf("after errors: %+v %+v", r, r.Error)
	}
}

// SIGINT stops a running cell, keeps the session and its names, and is
// ignored between cells.
func TestInterrupt(t *testing.T) {
	p, rec := start(t)
	drivertest.Run(t, p, rec, 1, "x <- 42")
	// A loop R's bytecode compiler takes seconds to ready (its JIT) is
	// interrupted while it compiles: the traceback is the cell's, not
	// the compiler's frames.
	slowToCompile := "for (i in 1:2) {\n" + strings.Repeat("x <- x + 1\n", 3000) + "}"
	cells := []struct{ code, tb string }{
		{slowToCompile, "Interrupted"},
		{"repeat {}", "Interrupted"},
		{"spin <- function() while (TRUE) x <- x + 1\nspin()", "Interrupted\n1: spin()"},
		{"Sys.sleep(60)", "Interrupted\n1: Sys.sleep(60)"},
	}
	for i, c := range cells {
		if err := p.Run(i+2, c.code); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		r := interrupt(t, p, rec)
		if r.Status != "interrupted" || r.Error == nil || r.Error.Type != "interrupt" || r.Error.Traceback != c.tb {
			t.Errorf("%q: %+v %+v", c.code, r, r.Error)
		}
	}
	// A subprocess the cell waits on is ended; R then runs the rest of the
	// cell, as it does at its prompt, and the cell is reported
	// interrupted, saying so (it was reported done, and a cell of
	// system() alone showed nothing at all).
	for i, code := range []string{"system('sleep 60'); 'ran on'", "system('sleep 60')"} {
		if err := p.Run(len(cells)+2+i, code); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		r := interrupt(t, p, rec)
		if r.Status != "interrupted" || r.Error == nil || r.Error.Type != "interrupt" ||
			!strings.Contains(r.Error.Traceback, "ended the subprocess the cell waited on (system())") {
			t.Errorf("%s: %+v %+v", code, r, r.Error)
		}
	}
	// Between cells, even twice, SIGINT changes nothing.
	for i := 0; i < 2; i++ {
		if err := syscall.Kill(p.PID(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r := drivertest.Run(t, p, rec, 10, "for (i in 1:300000) NULL\nSys.sleep(0.1)\nx")
	if r.Status != "done" || r.Value != "[1] 42" {
		t.Errorf("after idle SIGINTs: %+v %+v", r, r.Error)
	}
	if fmt.Sprint(r.Names) != "[i spin x]" {
		t.Errorf("names = %v", r.Names)
	}
}

// Names are the user's, sorted by code point, dot-names hidden, at most 500.
func TestNames(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, "b <- 1; a <- 2; B <- 3; .hidden <- 4; `é` <- 5")
	if fmt.Sprint(r.Names) != "[B a b é]" {
		t.Errorf("names = %v", r.Names)
	}
	r = drivertest.Run(t, p, rec, 2, "rm(list = ls()); for (i in 1:600) assign(sprintf('v%03d', i), i)")
	if len(r.Names) != 500 || r.Names[0] != "i" || r.Names[499] != "v499" {
		t.Errorf("%d names, %v … %v", len(r.Names), r.Names[:2], r.Names[len(r.Names)-1])
	}
}

// A value longer than the limit comes back as head and tail, cut by
// characters.
func TestValueLimit(t *testing.T) {
	p, rec := startWith(t, options{limit: 100})
	r := drivertest.Run(t, p, rec, 1, "strrep('é', 1000)")
	total := len(`[1] ""`) + 1000
	if r.ValueCut == nil || r.ValueTotal != total {
		t.Fatalf("result = %+v", r)
	}
	head, tail, ok := strings.Cut(r.Value, "\n[… ")
	if !ok || head != `[1] "`+strings.Repeat("é", 45) || !strings.HasSuffix(tail, strings.Repeat("é", 49)+`"`) {
		t.Errorf("value = %q", r.Value)
	}
	if !strings.Contains(r.Value, fmt.Sprintf("%d characters cut", total-100)) {
		t.Errorf("value = %q", r.Value)
	}
	r = drivertest.Run(t, p, rec, 2, "strrep('x', 94)")
	if r.ValueCut != nil || r.Value != `[1] "`+strings.Repeat("x", 94)+`"` {
		t.Errorf("value at the limit = %+v", r)
	}
}

// The cell's subprocesses do not inherit the control channels: none of
// the pipes this test made for the worker, except the output pipe and R's
// console (their standard input, as at R's prompt), is open in a
// subprocess. (Pipes inherited from outside the test are ignored.)
func TestSubprocessFDs(t *testing.T) {
	before := pipes(t, "/proc/self/fd")
	p, rec := start(t)
	control := pipes(t, "/proc/self/fd")
	for k := range before {
		delete(control, k)
	}
	r := drivertest.Run(t, p, rec, 1, "system('ls -l /proc/self/fd')")
	if r.Status != "done" {
		t.Fatalf("%+v", r)
	}
	out := rec.TakeOutput()
	re := regexp.MustCompile(`(?m) (\d+) -> (.*)$`)
	links := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		links[m[1]] = m[2]
	}
	if links["1"] == "" {
		t.Fatalf("no fd 1 in %q", out)
	}
	delete(control, links["1"])
	delete(control, links["0"])
	if len(control) != 2 {
		t.Fatalf("found %d control pipes, want 2: %v", len(control), control)
	}
	for fd, target := range links {
		if control[target] {
			t.Errorf("the subprocess holds a control channel as fd %s (%s)", fd, target)
		}
	}
}

// pipes lists the pipes open in a /proc fd directory.
func pipes(t *testing.T, dir string) map[string]bool {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("cannot list open files: %v", err)
	}
	out := map[string]bool{}
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(target, "pipe:") {
			out[target] = true
		}
	}
	return out
}

// A cell that closes every connection, the worker's channels with them,
// ends the session with a message instead of leaving it hung or spinning.
func TestClosedChannels(t *testing.T) {
	p, rec := start(t)
	if err := p.Run(1, "closeAllConnections()"); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-rec.Exit:
		rec.Exit <- e // for the cleanup
		if e.Code != 70 {
			t.Errorf("exit = %+v, want status 70", e)
		}
	case r := <-rec.Done:
		t.Fatalf("the cell was reported done: %+v", r)
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not end")
	}
	if got := rec.TakeOutput(); !strings.Contains(got, "closeAllConnections()?); the session ends") {
		t.Errorf("output = %q", got)
	}
}

// BenchmarkCell measures one trivial cell through the worker protocol:
// the pipe round trip, framing and marker scan, without the daemon.
func BenchmarkCell(b *testing.B) {
	p, rec := start(b)
	drivertest.BenchCell(b, p, rec, "1+1")
}
