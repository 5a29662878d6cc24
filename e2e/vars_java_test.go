package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// javaVars is the Java session's look, as varsCase says a worker's.
var javaVars = varsCase{
	runtime: "java", install: "openjdk-17-jdk-headless",
	// (jshell shows each declared value by its toString: slow gets its
	// object in a statement, which shows none)
	setup: `record Point(int x, int y) {}
int[] arr = {1, 2, 3};
Map<String, Object> cfg = new LinkedHashMap<>();
cfg.put("db", new TreeMap<>(Map.of("host", "h", "port", 5432)));
cfg.put("tags", List.of("x", "y"));
int add(int a, int b) { return a + b; }
Point pt = new Point(1, 2);
String s = "hello";
class Boom { public String toString() { throw new IllegalStateException("no toString"); } }
Boom boom = new Boom();
class Slow { public String toString() { try { Thread.sleep(5000); } catch (InterruptedException e) {} return "sl" + "ept"; } }
Slow slow;
if (true) slow = new Slow();`,
	names: []wantVar{
		{"arr", "int[]", "3 items", "[1, 2, 3]", ""},
		{"cfg", "Map<String, Object>", "2 keys", `{"db"={2 keys}, "tags"=[2 items]}`, ""},
		{"add", "method", "", "int add(int a, int b)", ""},
		{"pt", "Point", "2 components", "Point[x=1, y=2]", ""},
		{"Point", "record", "", "record Point(int x, int y)", ""},
		{"s", "String", "5 characters", `"hello"`, ""},
		{"boom", "Boom", "", "", "toString threw IllegalStateException: no toString"},
		{"slow", "Slow", "", "", "toString took over 0.2 s"},
	},
	path: `cfg["db"]`, members: []string{`"host"`, `"port"`},
	badPath: "dfx", badWords: "cannot find symbol: variable dfx",
	running: `System.out.println("run-mark"); Thread.sleep(30000);`,
}

// TestVarsJava: a Java session answers polyrepl vars with JShell's own
// variables, methods and types, sorted, from their structure — an array's
// items, a nested map's keys, a record's components, a method's header —
// calls an object's toString only within its time (its exception and
// its time said in note), goes into what a path names (cfg["db"], a
// field, an item), says in Java's words that a path names nothing, lists
// the imports and $N with --all, and while a cell runs answers from the
// look taken when the last cell ended, with its number. No look is in the
// record, prints into the output, or makes a snippet: the next $N follows
// the last cell's.
func TestVarsJava(t *testing.T) {
	t.Parallel()
	c := javaVars
	e := newEnv(t)
	needRuntime(t, e, c.runtime, c.install)
	name := "vjava"
	r := e.runJSON("exec", name, c.setup, "--runtime", c.runtime)
	if r.Status != "done" {
		t.Fatalf("setup: %+v", r)
	}
	before := e.runJSON("exec", name, "6 * 7")
	start := time.Now()
	look := e.look(name)
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("the look took %s", d)
	}
	if look.Look != api.LookLive || look.Total != len(look.Vars) || look.Total < len(c.names) || look.Runtime != "java" {
		t.Errorf("look %s of %s, %d lines of %d", look.Look, look.Runtime, len(look.Vars), look.Total)
	}
	got := map[string]api.Var{}
	for i, v := range look.Vars {
		got[v.Name] = v
		if i > 0 && look.Vars[i-1].Name >= v.Name {
			t.Errorf("not sorted by name: %s before %s", look.Vars[i-1].Name, v.Name)
		}
		if strings.HasPrefix(v.Name, "$") {
			t.Errorf("a temporary among the session's own names: %+v", v)
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

	for path, want := range map[string][]string{
		c.path:           c.members,
		"pt":             {"x", "y"},
		`cfg["tags"]`:    {"[0]", "[1]"},
		`cfg["db"].size`: nil,
		"arr":            {"[0]", "[1]", "[2]"},
	} {
		if want == nil {
			_, stderr := e.must(2, "vars", name, path)
			wantContains(t, "a field a map does not open", stderr, "java.base does not open")
			continue
		}
		inner := e.look(name, path)
		var members []string
		for _, v := range inner.Vars {
			members = append(members, v.Name)
		}
		if fmt.Sprint(members) != fmt.Sprint(want) {
			t.Errorf("vars %s %s: %v, want %v", name, path, members, want)
		}
	}
	_, stderr := e.must(2, "vars", name, c.badPath)
	wantContains(t, "a path naming nothing", stderr, c.badWords)
	_, stderr = e.must(2, "vars", name, "arr.clone()")
	wantContains(t, "a call in a path", stderr, `cannot read the path "arr.clone()"`)

	all := e.look(name, "--all")
	var allNames []string
	for _, v := range all.Vars {
		allNames = append(allNames, v.Name)
	}
	if all.Total <= look.Total || !all.All {
		t.Errorf("--all: %d names, without: %d", all.Total, look.Total)
	}
	wantContains(t, "--all", strings.Join(allNames, " "), "java.util.*", "$")
	people, _ := e.must(0, "vars", name)
	wantContains(t, "vars for people", people, c.names[0].name, c.names[0].typ)

	// No snippet was made: the next temporary follows 6 * 7's.
	after := e.runJSON("exec", name, "7 * 6")
	if n, m := temp(before), temp(after); n == 0 || m != n+1 {
		t.Errorf("6 * 7 showed %v, 7 * 6 after the looks %v: a look made a snippet", before.raw["display"], after.raw["display"])
	}

	// While a cell runs: the look taken as cell 3 ended.
	e.must(124, "exec", name, c.running, "-t", "0.5")
	during := e.look(name)
	if during.Look != api.LookLast || during.Cell != 3 || during.Total != look.Total {
		t.Errorf("during cell 4: look %q after cell %d, %d names; want last after 3, %d", during.Look, during.Cell, during.Total, look.Total)
	}
	e.must(0, "interrupt", name)
	if !waitFor(20*time.Second, func() bool { return e.session(name).State == "idle" }) {
		t.Fatalf("the running cell did not end: %+v", e.session(name))
	}

	hist, _ := e.must(0, "history", name, "--json")
	wantLacks(t, "the record after the looks", hist, `"cell":5`)
	out, _ := e.must(0, "log", name)
	wantLacks(t, "the output after the looks", out, "slept")
	if again := e.look(name); again.Total != look.Total {
		t.Errorf("%d names after the looks and the cells, %d before", again.Total, look.Total)
	}
}

// temp is the number of the $N a jshell cell's value is, as shown
// ("$12 ==> 42"), or 0.
func temp(r cellResult) int {
	shown, _ := r.raw["display"].(string)
	name, _, _ := strings.Cut(strings.TrimPrefix(shown, "$"), " ==> ")
	n, _ := strconv.Atoi(name)
	return n
}
