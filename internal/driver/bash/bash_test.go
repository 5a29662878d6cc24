package bash

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver/drivertest"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

// recorder records the worker's events (shared by every runtime's tests).
type recorder = drivertest.Recorder

// testBash is the bash the tests run: $POLYREPL_TEST_BASH, else bash on
// PATH. Tests skip, naming it, when there is none or it is too old.
func testBash(t testing.TB) string {
	exe := os.Getenv("POLYREPL_TEST_BASH")
	if exe == "" {
		p, err := exec.LookPath("bash")
		if err != nil {
			t.Skip("no bash: install bash 4.1 or newer or set POLYREPL_TEST_BASH")
		}
		exe = p
	}
	out, err := exec.Command(exe, "-c", `echo "${BASH_VERSINFO[0]} ${BASH_VERSINFO[1]}"`).Output()
	if err != nil {
		t.Skipf("bash %s does not run (%v): install bash 4.1 or newer or set POLYREPL_TEST_BASH", exe, err)
	}
	var major, minor int
	fmt.Sscan(string(out), &major, &minor)
	if major < 4 || major == 4 && minor < 1 {
		t.Skipf("bash %s is %d.%d: the bash runtime needs bash 4.1 or newer (set POLYREPL_TEST_BASH)", exe, major, minor)
	}
	return exe
}

// session is one worker under test.
type session struct {
	p   driver.Process
	rec *recorder
	dir string // the runtime directory, also the cwd and $HOME
	n   int
}

// testEnv is the caller's environment with no locale, as on a bare server,
// and a temporary home, so a history file would show.
func testEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "LANG" || k == "HOME" || strings.HasPrefix(k, "LC_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home)
}

func start(t testing.TB) *session {
	t.Helper()
	return startIn(t, t.TempDir())
}

// startIn starts a worker whose cwd, runtime directory and home are dir.
func startIn(t testing.TB, dir string) *session {
	t.Helper()
	exe := testBash(t)
	rec := drivertest.NewRecorder()
	p, err := worker.Driver{R: Runtime}.Start(context.Background(), driver.Spec{
		Exe: exe, Cwd: dir, Env: testEnv(dir), Cookie: "POLYREPL_TEST_COOKIE=" + strconv.Itoa(os.Getpid()),
		RuntimeDir: dir, ValueLimit: 10000,
	}, rec)
	if err != nil {
		t.Fatal(err)
	}
	s := &session{p: p, rec: rec, dir: dir}
	t.Cleanup(func() {
		if _, err := p.Tree().Kill(2 * time.Second); err != nil {
			t.Errorf("killing the worker: %v", err)
		}
		select {
		case <-rec.Exit:
		case <-time.After(5 * time.Second):
			t.Error("the worker was not reported as exited")
		}
		if left := p.Tree().Members(true); len(left) > 0 {
			t.Errorf("processes left after kill: %v", left)
		}
		// The worker removes its files when SIGTERM lets it; under load
		// the SIGKILL after the grace can come first, so leftovers are
		// not checked here.
		if _, err := os.Stat(filepath.Join(dir, ".bash_history")); err == nil {
			t.Error("the session wrote a history file")
		}
	})
	return s
}

func (s *session) run(t testing.TB, code string) driver.Result {
	t.Helper()
	s.n++
	if err := s.p.Run(s.n, code); err != nil {
		t.Fatal(err)
	}
	return s.wait(t, 10*time.Second)
}

func (s *session) wait(t testing.TB, d time.Duration) driver.Result {
	t.Helper()
	select {
	case r := <-s.rec.Done:
		if r.Cell != s.n {
			t.Fatalf("got the result of cell %d, want cell %d", r.Cell, s.n)
		}
		return r
	case e := <-s.rec.Exit:
		t.Fatalf("the worker exited during cell %d: %+v; output %q", s.n, e, s.rec.TakeOutput())
	case <-time.After(d):
		t.Fatalf("cell %d did not finish; output %q", s.n, s.rec.TakeOutput())
	}
	return driver.Result{}
}

// waitSignalTaken polls until no live process of p's tree has signal sig
// pending (each has caught, ignored or died of it), failing after 10 s.
func waitSignalTaken(t testing.TB, p driver.Process, sig int) {
	t.Helper()
	bit := uint64(1) << (sig - 1)
	var pending []int
	for deadline := time.Now().Add(10 * time.Second); ; {
		pending = pending[:0]
		for _, m := range p.Tree().Members(false) {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", m.PID))
			if err != nil {
				continue // gone meanwhile
			}
			for _, line := range strings.Split(string(b), "\n") {
				k, v, _ := strings.Cut(line, ":")
				if k != "SigPnd" && k != "ShdPnd" {
					continue
				}
				if mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && mask&bit != 0 {
					pending = append(pending, m.PID)
					break
				}
			}
		}
		if len(pending) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("signal %d was never taken by processes %v of the worker's tree within 10 s", sig, pending)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// treeReport says, for each live process of p's tree, its command line,
// the system call it is in and its signal masks (pending, blocked,
// ignored, caught), for a test's failure message.
func treeReport(p driver.Process) string {
	var b strings.Builder
	for _, m := range p.Tree().Members(false) {
		dir := "/proc/" + strconv.Itoa(m.PID) + "/"
		cmd, _ := os.ReadFile(dir + "cmdline")
		call, _ := os.ReadFile(dir + "syscall")
		fmt.Fprintf(&b, "pid %d %q syscall %s", m.PID, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}), bytes.TrimSpace(call))
		status, _ := os.ReadFile(dir + "status")
		for _, line := range strings.Split(string(status), "\n") {
			if k, _, _ := strings.Cut(line, ":"); k == "State" || strings.HasPrefix(k, "Sig") || k == "ShdPnd" {
				b.WriteString("; " + strings.Join(strings.Fields(line), " "))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// isMember reports whether pid is a live process of p's tree.
func isMember(p driver.Process, pid int) bool {
	for _, m := range p.Tree().Members(false) {
		if m.PID == pid {
			return true
		}
	}
	return false
}

// ok runs a cell that must succeed and returns its output.
func (s *session) ok(t testing.TB, code string) string {
	t.Helper()
	r := s.run(t, code)
	out := s.rec.TakeOutput()
	if r.Status != "done" || r.Error != nil {
		t.Fatalf("cell %q: status %s, error %+v, output %q", code, r.Status, r.Error, out)
	}
	return out
}

func TestStart(t *testing.T) {
	s := start(t)
	out, err := exec.Command(testBash(t), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`version (\d+\.\d+\.\d+)`).FindSubmatch(out)
	if m == nil || s.p.Version() != string(m[1]) {
		t.Errorf("version = %q, want the one in %q", s.p.Version(), out)
	}
	if !filepath.IsAbs(s.p.Exe()) || filepath.Base(s.p.Exe()) != "bash" {
		t.Errorf("executable = %q, want an absolute path to bash", s.p.Exe())
	}
	// A clean top level: no arguments, $0 as at a prompt, nothing defined,
	// the worker's own functions and variables out of sight.
	r := s.run(t, `echo "$# ${0##*/} $PWD"; [[ $- == *i* ]] && echo interactive`)
	if want := "0 bash " + s.dir + "\ninteractive\n"; s.rec.TakeOutput() != want || r.Status != "done" {
		t.Errorf("first cell: %+v, want output %q", r, want)
	}
	if len(r.Names) != 0 {
		t.Errorf("names of a fresh session = %v, want none", r.Names)
	}
}

// The hello message's JSON survives an executable path with quotes,
// backslashes, control characters and Unicode in it.
func TestExecutableEscaped(t *testing.T) {
	exe := testBash(t)
	dir := t.TempDir()
	odd := filepath.Join(dir, "b\"a\\s\th\x01é")
	if err := os.Symlink(exe, odd); err != nil {
		t.Fatal(err)
	}
	rec := drivertest.NewRecorder()
	p, err := worker.Driver{R: Runtime}.Start(context.Background(), driver.Spec{
		Exe: odd, Cwd: dir, Env: testEnv(dir), Cookie: "POLYREPL_TEST_COOKIE=" + strconv.Itoa(os.Getpid()),
		RuntimeDir: dir, ValueLimit: 10000,
	}, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		p.Tree().Kill(2 * time.Second)
		<-rec.Exit
	}()
	if p.Exe() != odd {
		t.Errorf("executable = %q, want %q", p.Exe(), odd)
	}
}

// The session speaks UTF-8 in a locale that is not (one not installed is
// as good as C), unless LC_ALL forces one; the bytes of a cell, which the
// worker counts in any locale, round-trip whatever it is.
func TestLocales(t *testing.T) {
	exe := testBash(t)
	for _, c := range []struct {
		env  string
		want string // ${#s} of two CJK characters
	}{
		{"LANG=xx_NOWHERE.UTF-8", "2"},
		{"LC_ALL=C.UTF-8", "2"},
		{"LC_ALL=C", "6"},
	} {
		dir := t.TempDir()
		rec := drivertest.NewRecorder()
		p, err := worker.Driver{R: Runtime}.Start(context.Background(), driver.Spec{
			Exe: exe, Cwd: dir, Env: append(testEnv(dir), c.env), Cookie: "POLYREPL_TEST_COOKIE=" + strconv.Itoa(os.Getpid()),
			RuntimeDir: dir, ValueLimit: 10000,
		}, rec)
		if err != nil {
			t.Fatal(err)
		}
		s := &session{p: p, rec: rec, dir: dir}
		r := s.run(t, "s=日本; echo ${#s} $s; f() { :; }; a-b() { :; }; B=1; _x=1")
		if out := s.rec.TakeOutput(); out != c.want+" 日本\n" {
			t.Errorf("%s: %q, want %q", c.env, out, c.want+" 日本")
		}
		if want := []string{"B", "_x", "a-b", "f", "s"}; fmt.Sprint(r.Names) != fmt.Sprint(want) {
			t.Errorf("%s: names %q, want %q in byte order", c.env, r.Names, want)
		}
		if out := s.ok(t, "echo ✓"); out != "✓\n" {
			t.Errorf("%s: the next cell printed %q", c.env, out)
		}
		p.Tree().Kill(2 * time.Second)
		<-rec.Exit
	}
}

// A worker removes the files of workers that were killed outright, and
// only those.
func TestStaleFiles(t *testing.T) {
	dir := t.TempDir()
	var stale, live []string
	for _, ext := range []string{".stub", ".v", ".f"} {
		stale = append(stale, filepath.Join(dir, ".bash-2147483647"+ext))
		live = append(live, filepath.Join(dir, fmt.Sprintf(".bash-%d%s", os.Getpid(), ext)))
	}
	for _, f := range append(stale, live...) {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	startIn(t, dir)
	for _, f := range stale {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s is still there", f)
		}
	}
	for _, f := range live {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("the file of a live process was removed: %v", err)
		}
		os.Remove(f)
	}
}

// User definitions that shadow what the worker uses leave it working.
func TestWorkerNotClobbered(t *testing.T) {
	s := start(t)
	s.ok(t, `read() { builtin echo hijacked; }; printf() { :; }; eval() { :; }; declare() { :; }
trap() { :; }; shopt() { :; }; set() { :; }; mapfile() { :; }; rm() { :; }; local() { :; }; compgen() { :; }; unset() { :; }
alias eval=false builtin=false
status=x names=y cell=z code=w IFS=,`)
	r := s.run(t, "x=1; echo $x")
	if out := s.rec.TakeOutput(); r.Status != "done" || out != "1\n" {
		t.Fatalf("after shadowing: %+v, output %q", r, out)
	}
	want := []string{"cell", "code", "compgen", "declare", "eval", "local", "mapfile", "names", "printf", "read", "rm", "set", "shopt", "status", "trap", "unset", "x"}
	if fmt.Sprint(r.Names) != fmt.Sprint(want) {
		t.Errorf("names = %v, want %v", r.Names, want)
	}
}

func TestCells(t *testing.T) {
	s := start(t)
	// A multi-line definition, used by the next cell.
	s.ok(t, "greet() {\n  local who=$1\n  echo \"hello, $who\"\n}\ncount=3\n")
	if out := s.ok(t, "for ((i = 0; i < count; i++)); do\n  greet $i\ndone"); out != "hello, 0\nhello, 1\nhello, 2\n" {
		t.Errorf("multi-line cell output = %q", out)
	}
	// A cell over 4 KB.
	var b strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "v%d='välue ✓ %d'\n", i, i)
	}
	b.WriteString(`echo "${v0##* } ${v299##* } $v7"`)
	if b.Len() < 5000 {
		t.Fatalf("the long cell is only %d bytes", b.Len())
	}
	if out := s.ok(t, b.String()); out != "0 299 välue ✓ 7\n" {
		t.Errorf("long cell output = %q", out)
	}
	// Unicode in code and output, with no locale in the environment.
	uni := "héllo ✓ 日本 🎉"
	if out := s.ok(t, "s='"+uni+"'\necho \"$s\" ${#s}"); out != uni+" 12\n" {
		t.Errorf("unicode output = %q, want %q", out, uni+" 12\n")
	}
	if out := s.ok(t, `printf '%s' "$s" | od -An -tx1 | tr -d ' \n'; echo`); out != fmt.Sprintf("%x\n", uni) {
		t.Errorf("unicode bytes = %q, want %x", out, uni)
	}
	// Output without a trailing newline, stderr and a subprocess, in order.
	if out := s.ok(t, "echo out; echo err >&2; sh -c 'echo sub'; printf 'no newline'"); out != "out\nerr\nsub\nno newline" {
		t.Errorf("mixed output = %q", out)
	}
	// State persists: arrays, exports, aliases, cd.
	s.ok(t, "declare -A m=([k]=v); arr=(a b); export EXP=e; alias hi='echo hi'; cd /")
	if out := s.ok(t, `echo "${m[k]} ${arr[1]} $(sh -c 'echo $EXP') $PWD"; hi`); out != "v b e /\nhi\n" {
		t.Errorf("persisted state = %q", out)
	}
}

// A shell has no expression values: output is output, never a value.
func TestNoValue(t *testing.T) {
	s := start(t)
	r := s.run(t, "echo $((6*7))")
	if out := s.rec.TakeOutput(); out != "42\n" || r.Value != "" || r.ValueTotal != 0 || r.Status != "done" {
		t.Errorf("6*7: %+v, output %q; want output 42 and no value", r, out)
	}
	r = s.run(t, "printf 'x%.0s' {1..20000}")
	if out := s.rec.TakeOutput(); len(out) != 20000 || r.Value != "" || r.ValueCut != nil {
		t.Errorf("a long output gave %d bytes of output and value %q", len(out), r.Value)
	}
}

func TestErrors(t *testing.T) {
	s := start(t)
	s.ok(t, "kept=1")
	for _, c := range []struct {
		code, status, msg, out, note string
	}{
		{code: "false", status: "error", msg: "exit status 1"},
		{code: "ls /nonexistent-dir", status: "error", msg: "exit status 2", out: "ls: cannot access"},
		{code: "nosuchcommand", status: "error", msg: "exit status 127", out: "bash: nosuchcommand: command not found\n"},
		{code: "if then", status: "error", msg: "exit status 2", out: "bash: eval: line 1: syntax error near unexpected token `then'"},
		{code: "echo ${undefined:?oops}; echo not here", status: "error", msg: "exit status 1", out: "bash: undefined: oops\n"},
		{code: "set -u; echo $undefined; echo not here", status: "error", msg: "exit status 1", out: "bash: undefined: unbound variable\n"},
		{code: "set +u; false; echo fine", status: "done", out: "fine\n"},
		{code: "echo bye; exit 3; echo not here", status: "error", msg: "exit status 3", out: "bye\n", note: "exit 3 was caught"},
		{code: "f() { exit; }; f; echo not here", status: "done", note: "exit was caught"},
		{code: "(exit 4); echo \"sub $?\"", status: "done", out: "sub 4\n"},
		{code: "exit 08", status: "error", msg: "exit status 8", note: "exit 8 was caught"},
		{code: "exit -1", status: "error", msg: "exit status 255", note: "exit 255 was caught"},
		{code: "exit abc", status: "error", msg: "exit status 2", out: "bash: exit: abc: numeric argument required\n", note: "exit 2 was caught"},
		{code: "g() { false; echo not here; }; set -e; g", status: "error", msg: "exit status 1", note: "set -e stopped the cell"},
		{code: "[[ $- == *e* ]] && echo still-e; set +e", status: "done", out: "still-e\n"},
		{code: "exec /nonexistent/program", status: "error", msg: "exit status 127", out: "No such file or directory"},
	} {
		r := s.run(t, c.code)
		out := s.rec.TakeOutput()
		if r.Status != c.status {
			t.Errorf("%q: status %s, want %s (error %+v, output %q)", c.code, r.Status, c.status, r.Error, out)
			continue
		}
		if c.msg != "" && (r.Error == nil || r.Error.Type != "ExitStatus" || r.Error.Message != c.msg || r.Error.Traceback != "") {
			t.Errorf("%q: error %+v, want ExitStatus %q and no traceback", c.code, r.Error, c.msg)
		}
		if c.msg == "" && r.Error != nil {
			t.Errorf("%q: error %+v, want none", c.code, r.Error)
		}
		if !strings.Contains(out, c.out) || strings.Contains(out, "not here") {
			t.Errorf("%q: output %q, want it to contain %q", c.code, out, c.out)
		}
		if !strings.Contains(r.Note, c.note) || c.note == "" && r.Note != "" {
			t.Errorf("%q: note %q, want %q", c.code, r.Note, c.note)
		}
	}
	if out := s.ok(t, "echo $kept"); out != "1\n" {
		t.Errorf("after the errors: %q", out)
	}
}

// break and continue at a cell's top level would leave the worker's loop.
func TestBreakContinue(t *testing.T) {
	s := start(t)
	for _, code := range []string{"echo a; break; echo not here", "echo a; continue", "echo a; break 99", "for i in 1; do break 5; done; echo not here", "echo a; continue 3"} {
		r := s.run(t, code)
		if out := s.rec.TakeOutput(); r.Status != "done" || strings.Contains(out, "not here") || !strings.Contains(r.Note, "break or continue") {
			t.Errorf("%q: %+v, output %q", code, r, out)
		}
		if out := s.ok(t, "echo alive"); out != "alive\n" {
			t.Fatalf("after %q: %q", code, out)
		}
	}
}

// TestInterruptShortCommandLoop interrupts a loop of short external
// commands, where bash drops a SIGINT that lands while it waits for a
// command that then exits normally (about one in ten under load): the
// session's escalation (SIGINT, SIGINT, the wake signal, 250 ms apart)
// must end the cell every time, and the next cell must run whole.
func TestInterruptShortCommandLoop(t *testing.T) {
	s := start(t)
	s.ok(t, "kept=1; sleep 30 & bg=$!")
	for i := 0; i < 20; i++ {
		s.n++
		if err := s.p.Run(s.n, "spin() { while :; do sleep 0.01; done; }; echo spinning-mark; spin"); err != nil {
			t.Fatal(err)
		}
		drivertest.WaitOutput(t, s.rec, "spinning-mark\n", fmt.Sprintf("run %d: the loop never started", i))
		// Deliberately later each run, so that the interrupts land at
		// different points of the loop's short commands.
		time.Sleep(time.Duration(i*13) * time.Millisecond)
		var r driver.Result
		stopped := false
		for attempt := 0; attempt < 3 && !stopped; attempt++ {
			if err := s.p.Interrupt(attempt); err != nil {
				t.Fatal(err)
			}
			select {
			case r = <-s.rec.Done:
				stopped = true
			case <-time.After(250 * time.Millisecond):
			}
		}
		if !stopped {
			select {
			case r = <-s.rec.Done:
			case <-time.After(5 * time.Second):
				// What each process was doing, and its signals, say
				// whether an interrupt was lost or its trap ran and
				// the unwinding did not take.
				t.Fatalf("run %d: the loop did not stop after three interrupts; output %q\n%s", i, s.rec.TakeOutput(), treeReport(s.p))
			}
		}
		if r.Status != "interrupted" || !contains(r.Names, "kept") {
			t.Fatalf("run %d: %+v", i, r)
		}
		s.rec.TakeOutput()
		// A signal left pending would cut this wait short.
		s.ok(t, "sleep 0.05 & wait $!")
	}
}

func TestInterrupt(t *testing.T) {
	s := start(t)
	s.ok(t, "kept=1; sleep 300 & bg=$!")
	for _, code := range []string{
		"while :; do :; done",
		"sleep 100",
		"spin() { while :; do sleep 0.01; done; }; spin",
		"for ((;;)); do x=$(echo y); done",
		"sleep 100 | cat",
		"wait",
	} {
		s.n++
		if err := s.p.Run(s.n, "echo started-mark; "+code); err != nil {
			t.Fatal(err)
		}
		drivertest.WaitOutput(t, s.rec, "started-mark\n", fmt.Sprintf("%q never started", code))
		var r driver.Result
		for attempt := 0; ; attempt++ {
			if attempt == 5 {
				t.Fatalf("%q did not stop after %d interrupts", code, attempt)
			}
			if err := s.p.Interrupt(attempt); err != nil {
				t.Fatal(err)
			}
			select {
			case r = <-s.rec.Done:
			case <-time.After(time.Second):
				continue
			}
			break
		}
		out := s.rec.TakeOutput()
		if r.Status != "interrupted" || strings.Contains(out, "not here") {
			t.Errorf("%q: %+v, output %q", code, r, out)
		}
		if !contains(r.Names, "kept") {
			t.Errorf("%q: names after the interrupt = %v", code, r.Names)
		}
	}
	// The background job ran on, and SIGINT between cells is ignored.
	bg, err := strconv.Atoi(strings.TrimSpace(s.ok(t, "echo $bg")))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.p.Tree().SignalGroup(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitSignalTaken(t, s.p, 2)
	if !isMember(s.p, bg) {
		t.Errorf("the background job %d died of SIGINT between cells", bg)
	}
	if out := s.ok(t, `kill -0 $bg && echo "bg alive $kept"`); out != "bg alive 1\n" {
		t.Errorf("after SIGINT between cells: %q", out)
	}
	// Nothing of the unwinding is left after an interrupt.
	s.n++
	s.p.Run(s.n, "echo looping-mark; while :; do :; done")
	drivertest.WaitOutput(t, s.rec, "looping-mark\n", "the second loop never started")
	s.p.Interrupt(0)
	if r := s.wait(t, 5*time.Second); r.Status != "interrupted" {
		t.Errorf("second loop: %+v", r)
	}
	s.rec.TakeOutput()
	if out := s.ok(t, "trap -p DEBUG; shopt -q extdebug && echo extdebug; echo \"$-\""); out != "hiBE\n" {
		t.Errorf("after the interrupt: %q", out)
	}
}

func TestNames(t *testing.T) {
	s := start(t)
	r := s.run(t, "b=1; B=2; _u=3; a(){ :; }; z(){ :; }; my-func(){ :; }; b(){ :; }; declare -A m; m[x]=1; export E=1; [[ a =~ a ]]; cd /; PATH=$PATH")
	want := []string{"B", "E", "_u", "a", "b", "m", "my-func", "z"}
	if fmt.Sprint(r.Names) != fmt.Sprint(want) {
		t.Errorf("names = %q, want %q", r.Names, want)
	}
	s.rec.TakeOutput()
	r = s.run(t, "unset b B; unset -f b; for i in {1..600}; do printf -v v$i %s $i; done")
	if len(r.Names) != 500 || !sort.StringsAreSorted(r.Names) || contains(r.Names, "b") || r.Names[0] != "E" {
		t.Errorf("names of 600 variables: %d of them, sorted %v, first %q", len(r.Names), sort.StringsAreSorted(r.Names), r.Names[0])
	}
}

// All output a cell writes arrives before the cell is reported done, and
// nothing of the end marker leaks into it.
func TestOutputBeforeDone(t *testing.T) {
	s := start(t)
	r := s.run(t, "echo builtin; sh -c 'echo sub >&2'; printf tail")
	if got := s.rec.TakeOutput(); got != "builtin\nsub\ntail" || r.Status != "done" {
		t.Errorf("output = %q, result %+v", got, r)
	}
	last := s.rec.LastEvent()
	if last != "done" {
		t.Errorf("last event = %s, want done", last)
	}
	r = s.run(t, "for ((i = 0; i < 20000; i++)); do printf '%d,' $i; done")
	want := new(strings.Builder)
	for i := 0; i < 20000; i++ {
		want.WriteString(strconv.Itoa(i) + ",")
	}
	if got := s.rec.TakeOutput(); got != want.String() {
		t.Errorf("long output differs: got %d bytes, want %d", len(got), want.Len())
	}
	// A cell that sends its stdout elsewhere for good still ends, and the
	// next cell's output is seen again (plumbing_test.go).
	s.ok(t, "exec >/dev/null; echo gone")
	if out := s.ok(t, "echo back; echo here >&2"); out != "back\nhere\n" {
		t.Errorf("after exec >/dev/null: %q", out)
	}
}

// The worker's pipes are kept from what a cell runs; fds 3-9 are free.
func TestFDs(t *testing.T) {
	s := start(t)
	pid := s.p.PID()
	out := s.ok(t, "sleep 30 & echo $!; exec 3>fd3.txt; echo three >&3; exec 3>&-; cat fd3.txt")
	child, rest, _ := strings.Cut(out, "\n")
	if rest != "three\n" {
		t.Errorf("user fd 3: %q", rest)
	}
	proto := map[string]bool{}
	for _, fd := range []string{"60", "61"} {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd))
		if err != nil {
			t.Fatal(err)
		}
		proto[l] = true
	}
	// Until the forked shell has become sleep, it holds what the shell
	// holds; what sleep was given is what counts.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile("/proc/" + child + "/cmdline"); strings.HasPrefix(string(b), "sleep\x00") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cell's child %s never became sleep", child)
		}
	}
	ents, err := os.ReadDir("/proc/" + child + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		l, _ := os.Readlink("/proc/" + child + "/fd/" + e.Name())
		if proto[l] {
			t.Errorf("the cell's child has the worker's %s open as fd %s", l, e.Name())
		}
	}
}

// A NUL byte cannot be in a shell string; the cell is refused and the
// framing of the next cell is intact.
func TestNul(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the worker's read timeout")
	}
	s := start(t)
	r := s.run(t, "echo a\x00b")
	if r.Status != "error" || r.Error == nil || r.Error.Type != "NulInCode" {
		t.Errorf("cell with NUL: %+v", r)
	}
	if out := s.ok(t, "echo next"); out != "next\n" {
		t.Errorf("after the NUL cell: %q", out)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// BenchmarkCell measures one trivial cell through the worker protocol:
// the pipe round trip, framing, names and marker scan, without the daemon.
func BenchmarkCell(b *testing.B) {
	s := start(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.run(b, ":")
	}
}
