package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// wantVar is what one line of a look must say: its type, and text its
// size and preview contain ("" for any).
type wantVar struct {
	name, typ, size, preview, note string
}

// varsCase is one worker runtime's look, as a user checks it.
type varsCase struct {
	runtime, install string
	// setup defines the session's names: a frame (or the runtime's
	// table), an array, a nested map or list, a function, an object
	// whose display raises and one whose display sleeps.
	setup string
	names []wantVar
	// path names a nested container; members are the names of its lines.
	path    string
	members []string
	// badPath names nothing; its error says so in the runtime's words.
	badPath, badWords string
	// running is a cell that runs for a while, printing mark first.
	running string
}

var varsCases = []varsCase{
	{
		runtime: "r", install: "r-base-core",
		setup: `df <- data.frame(a = 1:150, b = letters[(0:149 %% 26) + 1])
m <- matrix(1:12, 3); cfg <- list(db = list(host = "h", port = 5432), tags = c("x", "y"))
f <- function(x, y = 2) x + y
boom <- structure(list(), class = "boom"); print.boom <- function(x, ...) stop("no printing")
slow <- structure(list(), class = "slow"); print.slow <- function(x, ...) Sys.sleep(5)`,
		names: []wantVar{
			{"df", "data.frame", "150×2", "a int, b chr", ""},
			{"m", "matrix", "3×4", "integer 1 2 3", ""},
			{"cfg", "list", "2 items", "db: list, tags: chr", ""},
			{"f", "function", "", "function(x, y = 2)", ""},
			{"boom", "boom", "", "", "print raised: no printing"},
			{"slow", "slow", "", "", "print took over 0.2 s"},
		},
		path: `cfg$db`, members: []string{"host", "port"},
		badPath: "dfx", badWords: "object 'dfx' not found",
		running: `cat("run-mark\n"); Sys.sleep(30)`,
	},
	{
		runtime: "node", install: "nodejs",
		setup: `const rows = [{a: 1, b: 'x'}, {a: 2, b: 'y'}]; const buf = Buffer.from('abcd');
const cfg = {db: {host: 'h', port: 5432}, tags: ['x', 'y']}; function add(a, b) { return a + b }
const boom = { get bad() { throw new Error('no') }, toString() { throw new Error('no') } };
const slow = { get bad() { for (;;) {} } }; let m = new Map([['k', 1]]);`,
		names: []wantVar{
			{"rows", "Array", "2 items", "[Object, Object]", ""},
			{"buf", "Buffer", "4 bytes", "97, 98, 99, 100", ""},
			{"cfg", "Object", "2 keys", "{db: Object, tags: Array(2)}", ""},
			{"add", "function", "", "function add(a, b)", ""},
			{"boom", "Object", "2 keys", "{bad: [Getter], toString: [Function toString]}", ""},
			{"slow", "Object", "1 key", "{bad: [Getter]}", ""},
			{"m", "Map", "1 key", `"k" => 1`, ""},
		},
		path: `cfg["db"]`, members: []string{"host", "port"},
		badPath: "dfx", badWords: "dfx is not defined",
		running: `console.log('run-mark'); await new Promise((r) => setTimeout(r, 30000))`,
	},
	{
		runtime: "ruby", install: "ruby",
		setup: `rows = [{a: 1}, {a: 2}]; cfg = {"db" => {host: "h", port: 5432}, "tags" => %w[x y]}
def add(a, b = 2) a + b end; s = "hello"
class Boom; def inspect; raise "no inspect"; end; end; boom = Boom.new
class Slow; def inspect; sleep 5; end; end; slow = Slow.new; nil`,
		names: []wantVar{
			{"rows", "Array", "2 items", "[{1 key}, {1 key}]", ""},
			{"cfg", "Hash", "2 keys", `{"db" => {2 keys}, "tags" => [2 items]}`, ""},
			{"add", "method", "", "def add(a, b = …)", ""},
			{"s", "String", "5 characters", `"hello"`, ""},
			{"boom", "Boom", "", "", "inspect raised RuntimeError: no inspect"},
			{"slow", "Slow", "", "", "inspect took over 0.2 s"},
		},
		path: `cfg["db"]`, members: []string{":host", ":port"},
		badPath: "dfx", badWords: "undefined local variable or method `dfx'",
		running: `puts "run-mark"; sleep 30`,
	},
	{
		runtime: "bash", install: "bash",
		setup: `declare -A cfg=([host]=h [port]=5432); arr=(one "two three" four); x=hello; declare -i n=42
f() { echo hi; echo there; }`,
		names: []wantVar{
			{"cfg", "associative array", "2 keys", "[host]=h", ""},
			{"arr", "array", "3 items", `(one "two three" four)`, ""},
			{"x", "string", "5 characters", `"hello"`, ""},
			{"n", "integer", "", "42", ""},
			{"f", "function", "5 lines", "echo hi; …", ""},
		},
		path: "arr", members: []string{"[0]", "[1]", "[2]"},
		badPath: "dfx", badWords: "dfx: no such variable",
		running: `echo run-mark; sleep 30`,
	},
}

// lookBeyond checks what every family's look does past its names: the
// members of what path names, a path naming nothing refused in the
// runtime's words, --all listing more than look, and the words for
// people naming the first name and its type.
func (e *env) lookBeyond(name, path string, members []string, badPath, badWords string, look api.VarsReply, first wantVar) {
	t := e.t
	t.Helper()
	inner := e.look(name, path)
	var got []string
	for _, v := range inner.Vars {
		got = append(got, v.Name)
	}
	if fmt.Sprint(got) != fmt.Sprint(members) || inner.Path != path {
		t.Errorf("%s: vars %s: %v (path %q), want %v", name, path, got, inner.Path, members)
	}
	_, stderr := e.must(2, "vars", name, badPath)
	wantContains(t, name+": a path naming nothing", stderr, badWords)
	all := e.look(name, "--all")
	if all.Total <= look.Total || !all.All {
		t.Errorf("%s: --all: %d names, without: %d", name, all.Total, look.Total)
	}
	people, _ := e.must(0, "vars", name)
	wantContains(t, name+": vars for people", people, first.name, first.typ)
}

// look runs polyrepl vars with args and reads its JSON.
func (e *env) look(args ...string) api.VarsReply {
	e.t.Helper()
	out, _ := e.must(0, append([]string{"vars"}, append(args, "--json")...)...)
	var r api.VarsReply
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		e.t.Fatalf("vars %v: %v\n%s", args, err, out)
	}
	return r
}

// TestVarsWorkers: each worker runtime (R, Node, Ruby, bash) answers
// polyrepl vars with its session's own names from their structure —
// a frame's shape and columns, an array's length, a nested map's keys, a
// function's arguments — calls an object's own display only within its
// time (its error and its time said in note; Node and bash call none),
// goes into what a path names, says in the runtime's words that a path
// names nothing, lists more with --all, and while a cell runs answers
// from the look taken when the last cell ended, with its number. No look
// is in the record, prints into the output or changes a name.
func TestVarsWorkers(t *testing.T) {
	t.Parallel()
	for _, c := range varsCases {
		t.Run(c.runtime, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			needRuntime(t, e, c.runtime, c.install)
			name := "v" + c.runtime
			r := e.runJSON("exec", name, c.setup, "--runtime", c.runtime)
			if r.Status != "done" {
				t.Fatalf("setup: %+v", r)
			}
			start := time.Now()
			look := e.look(name)
			if d := time.Since(start); d > 8*time.Second {
				t.Errorf("the look took %s", d)
			}
			if look.Look != api.LookLive || look.Total != len(look.Vars) || look.Total < len(c.names) {
				t.Errorf("look %s, %d lines of %d", look.Look, len(look.Vars), look.Total)
			}
			got := map[string]api.Var{}
			for i, v := range look.Vars {
				got[v.Name] = v
				if i > 0 && look.Vars[i-1].Name >= v.Name {
					t.Errorf("not sorted by name: %s before %s", look.Vars[i-1].Name, v.Name)
				}
			}
			for _, w := range c.names {
				v, ok := got[w.name]
				if !ok {
					t.Errorf("no line for %s in %+v", w.name, look.Vars)
					continue
				}
				if v.Type != w.typ || !strings.Contains(v.Size, w.size) || !strings.Contains(v.Preview, w.preview) || v.Note != w.note {
					t.Errorf("%s: %+v, want type %q, size %q, preview %q, note %q", w.name, v, w.typ, w.size, w.preview, w.note)
				}
			}

			e.lookBeyond(name, c.path, c.members, c.badPath, c.badWords, look, c.names[0])

			// While a cell runs: the look taken as cell 1 ended.
			e.must(124, "exec", name, c.running, "-t", "0.5")
			during := e.look(name)
			if during.Look != api.LookLast || during.Cell != 1 || during.Total != look.Total {
				t.Errorf("during cell 2: look %q after cell %d, %d names; want last after 1, %d", during.Look, during.Cell, during.Total, look.Total)
			}
			e.must(0, "interrupt", name)
			if !waitFor(20*time.Second, func() bool { return e.session(name).State == "idle" }) {
				t.Fatalf("the running cell did not end: %+v", e.session(name))
			}

			hist, _ := e.must(0, "history", name, "--json")
			wantLacks(t, "the record after the looks", hist, `"cell":3`)
			out, _ := e.must(0, "log", name)
			wantLacks(t, "the output after the looks", out, "slept", "RAN")
			after := e.look(name)
			if after.Total != look.Total {
				t.Errorf("%d names after the looks and the cells, %d before", after.Total, look.Total)
			}
		})
	}
}
