package ruby

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver/drivertest"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

// recorder records the worker's events (shared by every runtime's tests).
type recorder = drivertest.Recorder

func testRuby(t testing.TB) string {
	return drivertest.Exe(t, "POLYREPL_TEST_RUBY", "ruby", "Ruby (Debian: apt-get install ruby)")
}

type options struct {
	env        []string
	valueLimit int
}

func start(t testing.TB) (driver.Process, *recorder) {
	return startWith(t, options{})
}

func startWith(t testing.TB, o options) (driver.Process, *recorder) {
	t.Helper()
	// Without the caller's RUBYOPT: -w would add warnings about the
	// tests' own cells to their output.
	return drivertest.StartWith(t, worker.Driver{R: Runtime}, testRuby(t),
		drivertest.Options{Env: o.env, Drop: []string{"RUBYOPT"}, ValueLimit: o.valueLimit})
}

// The worker greets with Ruby's version and executable, and the cells see
// a clean top level: no locals, constants or methods of the worker, and
// user definitions that share the worker's helper names do not break it.
func TestStartAndCleanNamespace(t *testing.T) {
	p, rec := start(t)
	want, err := exec.Command(testRuby(t), "-e", "print RUBY_VERSION").Output()
	if err != nil {
		t.Fatal(err)
	}
	if p.Version() != string(want) {
		t.Errorf("version = %q, want %q", p.Version(), want)
	}
	if !filepath.IsAbs(p.Exe()) {
		t.Errorf("executable = %q, want an absolute path", p.Exe())
	}
	if _, err := os.Stat(p.Exe()); err != nil {
		t.Errorf("executable: %v", err)
	}
	r := drivertest.Run(t, p, rec, 1, "local_variables")
	if r.Value != "[]" || len(r.Names) != 0 {
		t.Errorf("fresh session: local_variables = %q, names = %q", r.Value, r.Names)
	}
	for i, c := range []struct{ code, want string }{
		{"self", "main"},
		{"ARGV", "[]"},
		{"__method__", "nil"},
		{"ObjectSpace.each_object(Module).count { |m| m.name.to_s =~ /polyrepl/i }", "0"},
	} {
		if got := drivertest.MustValue(t, p, rec, 2+i, c.code); got != c.want {
			t.Errorf("%s = %q, want %q", c.code, got, c.want)
		}
	}
	// Ordinary user definitions with the names of the worker's helpers
	// and of the Kernel functions it uses.
	var clobber strings.Builder
	for _, name := range []string{"main", "send_event", "json", "names", "flush_all", "run_cell", "exit!", "raise", "puts"} {
		clobber.WriteString("def " + name + "(*); end\n")
	}
	r = drivertest.Run(t, p, rec, 10, clobber.String())
	if r.Status != "done" {
		t.Fatalf("defining clobbering methods: %+v", r.Error)
	}
	r = drivertest.Run(t, p, rec, 11, "x = [1] * 40")
	if r.Status != "done" || !strings.HasPrefix(r.Value, "[1,\n 1,") {
		t.Fatalf("after clobbering: %+v", r)
	}
	wantNames := []string{"exit!", "flush_all", "json", "main", "names", "puts", "raise", "run_cell", "send_event", "x"}
	if !reflect.DeepEqual(r.Names, wantNames) {
		t.Errorf("names = %q, want %q (PP must stay hidden)", r.Names, wantNames)
	}
	r = drivertest.Run(t, p, rec, 12, "1/0")
	if r.Status != "error" || r.Error == nil || r.Error.Type != "ZeroDivisionError" {
		t.Errorf("error after clobbering: %+v", r)
	}
}

// The worker itself is silent even with every warning on.
func TestNoWarnings(t *testing.T) {
	env := append(os.Environ(), "RUBYOPT=-w")
	p, rec := startWith(t, options{env: env})
	if got := drivertest.MustValue(t, p, rec, 1, "$VERBOSE"); got != "true" {
		t.Errorf("$VERBOSE = %s, want true", got)
	}
	drivertest.MustValue(t, p, rec, 2, "[1] * 40") // loads pp
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("output = %q, want none", out)
	}
}

// Values are shown the way irb shows them after "=> ".
func TestValues(t *testing.T) {
	p, rec := start(t)
	for i, c := range []struct{ code, want string }{
		{"6*7", "42"},
		{`"héllo"`, `"héllo"`},
		{"nil", "nil"},
		{"x = 5", "5"},
		{"def foo; 1; end", ":foo"},
		{":sym", ":sym"},
		{"{a: 1}", "{:a=>1}"},
		{"puts 'hi'", "nil"},
		{"_", "nil"},
		{"x + 1", "6"},
		{"_ * 2", "12"},
		{"[1, 2]\n", "[1, 2]"},
		{"'x' * 100", `"` + strings.Repeat("x", 100) + `"`},
		{"(1..30).to_a", "[1,\n 2,\n 3,\n 4,\n 5,\n 6,\n 7,\n 8,\n 9,\n 10,\n 11,\n 12,\n 13,\n 14,\n 15,\n 16,\n 17,\n 18,\n 19,\n 20,\n 21,\n 22,\n 23,\n 24,\n 25,\n 26,\n 27,\n 28,\n 29,\n 30]"},
	} {
		code := c.code
		if got := drivertest.MustValue(t, p, rec, i+1, code); got != c.want {
			t.Errorf("%q = %q, want %q", code, got, c.want)
		}
	}
	for i, code := range []string{"", "  \n", "# just a comment\n"} {
		r := drivertest.Run(t, p, rec, 100+i, code)
		if r.Status != "done" || r.Value != "" || r.ValueTotal != 0 {
			t.Errorf("cell %q: %+v, want no value", code, r)
		}
	}
	if out := rec.TakeOutput(); out != "hi\n" {
		t.Errorf("output = %q, want hi", out)
	}
}

// A value longer than the limit comes back as head and tail with its
// whole length.
func TestValueLimit(t *testing.T) {
	p, rec := startWith(t, options{valueLimit: 100})
	r := drivertest.Run(t, p, rec, 1, `"é" * 500 + "END"`)
	if r.ValueCut == nil || r.ValueTotal != 505 {
		t.Fatalf("result = %+v, want a cut value of 505 characters", r)
	}
	if !strings.HasPrefix(r.Value, `"ééé`) || !strings.HasSuffix(r.Value, `éEND"`) || !strings.Contains(r.Value, "405 characters cut") {
		t.Errorf("value = %q", r.Value)
	}
	if got := drivertest.MustValue(t, p, rec, 2, `"x" * 98`); got != `"`+strings.Repeat("x", 98)+`"` {
		t.Errorf("a value of exactly the limit = %q", got)
	}
}

// Everything a cell prints, from Ruby and from subprocesses, on stdout
// and stderr, arrives in order before the cell is reported done; multi-
// line definitions and locals persist to later cells.
func TestOutputAndPersistence(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, "print 'a'\n$stderr.print 'b'\nsystem('echo c')\nSTDOUT.write 'd'\n$stderr.puts 'e'\n`echo f >&2`\nprint 'g'")
	if r.Status != "done" || r.Value != "nil" {
		t.Fatalf("result = %+v", r)
	}
	if got := rec.TakeOutput(); got != "abc\nde\nf\ng" {
		t.Errorf("output = %q, want abc\\nde\\nf\\ng", got)
	}
	if last := rec.LastEvent(); last != "done" {
		t.Errorf("last event = %s, want done", last)
	}
	r = drivertest.Run(t, p, rec, 2, "class Greeter\n  def initialize(name)\n    @name = name\n  end\n\n  def greet\n    \"hi #{@name}\"\n  end\nend\n\ndef twice(s)\n  s * 2\nend\ng = Greeter.new('bob')\n")
	if r.Status != "done" {
		t.Fatalf("definitions: %+v", r.Error)
	}
	if got := drivertest.MustValue(t, p, rec, 3, "twice(g.greet)"); got != `"hi bobhi bob"` {
		t.Errorf("using definitions = %q", got)
	}
	// Long output crossing many pipe reads keeps its bytes exactly.
	r = drivertest.Run(t, p, rec, 4, "20000.times { |i| $stdout.write(\"#{i},\") }")
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
}

// Unicode in code, output and values round-trips exactly with no locale
// set, and a cell over 4 KB runs whole.
func TestUnicodeAndLongCell(t *testing.T) {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LANG=") && !strings.HasPrefix(kv, "LC_") {
			env = append(env, kv)
		}
	}
	p, rec := startWith(t, options{env: append(env, "LC_ALL=C")})
	const s = "héllo wörld ✓ 日本語 🎉"
	r := drivertest.Run(t, p, rec, 1, "s = \""+s+"\"\nputs s\nprint s.length, ' '\nprint s.encoding\ns")
	if r.Status != "done" || r.Value != `"`+s+`"` {
		t.Errorf("value = %q (%+v), want %q", r.Value, r.Error, `"`+s+`"`)
	}
	if got := rec.TakeOutput(); got != s+"\n19 UTF-8" {
		t.Errorf("output = %q", got)
	}
	if got := drivertest.MustValue(t, p, rec, 2, `"\u00e9\xff".b`); got != `"\xC3\xA9\xFF"` {
		t.Errorf("binary string = %q", got)
	}
	if got := drivertest.MustValue(t, p, rec, 3, "raise 'ünï' rescue $!.message"); got != `"ünï"` {
		t.Errorf("message = %q", got)
	}

	var code strings.Builder
	code.WriteString("total = 0\n")
	for i := 0; code.Len() < 5000; i++ {
		code.WriteString("total += " + strconv.Itoa(i) + " # ✓ adding a number to the total\n")
	}
	code.WriteString("total")
	r = drivertest.Run(t, p, rec, 4, code.String())
	n := strings.Count(code.String(), "total +=")
	if r.Status != "done" || r.Value != strconv.Itoa(n*(n-1)/2) {
		t.Errorf("5 KB cell: %+v, want %d", r, n*(n-1)/2)
	}
}

// Errors come back with Ruby's class, message and traceback, without the
// worker's frames, and the session goes on.
func TestErrors(t *testing.T) {
	p, rec := start(t)
	drivertest.Run(t, p, rec, 1, "def inner\n  raise ArgumentError, 'bad thing'\nend\ndef outer; inner; end\n")
	r := drivertest.Run(t, p, rec, 2, "x = 1\nouter")
	if r.Status != "error" || r.Error == nil {
		t.Fatalf("result = %+v", r)
	}
	e := r.Error
	wantTB := "(cell 1):2:in `inner': bad thing (ArgumentError)\n\tfrom (cell 1):4:in `outer'\n\tfrom (cell 2):2:in `<main>'\n"
	if e.Type != "ArgumentError" || e.Message != "bad thing" || e.Traceback != wantTB {
		t.Errorf("error = %+v\nwant traceback %q", e, wantTB)
	}
	if strings.Contains(e.Traceback, "worker") {
		t.Errorf("traceback shows the worker: %q", e.Traceback)
	}
	// A syntax error is an error too, reported without any frame.
	r = drivertest.Run(t, p, rec, 3, "1 +")
	if r.Status != "error" || r.Error.Type != "SyntaxError" || !strings.HasPrefix(r.Error.Traceback, "(cell 3):1: ") ||
		!strings.Contains(r.Error.Traceback, "(SyntaxError)") || strings.Contains(r.Error.Traceback, "worker") {
		t.Errorf("syntax error = %+v", r.Error)
	}
	// Causes are shown, and cleaned too.
	r = drivertest.Run(t, p, rec, 4, "begin\n  Integer('z')\nrescue => e\n  raise KeyError, 'wrapped'\nend")
	if r.Status != "error" || r.Error.Type != "KeyError" || !strings.Contains(r.Error.Traceback, "invalid value for Integer(): \"z\" (ArgumentError)") ||
		strings.Contains(r.Error.Traceback, "worker") {
		t.Errorf("chained error = %+v", r.Error)
	}
	// A namespaced class keeps its full name; NameError has irb's message.
	r = drivertest.Run(t, p, rec, 5, "module M; class Oops < StandardError; end; end\nraise M::Oops")
	if r.Status != "error" || r.Error.Type != "M::Oops" {
		t.Errorf("namespaced error = %+v", r.Error)
	}
	r = drivertest.Run(t, p, rec, 6, "undefined_thing")
	if r.Status != "error" || r.Error.Type != "NameError" || !strings.Contains(r.Error.Message, "undefined local variable or method `undefined_thing'") {
		t.Errorf("name error = %+v", r.Error)
	}
	// exit does not end the session.
	r = drivertest.Run(t, p, rec, 7, "exit")
	if r.Status != "done" || !strings.Contains(r.Note, "exit was caught") {
		t.Errorf("exit = %+v", r)
	}
	r = drivertest.Run(t, p, rec, 8, "abort 'giving up'")
	if r.Status != "error" || r.Error.Type != "SystemExit" || r.Error.Message != "giving up" || !strings.Contains(r.Note, "exit(1)") {
		t.Errorf("abort = %+v", r)
	}
	// Deep recursion is an error with a bounded traceback.
	r = drivertest.Run(t, p, rec, 9, "def down(n); down(n + 1); end\ndown(0)")
	if r.Status != "error" || r.Error.Type != "SystemStackError" || len(r.Error.Traceback) > 5000 {
		t.Errorf("stack overflow = %s, %d characters of traceback", r.Status, len(r.Error.Traceback))
	}
	if got := drivertest.MustValue(t, p, rec, 10, "x + 41"); got != "42" {
		t.Errorf("after the errors: %q", got)
	}
	if got := rec.TakeOutput(); got != "giving up\n" {
		t.Errorf("output = %q", got)
	}
}

// interrupt calls Interrupt the way the session does, a moment apart,
// until the cell ends.
func interrupt(t *testing.T, p driver.Process, rec *recorder, n int, code string) driver.Result {
	t.Helper()
	return drivertest.Interrupt(t, p, rec, n, code, 500*time.Millisecond)
}

// SIGINT stops a running cell, busy or sleeping or waiting on a
// subprocess, and the session keeps its names; between cells it is
// ignored.
func TestInterrupt(t *testing.T) {
	p, rec := start(t)
	drivertest.MustValue(t, p, rec, 1, "kept = 42")
	for i, code := range []string{
		"i = 0\nloop { i += 1 }",
		"sleep 30",
		"system('sleep 30')\nputs 'not reached'",
		"while true; end",
	} {
		r := interrupt(t, p, rec, 2+i, code)
		if r.Status != "interrupted" || r.Error == nil || r.Error.Type != "Interrupt" {
			t.Errorf("%q: %+v", code, r)
			continue
		}
		if !strings.HasPrefix(r.Error.Traceback, "(cell ") || strings.Contains(r.Error.Traceback, "worker") {
			t.Errorf("%q: traceback = %q", code, r.Error.Traceback)
		}
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("output = %q", out)
	}
	drivertest.IdleSignals(t, p)
	r := drivertest.Run(t, p, rec, 10, "kept")
	if r.Status != "done" || r.Value != "42" || !reflect.DeepEqual(r.Names, []string{"i", "kept"}) {
		t.Errorf("after interrupts: %+v", r)
	}
}

// names lists the user's locals, constants and methods, sorted, hiding
// underscore names; what a required library added (CSV, Date,
// Forwardable after require "csv") is not the user's.
func TestNames(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, "b = 1\na = 2\n_hidden = 3\nclass Zed; end\nTOP = 1\ndef helper; end\n")
	want := []string{"TOP", "Zed", "a", "b", "helper"}
	if r.Status != "done" || !reflect.DeepEqual(r.Names, want) {
		t.Errorf("names = %q, want %q (%+v)", r.Names, want, r.Error)
	}
	r = drivertest.Run(t, p, rec, 2, "Object.send(:remove_const, :Zed)\nObject.send(:remove_method, :helper)\nnil")
	if want := []string{"TOP", "a", "b"}; !reflect.DeepEqual(r.Names, want) {
		t.Errorf("names after removing = %q, want %q", r.Names, want)
	}
	r = drivertest.Run(t, p, rec, 3, "require \"csv\"\nrequire \"set\"\nrows = CSV.parse(\"a,b\\n1,2\\n\")\nPoint = Struct.new(:x)\nObject.const_set(:Made, 1)\nnil")
	if want := []string{"Made", "Point", "TOP", "a", "b", "rows"}; r.Status != "done" || !reflect.DeepEqual(r.Names, want) {
		t.Errorf("names after require \"csv\" = %q, want %q (%+v)", r.Names, want, r.Error)
	}
}

// The control channels do not leak into subprocesses, and a child forked
// by a cell does not answer for the session.
func TestChildren(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, "system(\"sh -c 'readlink /proc/$$/fd/3 /proc/$$/fd/4 2>/dev/null; echo end'\")")
	if r.Status != "done" {
		t.Fatalf("result = %+v", r)
	}
	if out := rec.TakeOutput(); out != "end\n" {
		t.Errorf("a subprocess sees fds 3 and 4: %q", out)
	}
	r = drivertest.Run(t, p, rec, 2, "pid = fork\nif pid then Process.wait(pid); :parent else :child end")
	if r.Status != "done" || r.Value != ":parent" {
		t.Fatalf("fork: %+v", r)
	}
	select {
	case extra := <-rec.Done:
		t.Fatalf("the forked child answered: %+v", extra)
	case <-time.After(200 * time.Millisecond):
	}
	if got := drivertest.MustValue(t, p, rec, 3, "1 + 1"); got != "2" {
		t.Errorf("after fork: %q", got)
	}
}

// BenchmarkCell measures one trivial cell through the worker protocol:
// the pipe round trip, framing and marker scan, without the daemon.
func BenchmarkCell(b *testing.B) {
	p, rec := start(b)
	drivertest.BenchCell(b, p, rec, "1+1")
}

// BenchmarkStart measures a session's start: ruby's boot and the
// worker's greeting.
func BenchmarkStart(b *testing.B) {
	dir := b.TempDir()
	drivertest.BenchStart(b, worker.Driver{R: Runtime}, driver.Spec{Exe: testRuby(b), Cwd: dir, Env: os.Environ(), Cookie: drivertest.Cookie("ruby"), RuntimeDir: dir, ValueLimit: 10000})
}
