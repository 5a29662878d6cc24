package node

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

// recorder records the worker's events (shared by every runtime's tests).
type recorder = drivertest.Recorder

func testNode(t testing.TB) string {
	if p := os.Getenv("POLYREPL_TEST_NODE"); p != "" {
		return p
	}
	for _, name := range Runtime.Exes {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Node.js: install node (Debian: apt-get install nodejs) or set POLYREPL_TEST_NODE")
	return ""
}

type options struct {
	runtime    *worker.Runtime // Runtime if nil
	env        []string
	valueLimit int
	cwd        string
}

func start(t testing.TB) (driver.Process, *recorder) {
	return startWith(t, options{})
}

func startWith(t testing.TB, o options) (driver.Process, *recorder) {
	t.Helper()
	if o.runtime == nil {
		o.runtime = Runtime
	}
	// Without the caller's NODE_OPTIONS, which could add warnings or a
	// debugger to the tests' cells.
	return drivertest.StartWith(t, worker.Driver{R: o.runtime}, testNode(t),
		drivertest.Options{Env: o.env, Drop: []string{"NODE_OPTIONS"}, Cwd: o.cwd, ValueLimit: o.valueLimit})
}

// The worker greets with Node's version and executable, and cells see a
// clean top level as in the REPL: no names of the worker, argv without the
// end marker, require and the built-in modules at hand; user definitions
// that share the worker's helper names, or replace the globals it uses, do
// not break it.
func TestStartAndCleanNamespace(t *testing.T) {
	p, rec := start(t)
	want, err := exec.Command(testNode(t), "-p", "process.versions.node").Output()
	if err != nil {
		t.Fatal(err)
	}
	if p.Version() != strings.TrimSpace(string(want)) {
		t.Errorf("version = %q, want %q", p.Version(), want)
	}
	if !filepath.IsAbs(p.Exe()) {
		t.Errorf("executable = %q, want an absolute path", p.Exe())
	}
	if _, err := os.Stat(p.Exe()); err != nil {
		t.Errorf("executable: %v", err)
	}
	r := drivertest.Run(t, p, rec, 1, "1")
	if r.Value != "1" || len(r.Names) != 0 {
		t.Errorf("fresh session: %+v, want value 1 and no names", r)
	}
	for i, c := range []struct{ code, want string }{
		{"[typeof main, typeof send, typeof runCell, typeof names, typeof queue, typeof sentinel].join()",
			"'undefined,undefined,undefined,undefined,undefined,undefined'"},
		{"process.argv.length", "1"},
		{"process.argv[0] === process.execPath", "true"},
		{"this === globalThis", "true"},
		{"typeof require('fs').readFileSync", "'function'"},
		{"path.join('a', 'b')", "'a/b'"},
		{"require('fs').writeFileSync('x.js', 'module.exports = 7'); require('./x.js')", "7"},
		{"require('fs').readFileSync('/proc/self/cmdline', 'latin1').includes('polyrepl-end')", "false"},
		{"[] instanceof Array && require('fs').readdirSync('/') instanceof Array", "true"},
	} {
		if got := drivertest.MustValue(t, p, rec, 2+i, c.code); got != c.want {
			t.Errorf("%s = %q, want %q", c.code, got, c.want)
		}
	}
	// Ordinary definitions with the worker's helper names, and the globals
	// it uses replaced.
	clobber := "var main = 1, send = 2, names = 3, flush = 4;\nfunction runCell() { return 5 }\nlet queue = 6;\n" +
		"const sentinel = 7;\nJSON = null; Buffer = null;"
	r = drivertest.Run(t, p, rec, 20, clobber)
	if r.Status != "done" {
		t.Fatalf("defining clobbering names: %+v", r.Error)
	}
	for i, code := range []string{"6*7", "'still' + ' fine'", "await 1", "throw new TypeError('x')"} {
		r = drivertest.Run(t, p, rec, 21+i, code)
		if r.Status == "" || (r.Status == "done" && r.Value == "") {
			t.Errorf("after clobbering, %q: %+v", code, r)
		}
	}
	wantNames := []string{"flush", "main", "names", "queue", "runCell", "send", "sentinel"}
	if !reflect.DeepEqual(r.Names, wantNames) {
		t.Errorf("names = %q, want %q", r.Names, wantNames)
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("output = %q, want none", out)
	}
}

// Values are shown the way the node REPL shows them; a final undefined
// shows nothing.
func TestValues(t *testing.T) {
	p, rec := start(t)
	for i, c := range []struct{ code, want string }{
		{"6*7", "42"},
		{`'héllo'`, `'héllo'`},
		{`"it's"`, `"it's"`},
		{"undefined", ""},
		{"null", "null"},
		{"x = 5", "5"},
		{"var y = 1", ""},
		{"function twice(n) { return n * 2 }", ""},
		{"twice", "[Function: twice]"},
		{"class K {}", ""},
		{"K", "[class K]"},
		{"{a: 1, b: 'two'}", "{ a: 1, b: 'two' }"},
		{"{ let q = 1; q + 1 }", "2"},
		{"[1, 2, 3]", "[ 1, 2, 3 ]"},
		{"new Map([[1, {x: [1, 2]}]])", "Map(1) { 1 => { x: [ 1, 2 ] } }"},
		{"Promise.resolve(3)", "Promise { 3 }"},
		{"console.log('hi')", ""},
		{"_", ""},
		{"x + 1", "6"},
		{"_ * 2", "12"},
		{"for (let i = 0; i < 3; i++) i", "2"},
		{"if (true) { 'yes' } else { 'no' }", "'yes'"},
		{"'x'.repeat(100)", "'" + strings.Repeat("x", 100) + "'"},
		{"({deep: {a: {b: {c: {d: 1}}}}})", "{ deep: { a: { b: [Object] } } }"},
		{"Array.from({length: 30}, (_, i) => i * 1000)", "[\n      0,  1000,  2000,  3000,  4000,\n   5000,  6000,  7000,  8000,  9000,\n  10000, 11000, 12000, 13000, 14000,\n  15000, 16000, 17000, 18000, 19000,\n  20000, 21000, 22000, 23000, 24000,\n  25000, 26000, 27000, 28000, 29000\n]"},
		{"new Proxy({}, {})", "Proxy [ {}, {} ]"},
		{"Symbol('s')", "Symbol(s)"},
		{"10n ** 20n", "100000000000000000000n"},
	} {
		if got := drivertest.MustValue(t, p, rec, i+1, c.code); got != c.want {
			t.Errorf("%q = %q, want %q", c.code, got, c.want)
		}
	}
	for i, code := range []string{"", "  \n", "// just a comment\n", "/* block */"} {
		r := drivertest.Run(t, p, rec, 100+i, code)
		if r.Status != "done" || r.Value != "" || r.ValueTotal != 0 {
			t.Errorf("cell %q: %+v, want no value", code, r)
		}
	}
	if out := rec.TakeOutput(); out != "hi\n" {
		t.Errorf("output = %q, want hi", out)
	}
}

// Top-level await works as in the REPL: declarations persist, the last
// expression's value is shown, a rejection is an error.
func TestTopLevelAwait(t *testing.T) {
	p, rec := start(t)
	for i, c := range []struct{ code, want string }{
		{"const r = await Promise.resolve(41)", ""},
		{"r + 1", "42"},
		{"await new Promise(res => setTimeout(() => res('late'), 50))", "'late'"},
		{"let {a, b: [c]} = await Promise.resolve({a: 1, b: [2]});\na + c", "3"},
		{"async function f() { await null; return 5 }", ""},
		{"await f()", "5"},
		{"{v: await f()}", "{ v: 5 }"},
		{"for (const n of [1, 2]) { await null; console.log('n', n) }", ""},
		{"await new Promise(res => setTimeout(() => { console.log('tick'); res() }, 20)); 'after'", "'after'"},
		{"a + c + r", "44"},
	} {
		if got := drivertest.MustValue(t, p, rec, i+1, c.code); got != c.want {
			t.Errorf("%q = %q, want %q", c.code, got, c.want)
		}
	}
	if out := rec.TakeOutput(); out != "n 1\nn 2\ntick\n" {
		t.Errorf("output = %q", out)
	}
	r := drivertest.Run(t, p, rec, 20, "await Promise.reject(new RangeError('nope'))")
	if r.Status != "error" || r.Error == nil || r.Error.Type != "RangeError" || r.Error.Message != "nope" ||
		!strings.HasPrefix(r.Error.Traceback, "Uncaught RangeError: nope\n    at <cell 20>:") || strings.Contains(r.Error.Traceback, "node-worker") {
		t.Errorf("rejection: %+v", r.Error)
	}
	r = drivertest.Run(t, p, rec, 21, "const names = Object.keys(globalThis)")
	if want := []string{"a", "c", "f", "names", "r"}; !reflect.DeepEqual(r.Names, want) {
		t.Errorf("names = %q, want %q", r.Names, want)
	}
	// import() resolves from the cwd, without a warning.
	if drivertest.MustValue(t, p, rec, 22, "'USE_MAIN_CONTEXT_DEFAULT_LOADER' in (require('vm').constants || {})") == "true" {
		drivertest.MustValue(t, p, rec, 23, "require('fs').writeFileSync('m.mjs', 'export const answer = 42')")
		if got := drivertest.MustValue(t, p, rec, 24, "(await import('./m.mjs')).answer"); got != "42" {
			t.Errorf("import() = %q", got)
		}
		if got := drivertest.MustValue(t, p, rec, 25, "const os = await import('node:os'); typeof os.cpus"); got != "'function'" {
			t.Errorf("import() of a built-in = %q", got)
		}
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("output = %q, want none", out)
	}
}

// Without Node's internal modules (a future Node that moved the REPL's
// rewrite), a cell with top-level await still runs, showing no value.
func TestAwaitWithoutInternals(t *testing.T) {
	rt := *Runtime
	rt.Args = nil
	p, rec := startWith(t, options{runtime: &rt})
	r := drivertest.Run(t, p, rec, 1, "await new Promise(r => setTimeout(r, 10)); console.log('awaited'); 5")
	if r.Status != "done" || r.Value != "" {
		t.Errorf("result = %+v", r)
	}
	if got := drivertest.MustValue(t, p, rec, 2, "6*7"); got != "42" {
		t.Errorf("6*7 = %q", got)
	}
	r = drivertest.Run(t, p, rec, 3, "await Promise.reject(new Error('no'))")
	if r.Status != "error" || r.Error.Message != "no" {
		t.Errorf("rejection: %+v", r)
	}
	if out := rec.TakeOutput(); out != "awaited\n" {
		t.Errorf("output = %q", out)
	}
}

// A value longer than the limit comes back as head and tail with its
// whole length, in characters.
func TestValueLimit(t *testing.T) {
	p, rec := startWith(t, options{valueLimit: 100})
	r := drivertest.Run(t, p, rec, 1, `'é'.repeat(500) + '🎉END'`)
	if r.ValueCut == nil || r.ValueTotal != 506 {
		t.Fatalf("result = %+v, want a cut value of 506 characters", r)
	}
	if !strings.HasPrefix(r.Value, `'ééé`) || !strings.HasSuffix(r.Value, `é🎉END'`) || !strings.Contains(r.Value, "406 characters cut") {
		t.Errorf("value = %q", r.Value)
	}
	if got := drivertest.MustValue(t, p, rec, 2, `'x'.repeat(98)`); got != `'`+strings.Repeat("x", 98)+`'` {
		t.Errorf("a value of exactly the limit = %q", got)
	}
	r = drivertest.Run(t, p, rec, 3, `'🎉'.repeat(98)`)
	if r.ValueCut != nil || r.ValueTotal != 100 {
		t.Errorf("100 characters in 198 UTF-16 units: %+v", r)
	}
}

// Everything a cell prints, from JavaScript and from subprocesses, on
// stdout and stderr, including what its next ticks and promise reactions
// print, arrives in order before the cell is reported done; multi-line
// definitions persist to later cells.
func TestOutputAndPersistence(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, "process.stdout.write('a')\nprocess.stderr.write('b')\n"+
		"require('child_process').execSync('echo c', {stdio: 'inherit'})\nconsole.log('d')\nconsole.error('e')\n"+
		"require('child_process').execSync('echo f >&2', {stdio: 'inherit'})\n"+
		"process.nextTick(() => console.log('h'))\nPromise.resolve().then(() => process.stdout.write('i'))\nsetImmediate(() => process.stdout.write('j'))\n"+
		"process.stdout.write('g\\n')\n7")
	if r.Status != "done" || r.Value != "7" {
		t.Fatalf("result = %+v", r)
	}
	if got := rec.TakeOutput(); got != "abc\nd\ne\nf\ng\nh\nij" {
		t.Errorf("output = %q", got)
	}
	if last := rec.LastEvent(); last != "done" {
		t.Errorf("last event = %s, want done", last)
	}
	r = drivertest.Run(t, p, rec, 2, "class Greeter {\n  constructor(name) {\n    this.name = name;\n  }\n\n  greet() {\n    return `hi ${this.name}`;\n  }\n}\n\n"+
		"function twice(s) {\n  return s + s;\n}\nconst g = new Greeter('bob');\nlet counter = 0;\n")
	if r.Status != "done" {
		t.Fatalf("definitions: %+v", r.Error)
	}
	if got := drivertest.MustValue(t, p, rec, 3, "counter++;\ntwice(g.greet())"); got != "'hi bobhi bob'" {
		t.Errorf("using definitions = %q", got)
	}
	if got := drivertest.MustValue(t, p, rec, 4, "counter"); got != "1" {
		t.Errorf("counter = %q", got)
	}
	// Long output crossing many pipe reads keeps its bytes exactly.
	r = drivertest.Run(t, p, rec, 5, "for (var i = 0; i < 20000; i++) process.stdout.write(i + ','); i")
	want := new(strings.Builder)
	for i := 0; i < 20000; i++ {
		want.WriteString(strconv.Itoa(i) + ",")
	}
	if got := rec.TakeOutput(); got != want.String() {
		t.Errorf("long output differs: got %d bytes, want %d", len(got), want.Len())
	}
	if r.Status != "done" || r.Value != "20000" {
		t.Errorf("result = %+v", r)
	}
	// Output printed between cells (a timer) is passed on too.
	drivertest.MustValue(t, p, rec, 6, "setTimeout(() => console.log('later'), 10); undefined")
	if got := drivertest.WaitOutput(t, rec, "later\n", "the timer's output between cells"); got != "later\n" {
		t.Errorf("output between cells = %q", got)
	}
}

// Unicode in code, output and values round-trips exactly with no locale
// set, and a cell over 4 KB runs whole.
func TestUnicodeAndLongCell(t *testing.T) {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LANG=") && !strings.HasPrefix(kv, "LC_") && !strings.HasPrefix(kv, "NODE_OPTIONS=") {
			env = append(env, kv)
		}
	}
	p, rec := startWith(t, options{env: append(env, "LC_ALL=C")})
	const s = "héllo wörld ✓ 日本語 🎉"
	r := drivertest.Run(t, p, rec, 1, "const s = '"+s+"';\nconsole.log(s);\nprocess.stdout.write([...s].length + ' ');\n"+
		"require('child_process').execSync(\"printf '\\\\303\\\\274'\", {stdio: 'inherit'});\ns")
	if r.Status != "done" || r.Value != "'"+s+"'" {
		t.Errorf("value = %q (%+v), want %q", r.Value, r.Error, "'"+s+"'")
	}
	if got := rec.TakeOutput(); got != s+"\n19 ü" {
		t.Errorf("output = %q", got)
	}
	if got := drivertest.MustValue(t, p, rec, 2, "try { throw new Error('ünï') } catch (e) { e.message }"); got != "'ünï'" {
		t.Errorf("message = %q", got)
	}

	var code strings.Builder
	code.WriteString("let total = 0;\n")
	for i := 0; code.Len() < 5000; i++ {
		code.WriteString("total += " + strconv.Itoa(i) + "; // ✓ adding a number to the total\n")
	}
	code.WriteString("total")
	r = drivertest.Run(t, p, rec, 3, code.String())
	n := strings.Count(code.String(), "total +=")
	if r.Status != "done" || r.Value != strconv.Itoa(n*(n-1)/2) {
		t.Errorf("5 KB cell: %+v, want %d", r, n*(n-1)/2)
	}
}

// Errors come back with the error's name, message and the REPL's
// "Uncaught …" text, without the worker's frames, and the session goes on.
func TestErrors(t *testing.T) {
	p, rec := start(t)
	drivertest.MustValue(t, p, rec, 1, "function inner() { throw new TypeError('bad thing') }\nfunction outer() { inner() }")
	r := drivertest.Run(t, p, rec, 2, "let x = 1;\nouter()")
	if r.Status != "error" || r.Error == nil {
		t.Fatalf("result = %+v", r)
	}
	e := r.Error
	wantTB := "Uncaught TypeError: bad thing\n    at inner (<cell 1>:1:26)\n    at outer (<cell 1>:2:20)\n    at <cell 2>:2:1"
	if e.Type != "TypeError" || e.Message != "bad thing" || e.Traceback != wantTB {
		t.Errorf("error = %+v\nwant traceback %q", e, wantTB)
	}
	for i, c := range []struct {
		code, typ, message, traceback string
	}{
		// A syntax error shows the line and a caret, and no frame.
		{"let a = 1;\nsyntax error here(", "SyntaxError", "Unexpected identifier 'error'",
			"<cell 10>:2\nsyntax error here(\n       ^^^^^\n\nUncaught SyntaxError: Unexpected identifier 'error'"},
		{"throw 42", "number", "42", "Uncaught 42"},
		{"throw 'oops'", "string", "oops", "Uncaught 'oops'"},
		{"throw {code: 1}", "Object", "{ code: 1 }", "Uncaught { code: 1 }"},
		{"null.x", "TypeError", "Cannot read properties of null (reading 'x')",
			"Uncaught TypeError: Cannot read properties of null (reading 'x')\n    at <cell 14>:1:6"},
		{"JSON.parse('{')", "SyntaxError", "",
			"Uncaught SyntaxError: "},
		{"class MyErr extends Error { constructor(m) { super(m); this.name = 'MyErr'; this.code = 7 } }\nthrow new MyErr('custom')",
			"MyErr", "custom", "Uncaught:\nMyErr: custom\n    at <cell 16>:2:7 {\n  code: 7\n}"},
		{"undefinedThing", "ReferenceError", "undefinedThing is not defined",
			"Uncaught ReferenceError: undefinedThing is not defined\n    at <cell 17>:1:1"},
		{"require('fs').readFileSync('/nonexistent/file')", "Error", "ENOENT: no such file or directory, open '/nonexistent/file'",
			"Uncaught Error: ENOENT: no such file or directory, open '/nonexistent/file'\n    at Object.openSync (node:fs:"},
	} {
		n := 10 + i
		r := drivertest.Run(t, p, rec, n, c.code)
		if r.Status != "error" || r.Error == nil {
			t.Errorf("%q: %+v", c.code, r)
			continue
		}
		if r.Error.Type != c.typ || !strings.HasPrefix(r.Error.Message, c.message) || !strings.HasPrefix(r.Error.Traceback, c.traceback) {
			t.Errorf("%q: error = %+v\nwant type %q, message %q, traceback starting %q", c.code, r.Error, c.typ, c.message, c.traceback)
		}
		if strings.Contains(r.Error.Traceback, "node-worker") || strings.Contains(r.Error.Traceback, "node:vm") {
			t.Errorf("%q: traceback shows the worker: %q", c.code, r.Error.Traceback)
		}
	}
	// An exception thrown by a callback while the cell awaits ends it.
	r = drivertest.Run(t, p, rec, 30, "await new Promise(() => setTimeout(() => { throw new RangeError('late') }, 10))")
	if r.Status != "error" || r.Error.Type != "RangeError" || !strings.HasPrefix(r.Error.Traceback, "Uncaught RangeError: late\n    at Timeout._onTimeout (<cell 30>:1:") {
		t.Errorf("uncaught in a callback: %+v", r.Error)
	}
	// An unhandled rejection is shown as the REPL shows it, and the cell
	// still has its value; between cells, an uncaught exception is shown
	// and the session survives.
	r = drivertest.Run(t, p, rec, 31, "Promise.reject(new Error('r')); 1")
	if r.Status != "done" || r.Value != "1" {
		t.Errorf("unhandled rejection: %+v", r)
	}
	if out := rec.TakeOutput(); !strings.HasPrefix(out, "Uncaught Error: r\n    at <cell 31>:1:16\n") {
		t.Errorf("unhandled rejection output = %q", out)
	}
	drivertest.MustValue(t, p, rec, 32, "setTimeout(() => { throw new Error('between') }, 10); undefined")
	between := drivertest.WaitOutput(t, rec, "Uncaught Error: between\n    at Timeout._onTimeout (<cell 32>:1:26)", "the uncaught exception between cells")
	if got := drivertest.MustValue(t, p, rec, 33, "x + 41"); got != "42" {
		t.Errorf("after the errors: %q", got)
	}
	if out := between + rec.TakeOutput(); !strings.HasPrefix(out, "Uncaught Error: between\n    at Timeout._onTimeout (<cell 32>:1:26)") {
		t.Errorf("uncaught between cells: output = %q", out)
	}
	if got := drivertest.MustValue(t, p, rec, 34, "_error.message"); got != "'late'" {
		t.Errorf("_error = %q", got)
	}
}

// interruptCell calls Interrupt the way the session does, a moment apart,
// until the cell ends.
func interruptCell(t *testing.T, p driver.Process, rec *recorder, n int, code string) driver.Result {
	t.Helper()
	return drivertest.Interrupt(t, p, rec, n, code, 250*time.Millisecond)
}

// SIGINT stops a running cell, busy, sleeping, awaiting or waiting on a
// subprocess, and the session keeps its names; between cells it is
// ignored.
func TestInterrupt(t *testing.T) {
	p, rec := start(t)
	drivertest.MustValue(t, p, rec, 1, "var kept = 42; let lexical = 'yes'")
	for i, code := range []string{
		"while (true) {}",
		"let i = 0;\nfor (;;) { i++ }",
		"await new Promise(r => setTimeout(r, 100000))",
		"require('child_process').execSync('sleep 30')\nconsole.log('not reached')",
		"Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 30000)",
	} {
		r := interruptCell(t, p, rec, 2+i, code)
		if r.Status != "interrupted" || r.Error == nil || !strings.Contains(r.Error.Traceback, "ERR_SCRIPT_EXECUTION_INTERRUPTED") {
			t.Errorf("%q: %+v", code, r)
		}
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("output = %q", out)
	}
	drivertest.IdleSignals(t, p)
	r := drivertest.Run(t, p, rec, 10, "kept + lexical")
	if r.Status != "done" || r.Value != "'42yes'" || !reflect.DeepEqual(r.Names, []string{"i", "kept", "lexical"}) {
		t.Errorf("after interrupts: %+v", r)
	}
}

// names lists what the user defined at top level, sorted: var, function,
// assignment, let, const and class, and Node's globals the user replaced,
// but not Node's own globals, nor the built-in modules the REPL offers.
func TestNames(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, "var b = 1; a = 2; function helper() {}\nlet lex = 1; const {c, d: [e]} = {c: 1, d: [2]};\nclass Zed {}\n"+
		"typeof fetch; path.sep; var fs = 'mine'; globalThis.setTimeout = setTimeout")
	want := []string{"Zed", "a", "b", "c", "e", "fs", "helper", "lex"}
	if r.Status != "done" || !reflect.DeepEqual(r.Names, want) {
		t.Errorf("names = %q, want %q (%+v)", r.Names, want, r.Error)
	}
	r = drivertest.Run(t, p, rec, 2, "delete globalThis.a; _ = 'taken'; setInterval = null")
	if want := []string{"Zed", "_", "b", "c", "e", "fs", "helper", "lex", "setInterval"}; !reflect.DeepEqual(r.Names, want) {
		t.Errorf("names after changes = %q, want %q", r.Names, want)
	}
	r = drivertest.Run(t, p, rec, 3, "for (let i = 0; i < 600; i++) globalThis['v' + String(i).padStart(3, '0')] = i")
	if len(r.Names) != 500 || r.Names[0] != "Zed" {
		t.Errorf("%d names, first %q; want 500 from Zed", len(r.Names), r.Names[0])
	}
}

// The control channels do not leak into subprocesses.
func TestChildren(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, "require('child_process').execSync(\"sh -c 'readlink /proc/$$/fd/3 /proc/$$/fd/4 2>/dev/null; echo end'\", {stdio: 'inherit'}); undefined")
	if r.Status != "done" {
		t.Fatalf("result = %+v", r)
	}
	if out := rec.TakeOutput(); out != "end\n" {
		t.Errorf("a subprocess sees fds 3 and 4: %q", out)
	}
}

// BenchmarkCell measures one trivial cell through the worker protocol:
// the pipe round trip, framing and marker scan, without the daemon.
func BenchmarkCell(b *testing.B) {
	p, rec := start(b)
	drivertest.BenchCell(b, p, rec, "1+1")
}

// BenchmarkStart measures a session's start: node's boot and the worker's
// greeting.
func BenchmarkStart(b *testing.B) {
	dir := b.TempDir()
	drivertest.BenchStart(b, worker.Driver{R: Runtime}, driver.Spec{Exe: testNode(b), Cwd: dir, Env: os.Environ(), Cookie: drivertest.Cookie("node"), RuntimeDir: dir, ValueLimit: 10000})
}

// A static import is a SyntaxError in a cell, which is not a module; its
// result names the trap, so the reply can point at await import(). Other
// errors, also ones that mention import, get no hint.
func TestStaticImportHint(t *testing.T) {
	p, rec := start(t)
	for i, tc := range []struct {
		code string
		hint string
	}{
		{`import fs from "fs"`, api.HintDynamicImport},
		{"import {readFileSync} from 'fs'", api.HintDynamicImport},
		{"const a = 1;\nimport * as path from 'path'", api.HintDynamicImport},
		{`import "fs"`, api.HintDynamicImport},
		{`throw new SyntaxError("Cannot use import statement here")`, ""},
		{`let = = 1`, ""},
		{`const m = await import("fs"); typeof m.readFileSync`, ""},
	} {
		r := drivertest.Run(t, p, rec, i+1, tc.code)
		if r.Hint != tc.hint {
			t.Errorf("%q: hint %q, want %q (status %s, error %+v)", tc.code, r.Hint, tc.hint, r.Status, r.Error)
		}
	}
}
