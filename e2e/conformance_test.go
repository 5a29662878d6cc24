package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

// check is one cell of the conformance suite and what must come back.
type check struct {
	code   string
	value  string // the value as the runtime's REPL shows it; "" for none
	output string // the exact output; "" for none
}

// conformanceRow says how one runtime passes the suite. Adding a runtime
// to polyrepl adds one row here.
type conformanceRow struct {
	runtime string
	value   check  // `6*7`-style value display
	print   check  // printed output
	fail    string // code that raises; the session must recover
	define  string // a multi-line definition...
	use     check  // ...used by the next cell
	unicode check  // Unicode round trip
	noNL    check  // output without a trailing newline
	big     func(n int) check
	loop    string // runs until interrupted
	set     string // defines x, for restart to clear
	getX    string // reads x: must fail after restart
	name    string // a name `set` defines, as `sessions` lists it ("" if the runtime lists none)
	// missing, if set, says why the runtime cannot run here though its
	// executable exists (e.g. a Python without IPython), or "".
	missing func() string
}

// pythonRow is the suite for a Python-language runtime (python, ipython).
func pythonRow(runtime string, missing func() string) conformanceRow {
	return conformanceRow{
		runtime: runtime,
		value:   check{code: "6*7", value: "42"},
		print:   check{code: `print("hello")`, output: "hello\n"},
		fail:    "1/0",
		define:  "def twice(x):\n    y = x * 2\n    return y",
		use:     check{code: "twice(21)", value: "42"},
		unicode: check{code: `print("héllo 中文 🎉")`, output: "héllo 中文 🎉\n"},
		noNL:    check{code: `print("no-newline", end="")`, output: "no-newline"},
		big: func(n int) check {
			return check{code: fmt.Sprintf("s = %q\nlen(s)", strings.Repeat("a", n)), value: fmt.Sprint(n)}
		},
		loop: "while True:\n    pass",
		set:  "x = 1", getX: "x", name: "x",
		missing: missing,
	}
}

// rRow is the suite for an R-language runtime (r, an R kernel); name is
// what sessions lists after x <- 1, "" if the runtime lists no names.
func rRow(runtime, name string) conformanceRow {
	return conformanceRow{
		runtime: runtime,
		value:   check{code: "6*7", value: "[1] 42"},
		print:   check{code: `cat("hello\n")`, output: "hello\n"},
		fail:    `stop("boom")`,
		define:  "twice <- function(x) {\n  y <- x * 2\n  y\n}",
		use:     check{code: "twice(21)", value: "[1] 42"},
		unicode: check{code: `cat("héllo 中文 🎉\n")`, output: "héllo 中文 🎉\n"},
		noNL:    check{code: `cat("no-newline")`, output: "no-newline"},
		big: func(n int) check {
			return check{code: fmt.Sprintf("s <- %q\nnchar(s)", strings.Repeat("a", n)), value: fmt.Sprintf("[1] %d", n)}
		},
		loop: "while (TRUE) {}",
		set:  "x <- 1", getX: "x", name: name,
	}
}

// irRow is the suite for IRkernel, which sends values as displays (they
// come as output, as a notebook shows them); its names come from a look
// after each cell.
func irRow() conformanceRow {
	row := rRow("jupyter:ir", "x")
	for _, c := range []*check{&row.value, &row.use} {
		c.output, c.value = c.value+"\n", ""
	}
	big := row.big
	row.big = func(n int) check {
		c := big(n)
		c.output, c.value = c.value+"\n", ""
		return c
	}
	return row
}

// ipythonMissing says why IPython sessions cannot run here, or "".
func ipythonMissing() string {
	if python == "" {
		return "no Python"
	}
	if err := exec.Command(python, "-c", "import IPython").Run(); err != nil {
		return python + " has no IPython (Debian: apt-get install ipython3)"
	}
	return ""
}

var conformance = []conformanceRow{
	pythonRow("python", nil),
	pythonRow("ipython", ipythonMissing),
	pythonRow("jupyter:python3", nil), // Debian's python3-ipykernel
	irRow(),                           // Debian's r-cran-irkernel
	rRow("r", "x"),
	{
		runtime: "ruby",
		value:   check{code: "6*7", value: "42"},
		print:   check{code: `puts "hello"`, output: "hello\n", value: "nil"}, // irb shows => nil
		fail:    `raise "boom"`,
		define:  "def twice(x)\n  y = x * 2\n  y\nend",
		use:     check{code: "twice(21)", value: "42"},
		unicode: check{code: `puts "héllo 中文 🎉"`, output: "héllo 中文 🎉\n", value: "nil"},
		noNL:    check{code: `print "no-newline"; nil`, output: "no-newline", value: "nil"},
		big: func(n int) check {
			return check{code: fmt.Sprintf("s = %q\ns.length", strings.Repeat("a", n)), value: fmt.Sprint(n)}
		},
		loop: "loop { }",
		set:  "x = 1", getX: "x", name: "x",
	},
	{
		runtime: "node",
		value:   check{code: "6*7", value: "42"},
		print:   check{code: `console.log("hello")`, output: "hello\n"},
		fail:    `throw new Error("boom")`,
		define:  "function twice(x) {\n  const y = x * 2;\n  return y;\n}",
		use:     check{code: "twice(21)", value: "42"},
		unicode: check{code: `console.log("héllo 中文 🎉")`, output: "héllo 中文 🎉\n"},
		noNL:    check{code: `process.stdout.write("no-newline"); undefined`, output: "no-newline"},
		big: func(n int) check {
			return check{code: fmt.Sprintf("var s = %q;\ns.length", strings.Repeat("a", n)), value: fmt.Sprint(n)}
		},
		loop: "while (true) {}",
		set:  "var x = 1", getX: "x", name: "x",
	},
	{
		runtime: "ghci", // GHCi prints values: they come as output
		value:   check{code: "6*7", output: "42\n"},
		print:   check{code: `putStrLn "hello"`, output: "hello\n"},
		fail:    `error "boom"`,
		define:  "twice :: Int -> Int\ntwice x = y\n  where y = x * 2",
		use:     check{code: "twice 21", output: "42\n"},
		unicode: check{code: `putStrLn "héllo 中文 🎉"`, output: "héllo 中文 🎉\n"},
		noNL:    check{code: `putStr "no-newline"`, output: "no-newline"},
		big: func(n int) check {
			return check{code: fmt.Sprintf("s = %q\nlength s", strings.Repeat("a", n)), output: fmt.Sprintf("%d\n", n)}
		},
		loop: "length [1..]",
		set:  "x = 1", getX: "x", name: "x",
	},
	{
		runtime: "octave", // Octave prints values: they come as output
		value:   check{code: "6*7", output: "ans = 42\n"},
		print:   check{code: `printf("hello\n")`, output: "hello\n"},
		fail:    `error("boom")`,
		define:  "function y = twice(x)\n  y = x * 2;\nend",
		use:     check{code: "twice(21)", output: "ans = 42\n"},
		unicode: check{code: `disp("héllo 中文 🎉")`, output: "héllo 中文 🎉\n"},
		noNL:    check{code: `printf("no-newline")`, output: "no-newline"},
		big: func(n int) check {
			return check{code: fmt.Sprintf("s = '%s';\nlength(s)", strings.Repeat("a", n)), output: fmt.Sprintf("ans = %d\n", n)}
		},
		loop: "while true; end",
		set:  "x = 1;", getX: "x", name: "x",
	},
	{
		runtime: "gnuplot", // gnuplot has no values: print writes output
		value:   check{code: "print 6*7", output: "42\n"},
		print:   check{code: `print "hello"`, output: "hello\n"},
		fail:    "foo bar",
		define:  "twice(x) = \\\n  x * 2",
		use:     check{code: "print twice(21)", output: "42\n"},
		unicode: check{code: `print "héllo 中文 🎉"`, output: "héllo 中文 🎉\n"},
		noNL:    check{code: `system "printf no-newline"`, output: "no-newline"},
		big: func(n int) check {
			return check{code: fmt.Sprintf("s = %q\nprint strlen(s)", strings.Repeat("a", n)), output: fmt.Sprintf("%d\n", n)}
		},
		loop: "while (1) { a = 1 }",
		set:  "x = 1", getX: "print x", name: "x",
	},
	{
		runtime: "clojure",
		value:   check{code: "(* 6 7)", value: "42"},
		print:   check{code: `(println "hello")`, output: "hello\n", value: "nil"},
		fail:    "(/ 1 0)",
		define:  "(defn twice [x]\n  (let [y (* x 2)]\n    y))",
		use:     check{code: "(twice 21)", value: "42"},
		unicode: check{code: `(println "héllo 中文 🎉")`, output: "héllo 中文 🎉\n", value: "nil"},
		noNL:    check{code: `(print "no-newline")`, output: "no-newline", value: "nil"},
		big: func(n int) check {
			return check{code: fmt.Sprintf("(def s %q)\n(count s)", strings.Repeat("a", n)), value: fmt.Sprint(n)}
		},
		loop: "(loop [] (recur))",
		set:  "(def x 1)", getX: "x", name: "x",
	},
	{
		runtime: "java",
		value:   check{code: "6*7", value: "42"},
		print:   check{code: `System.out.println("hello")`, output: "hello\n"},
		fail:    `throw new RuntimeException("boom")`,
		define:  "int twice(int x) {\n  int y = x * 2;\n  return y;\n}",
		use:     check{code: "twice(21)", value: "42"},
		unicode: check{code: `System.out.println("héllo 中文 🎉")`, output: "héllo 中文 🎉\n"},
		noNL:    check{code: `System.out.print("no-newline")`, output: "no-newline"},
		big: func(n int) check {
			return check{code: fmt.Sprintf("String s = %q;\ns.length()", strings.Repeat("a", n)), value: fmt.Sprint(n)}
		},
		loop: "while (true) {}",
		set:  "int x = 1;", getX: "x", name: "x",
	},
	{
		runtime: "sh", // on a terminal; no values, the exit status
		value:   check{code: "echo $((6*7))", output: "42\n"},
		print:   check{code: "echo hello", output: "hello\n"},
		fail:    "false",
		define:  "twice() {\n  echo $(( $1 * 2 ))\n}",
		use:     check{code: "twice 21", output: "42\n"},
		unicode: check{code: `echo "héllo 中文 🎉"`, output: "héllo 中文 🎉\n"},
		noNL:    check{code: `printf no-newline`, output: "no-newline"},
		big: func(n int) check {
			return check{code: fmt.Sprintf("s=%s\necho ${#s}", strings.Repeat("a", n)), output: fmt.Sprintf("%d\n", n)}
		},
		loop: "while :; do :; done",
		set:  "x=1", getX: `[ -n "${x+set}" ]`,
	},
	{
		runtime: "bash",
		value:   check{code: "echo $((6*7))", output: "42\n"},
		print:   check{code: "echo hello", output: "hello\n"},
		fail:    "false",
		define:  "twice() {\n  local y=$(( $1 * 2 ))\n  echo $y\n}",
		use:     check{code: "twice 21", output: "42\n"},
		unicode: check{code: `echo "héllo 中文 🎉"`, output: "héllo 中文 🎉\n"},
		noNL:    check{code: `printf no-newline`, output: "no-newline"},
		big: func(n int) check {
			return check{code: fmt.Sprintf("s=%s\necho ${#s}", strings.Repeat("a", n)), output: fmt.Sprintf("%d\n", n)}
		},
		loop: "while :; do :; done",
		set:  "x=1", getX: `[ -n "${x+set}" ]`, name: "x",
	},
}

// runtimeFound asks the binary whether it knows the runtime and finds its
// executable on this machine.
func runtimeFound(e *env, name string) (bool, string) {
	out, _, code := e.run("runtimes", "--json")
	if code != 0 {
		return false, "polyrepl runtimes failed"
	}
	var list []struct {
		Name    string `json:"name"`
		Found   bool   `json:"found"`
		Problem string `json:"problem"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return false, "cannot read polyrepl runtimes --json: " + err.Error()
	}
	for _, r := range list {
		if r.Name == name {
			return r.Found, r.Problem
		}
	}
	return false, "this build of polyrepl has no " + name + " runtime"
}

// needRuntime skips the test unless the runtime is found here; install
// is what provides it on Debian.
func needRuntime(t *testing.T, e *env, name, install string) {
	t.Helper()
	if found, why := runtimeFound(e, name); !found {
		t.Skipf("no %s runtime here (Debian: %s): %s", name, install, why)
	}
}

// TestConformance holds every runtime to the same promises: values shown
// as its REPL shows them, output, errors that leave the session usable,
// multi-line definitions, Unicode, output without a newline, a 5 KB cell,
// interrupt of an endless loop, restart clearing state, and no process
// left after kill.
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, row := range conformance {
		t.Run(row.runtime, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if found, why := runtimeFound(e, row.runtime); !found {
				t.Skipf("runtime %s is not available here: %s", row.runtime, why)
			}
			if row.missing != nil {
				if why := row.missing(); why != "" {
					t.Skipf("runtime %s is not available here: %s", row.runtime, why)
				}
			}
			conform(t, e, row)
		})
	}
}

// conform runs row's suite in e; args go with every exec (a gateway's).
// Kill must leave no process of the session here: a gateway's kernels
// are the gateway's to check.
func conform(t *testing.T, e *env, row conformanceRow, args ...string) {
	t.Helper()
	s := "conf-" + strings.ReplaceAll(row.runtime, ":", "-")
	exec := func(code string, more ...string) cellResult {
		t.Helper()
		return e.runJSON(append(append([]string{"exec", s, code, "--runtime", row.runtime, "-t", "60"}, args...), more...)...)
	}
	expect := func(what string, c check) {
		t.Helper()
		r := exec(c.code)
		if r.Status != "done" || r.Value != c.value || r.Output != c.output {
			t.Errorf("%s: %q gave status %s, value %q, output %q; want done, value %q, output %q\n%v",
				what, c.code, r.Status, r.Value, r.Output, c.value, c.output, r)
		}
	}
	expect("value", row.value)
	expect("print", row.print)

	r := exec(row.fail)
	if r.Status != "error" || r.Error == nil || r.code != 1 {
		t.Errorf("error: %q gave status %s, exit %d; want error, exit 1\n%v", row.fail, r.Status, r.code, r)
	}
	expect("value after an error", row.value)

	if r := exec(row.define); r.Status != "done" {
		t.Errorf("multi-line definition: %v", r)
	}
	expect("using the definition", row.use)
	expect("unicode", row.unicode)
	expect("output without a newline", row.noNL)
	expect("a 5 KB cell", row.big(5000))

	// Interrupt of an endless loop; the session and its names stay.
	exec(row.set)
	r = exec(row.loop, "-t", "0.5")
	if r.Status != "running" {
		t.Fatalf("endless loop: want status running after 0.5 s, got %v", r)
	}
	out, errOut, code := e.run("interrupt", s)
	if code != 0 {
		t.Errorf("interrupt: exit %d\n%s%s", code, out, errOut)
	}
	if r := exec(row.getX); r.Status != "done" {
		t.Errorf("after interrupt, %q: %v", row.getX, r)
	}
	if row.name != "" {
		info := e.session(s)
		if !slices.Contains(info.Names, row.name) {
			t.Errorf("sessions lists names %v, want %s among them", info.Names, row.name)
		}
	}

	// Restart clears the state.
	e.must(0, "restart", s)
	if r := exec(row.getX); r.Status != "error" {
		t.Errorf("after restart, %q should fail: %v", row.getX, r)
	}

	// Kill leaves no process of the session.
	gen := e.session(s).Generation
	e.must(0, "kill", s)
	if !waitFor(5*time.Second, func() bool { return len(e.generation(gen)) == 0 }) {
		t.Errorf("after kill, processes of the session remain: %s", proctest.Describe(e.generation(gen)))
	}
}
