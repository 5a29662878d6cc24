package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPythonInput: a Python cell that reads input returns at once with
// status input and its prompt; the answer, end of file and an interrupt
// end the wait; exec is refused meanwhile; sys.stdin.readline asks too;
// getpass's answer is in no file; pdb steps through a function.
func TestPythonInput(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "in", "x = 41")

	r := e.runJSON("exec", "in", "print('hello')\nname = input('name? ')\nprint('hi', name)\nlen(name)")
	if r.Status != "input" || r.code != 3 || r.raw["prompt"] == nil || r.Output != "hello\n" {
		t.Fatalf("input(): %s; want status input, exit 3, a prompt, what it printed before", clip(r.String()))
	}
	if _, errOut, code := e.run("exec", "in", "x"); code != 2 || !strings.Contains(errOut, `waits for input (it asked "name? ")`) {
		t.Errorf("exec while waiting: exit %d, %q", code, errOut)
	}
	r = e.runJSON("input", "in", "Bob")
	if r.Status != "done" || r.Value != "3" || !strings.Contains(r.Output, "name? Bob\nhi Bob\n") {
		t.Errorf("the answer: %s", clip(r.String()))
	}

	// sys.stdin.readline asks as well; end of file gives it "".
	if r := e.runJSON("exec", "in", "import sys\nsys.stdin.readline()"); r.Status != "input" {
		t.Fatalf("sys.stdin.readline(): %s", clip(r.String()))
	}
	if r := e.runJSON("input", "in", "--eof"); r.Status != "done" || r.Value != "''" {
		t.Errorf("end of file to readline: %s", clip(r.String()))
	}
	if r := e.runJSON("exec", "in", "input()"); r.Status != "input" {
		t.Fatalf("input() again: %s", clip(r.String()))
	}
	if r := e.runJSON("input", "in", "--eof"); r.Status != "error" || r.Error == nil || r.Error.Type != "EOFError" {
		t.Errorf("end of file to input(): %s", clip(r.String()))
	}

	// A question outlives the daemon: the next one finds it, and the
	// answer reaches the cell.
	if r := e.runJSON("exec", "in", "input('still? ')"); r.Status != "input" {
		t.Fatalf("input('still? '): %s", clip(r.String()))
	}
	e.killDaemon()
	if r := e.runJSON("wait", "in"); r.Status != "input" || !strings.Contains(r.String(), `"still? "`) {
		t.Errorf("wait after the daemon's death: %s; want the question", clip(r.String()))
	}
	if r := e.runJSON("input", "in", "yes"); r.Status != "done" || r.Value != "'yes'" {
		t.Errorf("the answer through the next daemon: %s", clip(r.String()))
	}

	// An interrupt ends the wait; the session goes on.
	if r := e.runJSON("exec", "in", "input('z? ')"); r.Status != "input" {
		t.Fatalf("input('z? '): %s", clip(r.String()))
	}
	out, errOut := e.must(0, "interrupt", "in")
	wantContains(t, "an interrupt during input", out+errOut, "KeyboardInterrupt")
	if r := e.runJSON("exec", "in", "x + 1"); r.Value != "42" {
		t.Errorf("after the interrupt: %s", clip(r.String()))
	}
	if out, _, code := e.run("input", "in", "late", "--json"); code != 2 || !strings.Contains(out, `"code":"no-input"`) {
		t.Errorf("an answer nobody asked for: exit %d, %s", code, out)
	}

	// getpass: shown and kept as [hidden].
	const secret = "hunter2-0f-the-worker"
	if r := e.runJSON("exec", "in", "import getpass\npw = getpass.getpass()\nlen(pw)"); r.Status != "input" || !strings.Contains(r.String(), `"password":true`) {
		t.Fatalf("getpass: %s", clip(r.String()))
	}
	r = e.runJSON("input", "in", secret)
	if r.Value != "21" || !strings.Contains(r.Output, "[hidden]") || strings.Contains(r.String(), secret) {
		t.Errorf("getpass's answer: %s", clip(r.String()))
	}
	e.must(0, "history", "in")
	wantNowhere(t, e, secret)

	// pdb through a three-line function: n, p, c.
	r = e.runJSON("exec", "in", "def f(a):\n    b = a * 2\n    breakpoint()\n    c = b + 1\n    return c\n\nf(20)")
	if r.Status != "input" || !strings.Contains(r.String(), `(Pdb) `) {
		t.Fatalf("breakpoint(): %s", clip(r.String()))
	}
	for _, step := range []struct{ cmd, want string }{{"p b", "40"}, {"n", "return c"}, {"p c", "41"}} {
		r = e.runJSON("input", "in", step.cmd)
		if r.Status != "input" || !strings.Contains(r.Output, step.want) {
			t.Errorf("pdb %q: %s; want %q and the next prompt", step.cmd, clip(r.String()), step.want)
		}
	}
	if r = e.runJSON("input", "in", "c"); r.Status != "done" || r.Value != "41" {
		t.Errorf("pdb continue: %s; want the value 41", clip(r.String()))
	}
	// pdb left its Ctrl-C handler: the next cell is interrupted as any.
	if r := e.runJSON("exec", "in", "input('again? ')"); r.Status != "input" {
		t.Fatalf("input after pdb: %s", clip(r.String()))
	}
	out, errOut = e.must(0, "interrupt", "in")
	wantContains(t, "an interrupt after pdb", out+errOut, "KeyboardInterrupt")
	wantLacks(t, "an interrupt after pdb", out+errOut, "pdb.py", "reentrant")
}

// TestRubyInput: a Ruby cell's gets and $stdin reads ask as Python's do.
func TestRubyInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "ruby", "ruby")
	e.must(0, "exec", "rb", "--runtime", "ruby", "x = 41")
	r := e.runJSON("exec", "rb", `print "name? "; name = gets; "hi #{name.chomp}"`)
	if r.Status != "input" || r.code != 3 || r.Output != "name? " {
		t.Fatalf("gets: %s; want status input and what it printed", clip(r.String()))
	}
	if r := e.runJSON("input", "rb", "Bob"); r.Status != "done" || r.Value != `"hi Bob"` || r.Output != "Bob\n" {
		t.Errorf("the answer: %s", clip(r.String()))
	}
	if r := e.runJSON("exec", "rb", "$stdin.readline"); r.Status != "input" {
		t.Fatalf("$stdin.readline: %s", clip(r.String()))
	}
	if r := e.runJSON("input", "rb", "--eof"); r.Status != "error" || r.Error == nil || !strings.Contains(r.Error.Type+r.Error.Message, "EOFError") {
		t.Errorf("end of file to readline: %s", clip(r.String()))
	}
	if r := e.runJSON("exec", "rb", "gets"); r.Status != "input" {
		t.Fatalf("gets again: %s", clip(r.String()))
	}
	out, errOut := e.must(0, "interrupt", "rb")
	wantContains(t, "an interrupt during gets", out+errOut, "Interrupt")
	if r := e.runJSON("exec", "rb", "x + 1"); r.Value != "42" {
		t.Errorf("after the interrupt: %s", clip(r.String()))
	}
}

// TestRInput: R's readline(), menu() and browser() ask — R runs
// interactive, and polyrepl sees it block on its console — and a
// subprocess reading the console asks too; debug() steps through a
// three-line function; Q leaves the browser and the session goes on.
func TestRInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "r", "r-base-core")
	e.must(0, "exec", "rs", "--runtime", "r", "x <- 41")
	r := e.runJSON("exec", "rs", `cat("hello\n"); name <- readline("name? "); nchar(name)`)
	if r.Status != "input" || r.code != 3 || r.Output != "hello\nname? " || !strings.Contains(r.String(), `"text":"name? "`) {
		t.Fatalf("readline(): %s; want status input, what it printed, the prompt", clip(r.String()))
	}
	if _, errOut, code := e.run("exec", "rs", "x"); code != 2 || !strings.Contains(errOut, `waits for input (it asked "name? ")`) {
		t.Errorf("exec while waiting: exit %d, %q", code, errOut)
	}
	if _, errOut, code := e.run("input", "rs", "--eof"); code != 2 || !strings.Contains(errOut, "end of file would end") {
		t.Errorf("end of file to R's console: exit %d, %q; want it refused", code, errOut)
	}
	if r := e.runJSON("input", "rs", "Bob"); r.Status != "done" || r.Value != "[1] 3" || !strings.Contains(r.Output, "Bob\n") {
		t.Errorf("the answer: %s", clip(r.String()))
	}
	if r := e.runJSON("exec", "rs", `menu(c("apple", "pear"))`); r.Status != "input" || !strings.Contains(r.Output, "2: pear") {
		t.Fatalf("menu(): %s", clip(r.String()))
	}
	if r := e.runJSON("input", "rs", "2"); r.Status != "done" || r.Value != "[1] 2" {
		t.Errorf("menu's answer: %s", clip(r.String()))
	}

	// browser() in a three-line function: print, step, continue.
	r = e.runJSON("exec", "rs", "f <- function(a) {\n  b <- a * 2\n  browser()\n  c <- b + 1\n  c\n}\nf(20)")
	if r.Status != "input" || !strings.HasSuffix(r.Output, "Browse[1]> ") || !strings.Contains(r.String(), `"text":"Browse[1]\u003e "`) {
		t.Fatalf("browser(): %s", clip(r.String()))
	}
	for _, step := range []struct{ cmd, want string }{{"b", "[1] 40"}, {"n", "c <- b + 1"}, {"n", "debug at"}, {"c", ""}} {
		r = e.runJSON("input", "rs", step.cmd)
		if step.cmd == "c" {
			if r.Status != "done" || r.Value != "[1] 41" {
				t.Errorf("browser c: %s; want the value 41", clip(r.String()))
			}
			break
		}
		if r.Status != "input" || !strings.Contains(r.Output, step.want) {
			t.Errorf("browser %q: %s; want %q and the next prompt", step.cmd, clip(r.String()), step.want)
		}
	}
	// debug(): Q leaves the browser and ends the cell; the session goes on.
	if r := e.runJSON("exec", "rs", "debugonce(f); f(1)"); r.Status != "input" || !strings.Contains(r.Output, "debugging in: f(1)") {
		t.Fatalf("debugonce(): %s", clip(r.String()))
	}
	if r := e.runJSON("input", "rs", "Q"); r.Status != "error" || !strings.Contains(r.String(), "Q in the browser") {
		t.Errorf("Q: %s; want the cell ended", clip(r.String()))
	}
	if r := e.runJSON("exec", "rs", "x + 1"); r.Value != "[1] 42" {
		t.Errorf("after Q: %s", clip(r.String()))
	}

	// A subprocess reading the console asks; end of file ends its read.
	if r := e.runJSON("exec", "rs", `system("cat; echo cat-ended")`); r.Status != "input" {
		t.Fatalf("system(\"cat\"): %s", clip(r.String()))
	}
	if r := e.runJSON("input", "rs", "meow"); r.Status != "input" || r.Output != "meow\nmeow\n" {
		t.Errorf("a line to cat: %s; want it echoed, then cat asking again", clip(r.String()))
	}
	if r := e.runJSON("input", "rs", "--eof"); r.Status != "done" || !strings.Contains(r.Output, "cat-ended") {
		t.Errorf("end of file to cat: %s", clip(r.String()))
	}

	// An interrupt ends the wait.
	if r := e.runJSON("exec", "rs", `readline("z? ")`); r.Status != "input" {
		t.Fatalf("readline again: %s", clip(r.String()))
	}
	e.must(0, "interrupt", "rs")
	if r := e.runJSON("exec", "rs", "x + 2"); r.Value != "[1] 43" {
		t.Errorf("after the interrupt: %s", clip(r.String()))
	}
}

// TestShellAndNodeInput: bash's read, a command reading standard input
// (in bash, and under Python's subprocess), and Node's readline ask —
// the kernel shows the read on the session's console pipe — and end of
// file ends such a read.
func TestShellAndNodeInput(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "sh", "--runtime", "bash", "x=41")
	r := e.runJSON("exec", "sh", `echo start; read -r name; echo "hi $name"`)
	if r.Status != "input" || r.code != 3 || r.Output != "start\n" {
		t.Fatalf("read: %s; want status input and what it printed", clip(r.String()))
	}
	if _, errOut, code := e.run("exec", "sh", "echo $x"); code != 2 || !strings.Contains(errOut, "waits for input (on its standard input)") {
		t.Errorf("exec while waiting: exit %d, %q", code, errOut)
	}
	if r := e.runJSON("input", "sh", "Bob Smith"); r.Status != "done" || r.Output != "Bob Smith\nhi Bob Smith\n" {
		t.Errorf("the answer: %s", clip(r.String()))
	}
	// bash cannot say read -s asks a secret: the one answering says so.
	const secret = "s3cret-0f-the-shell"
	if r := e.runJSON("exec", "sh", `read -rs pw; echo "${#pw} chars"`); r.Status != "input" {
		t.Fatalf("read -s: %s", clip(r.String()))
	}
	if r := e.runJSON("input", "sh", "--secret", secret); r.Output != "[hidden]\n19 chars\n" || strings.Contains(r.String(), secret) {
		t.Errorf("a secret answer: %s; want [hidden] in its place", clip(r.String()))
	}
	e.must(0, "history", "sh")
	wantNowhere(t, e, secret)
	if r := e.runJSON("exec", "sh", `while read -r l; do echo "got $l"; done; echo loop-ended`); r.Status != "input" {
		t.Fatalf("a read loop: %s", clip(r.String()))
	}
	if r := e.runJSON("input", "sh", "a"); r.Status != "input" || !strings.Contains(r.Output, "got a") {
		t.Errorf("a line to the loop: %s", clip(r.String()))
	}
	if r := e.runJSON("input", "sh", "--eof"); r.Status != "done" || !strings.Contains(r.Output, "loop-ended") {
		t.Errorf("end of file to the loop: %s", clip(r.String()))
	}
	if r := e.runJSON("exec", "sh", "wc -l"); r.Status != "input" {
		t.Fatalf("wc -l: %s", clip(r.String()))
	}
	e.must(3, "input", "sh", "one")
	if r := e.runJSON("input", "sh", "--eof"); r.Status != "done" || strings.TrimSpace(r.Output) != "1" {
		t.Errorf("wc -l after a line and end of file: %s", clip(r.String()))
	}
	// A pipe is not the console: nothing asks.
	if r := e.runJSON("exec", "sh", "echo hi | { read -r v; echo \"[$v]\"; }"); r.Status != "done" || r.Output != "[hi]\n" {
		t.Errorf("read from a pipe: %s", clip(r.String()))
	}
	if r := e.runJSON("exec", "sh", "read -r z"); r.Status != "input" {
		t.Fatalf("read again: %s", clip(r.String()))
	}
	e.must(0, "interrupt", "sh")
	if r := e.runJSON("exec", "sh", "echo $((x + 1))"); r.Output != "42\n" {
		t.Errorf("after the interrupt: %s", clip(r.String()))
	}

	// Python: its own input() asks through the worker; a subprocess's read
	// of standard input through the console.
	if r := e.runJSON("exec", "py", "import subprocess\nsubprocess.run(['cat'], capture_output=True, text=True).stdout"); r.Status != "input" {
		t.Fatalf("subprocess cat: %s", clip(r.String()))
	}
	e.must(3, "input", "py", "meow")
	if r := e.runJSON("input", "py", "--eof"); r.Status != "done" || r.Value != `'meow\n'` {
		t.Errorf("cat's answer: %s", clip(r.String()))
	}

	if found, why := runtimeFound(e, "node"); !found {
		t.Logf("no node here (Debian: nodejs): %s; its readline is not tested", why)
		return
	}
	code := `const readline = require("readline");
const rl = readline.createInterface({input: process.stdin, output: process.stdout});
const name = await new Promise(r => rl.question("name? ", r));
name.length`
	if r := e.runJSON("exec", "js", "--runtime", "node", code); r.Status != "input" || !strings.Contains(r.String(), `"text":"name? "`) {
		t.Fatalf("readline: %s", clip(r.String()))
	}
	if r := e.runJSON("input", "js", "Bob"); r.Status != "done" || r.Value != "3" {
		t.Errorf("readline's answer: %s", clip(r.String()))
	}
	if r := e.runJSON("exec", "js", `await new Promise(r => rl.question("again? ", r))`); r.Status != "input" {
		t.Fatalf("readline again: %s", clip(r.String()))
	}
	e.must(0, "interrupt", "js")
	if r := e.runJSON("exec", "js", "1 + 1"); r.Value != "2" {
		t.Errorf("after the interrupt: %s", clip(r.String()))
	}
}

// TestOctaveInput: a terminal runtime whose prompt says when it waits
// for a command runs each cell alone, so input(), keyboard and a
// subprocess reading standard input ask, and polyrepl's own lines are
// never read by the cell.
func TestOctaveInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "octave", "octave")
	e.must(0, "exec", "oc", "--runtime", "octave", "x = 41;")
	r := e.runJSON("exec", "oc", `disp("hello"); y = input("y? ")`)
	if r.Status != "input" || r.code != 3 || r.Output != "hello\ny? " || !strings.Contains(r.String(), `"text":"y? "`) {
		t.Fatalf("input(): %s; want status input, what it printed, the prompt", clip(r.String()))
	}
	if _, errOut, code := e.run("input", "oc", "--eof"); code != 2 || !strings.Contains(errOut, "end of file would end") {
		t.Errorf("end of file to Octave: exit %d, %q; want it refused", code, errOut)
	}
	if r := e.runJSON("input", "oc", "x + 1"); r.Status != "done" || !strings.Contains(r.Output, "y = 42") {
		t.Errorf("the answer: %s", clip(r.String()))
	}
	// keyboard, Octave's debugger: look, then go on.
	r = e.runJSON("exec", "oc", "function r = f(a)\n  b = a * 2;\n  keyboard;\n  r = b + 1;\nend\nf(20)")
	if r.Status != "input" || !strings.Contains(r.String(), `"text":"keyboard\u003e "`) {
		t.Fatalf("keyboard: %s", clip(r.String()))
	}
	if r := e.runJSON("input", "oc", "b"); r.Status != "input" || !strings.Contains(r.Output, "b = 40") {
		t.Errorf("keyboard b: %s", clip(r.String()))
	}
	if r := e.runJSON("input", "oc", "dbcont"); r.Status != "done" || !strings.Contains(r.Output, "ans = 41") {
		t.Errorf("dbcont: %s", clip(r.String()))
	}
	// A subprocess reading standard input asks; an interrupt ends it.
	if r := e.runJSON("exec", "oc", `system("cat")`); r.Status != "input" {
		t.Fatalf("system(cat): %s", clip(r.String()))
	}
	if r := e.runJSON("input", "oc", "meow"); r.Status != "input" || !strings.Contains(r.Output, "meow") {
		t.Errorf("a line to cat: %s", clip(r.String()))
	}
	e.must(0, "interrupt", "oc")
	// An interrupt ends input() too, assigning nothing.
	if r := e.runJSON("exec", "oc", `z = input("z? ")`); r.Status != "input" {
		t.Fatalf("input again: %s", clip(r.String()))
	}
	e.must(0, "interrupt", "oc")
	if r := e.runJSON("exec", "oc", `disp(x + 2); disp(exist("z"))`); r.Output != "43\n0\n" {
		t.Errorf("after the interrupts: %s", clip(r.String()))
	}
}

// TestGnuplotInput: gnuplot prints no prompt on a pipe, yet a cell runs
// alone (its file is open while it runs): pause -1 and a subprocess
// reading standard input ask; an error or an interrupt ends the cell as
// at once as a cell that ran to its end.
func TestGnuplotInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "gnuplot", "gnuplot-nox")
	e.must(0, "exec", "gp", "--runtime", "gnuplot", "x = 41")
	r := e.runJSON("exec", "gp", `print "hello"; pause -1 "y? "`)
	if r.Status != "input" || r.code != 3 || r.Output != "hello\ny? " || !strings.Contains(r.String(), `"text":"y? "`) {
		t.Fatalf("pause -1: %s; want status input, what it printed, the prompt", clip(r.String()))
	}
	if _, errOut, code := e.run("input", "gp", "--eof"); code != 2 || !strings.Contains(errOut, "end of file would end") {
		t.Errorf("end of file to gnuplot: exit %d, %q; want it refused", code, errOut)
	}
	if r := e.runJSON("input", "gp", ""); r.Status != "done" {
		t.Errorf("the answer: %s", clip(r.String()))
	}
	// A subprocess reading standard input asks; an interrupt ends it.
	if r := e.runJSON("exec", "gp", `system("cat")`); r.Status != "input" {
		t.Fatalf("system(cat): %s", clip(r.String()))
	}
	if r := e.runJSON("input", "gp", "meow"); r.Status != "input" || !strings.Contains(r.Output, "meow") {
		t.Errorf("a line to cat: %s", clip(r.String()))
	}
	if r := e.runJSON("interrupt", "gp"); r.Status != "interrupted" {
		t.Errorf("interrupting cat: %s", clip(r.String()))
	}
	// gnuplot's own read, interrupted; a cell cut short by an error.
	if r := e.runJSON("exec", "gp", "pause -1"); r.Status != "input" {
		t.Fatalf("pause -1 again: %s", clip(r.String()))
	}
	if r := e.runJSON("interrupt", "gp"); r.Status != "interrupted" {
		t.Errorf("interrupting pause -1: %s", clip(r.String()))
	}
	if r := e.runJSON("exec", "gp", "print 1\nfoo bar\nprint 2"); r.Status != "error" || strings.Contains(r.Output, "2\n") {
		t.Errorf("an error: %s; want status error, the cell stopped there", clip(r.String()))
	}
	if r := e.runJSON("exec", "gp", "print x + 2"); r.Output != "43\n" {
		t.Errorf("after: %s", clip(r.String()))
	}
}

// TestREPLInput: GHCi's getLine, Clojure's read-line and sh's read (on a
// terminal), in REPLs whose prompt polyrepl reads, and Java's System.in,
// read on one of the JVM's threads, ask; an interrupt ends the read.
func TestREPLInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct {
		runtime, set, read, use, want, again, after, afterWant string
	}{
		{"ghci", "x = 41", "y <- getLine", "length y + x", "46", "getLine", "x + 2", "43"},
		{"clojure", "(def x 41)", "(def y (read-line))", "(+ (count y) x)", "46", "(read-line)", "(+ x 2)", "43"},
		{"sh", "x=41", "read y", "echo $((${#y} + x))", "46", "read z", "echo $((x + 2))", "43"},
		{"java", "int x = 41;", "String y = new Scanner(System.in).nextLine();", "y.length() + x", "46", "new Scanner(System.in).nextLine()", "x + 2", "43"},
	} {
		t.Run(c.runtime, func(t *testing.T) {
			if found, why := runtimeFound(e, c.runtime); !found {
				t.Skipf("no %s here: %s", c.runtime, why)
			}
			name := "in-" + c.runtime
			e.must(0, "exec", name, "--runtime", c.runtime, c.set)
			if r := e.runJSON("exec", name, c.read); r.Status != "input" || r.code != 3 {
				t.Fatalf("a read: %s; want status input", clip(r.String()))
			}
			if _, errOut, code := e.run("exec", name, c.use); code != 2 || !strings.Contains(errOut, "waits for input") {
				t.Errorf("exec while waiting: exit %d, %q", code, errOut)
			}
			e.must(0, "input", name, "hello")
			if r := e.runJSON("exec", name, c.use); !strings.Contains(r.Output+r.Value, c.want) {
				t.Errorf("the answer's use: %s; want %s", clip(r.String()), c.want)
			}
			if r := e.runJSON("exec", name, c.again); r.Status != "input" {
				t.Fatalf("a read again: %s", clip(r.String()))
			}
			e.must(0, "interrupt", name)
			if r := e.runJSON("exec", name, c.after); !strings.Contains(r.Output+r.Value, c.afterWant) {
				t.Errorf("after the interrupt: %s; want %s", clip(r.String()), c.afterWant)
			}
			if c.runtime != "sh" {
				return
			}
			// On a terminal, end of file is its Ctrl-D.
			if r := e.runJSON("exec", name, "wc -l"); r.Status != "input" {
				t.Fatalf("wc -l: %s", clip(r.String()))
			}
			e.must(3, "input", name, "one")
			if r := e.runJSON("input", name, "--eof"); r.Status != "done" || strings.TrimSpace(r.Output) != "1" {
				t.Errorf("end of file to wc -l: %s", clip(r.String()))
			}
		})
	}
}

// TestMCPInput: through the MCP server, exec returns status input with
// the prompt, the input tool answers, and the final reply carries the
// value.
func TestMCPInput(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	s := e.startMCP()
	defer s.close()
	r, text := s.cell("exec", map[string]any{"session": "mi", "code": "a = input('first? ')\nb = input('second? ')\na + b"})
	if r.Status != "input" || !strings.Contains(text, `"first? "`) || !strings.Contains(text, "input tool") {
		t.Fatalf("exec: %s\n%s", clip(r.String()), text)
	}
	r, text = s.cell("input", map[string]any{"session": "mi", "text": "ab"})
	if r.Status != "input" || !strings.Contains(text, `"second? "`) {
		t.Fatalf("the first answer: %s\n%s", clip(r.String()), text)
	}
	r, text = s.cell("input", map[string]any{"session": "mi", "text": "cd"})
	if r.Status != "done" || !strings.HasSuffix(text, "'abcd'") {
		t.Errorf("the second answer: %s\n%s", clip(r.String()), text)
	}
	res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "input", Arguments: map[string]any{"session": "mi", "text": "late"}})
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "waits for input") {
		t.Errorf("an answer nobody asked for: %v %s; want a tool error saying no cell waits", err, toolText(res))
	}
}
