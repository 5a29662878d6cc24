package java

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

// A look lists JShell's variables (not its $N), methods and types, sorted,
// each from its structure — a record's components, an array's items, a
// java.util map's keys — read from the variable's field, never by its
// toString; calls an unknown class's toString only in a look between
// cells, within 0.2 s and with its output dropped (its exception or time
// in note); goes into what a path names (a.b, a[0], m["k"]) without
// evaluating it; creates no snippet (the next $N and /vars are as
// before); prints nothing; and a cell's result carries the same look, with
// no toString.
func TestVars(t *testing.T) {
	exe := drivertest.Exe(t, "POLYREPL_TEST_JAVA", "java", "a JDK (Debian: apt-get install openjdk-17-jdk-headless)")
	p, rec := drivertest.StartExe(t, worker.Driver{R: Runtime}, exe)
	r := drivertest.Run(t, p, rec, 1, `record Point(int x, int y) {}
class Boom { int a = 1; public String toString() { throw new IllegalStateException("no toString"); } }
class Slow { public String toString() { try { Thread.sleep(5000); } catch (InterruptedException e) {} return "slept"; } }
class Talk { String w = "hi"; public String toString() { System.out.println("RAN"); return "talk"; } }
class Plain { int n = 3; List<String> tags = List.of("a"); }
class Sized extends AbstractList<Integer> { public int size() { System.out.println("SIZED"); return 2; } public Integer get(int i) { return i; } }
int twice(int x) { return 2 * x; }
int twice(int x, int y) { return x * y; }
Point pt = new Point(1, 2);
int[] arr = {1, 2, 3};
String s = "hello";
Map<String, Object> cfg = new LinkedHashMap<>();
cfg.put("db", new TreeMap<>(Map.of("host", "h", "port", 5432)));
cfg.put("tags", new ArrayList<>(List.of("x", "y")));
Boom boom = new Boom();
Slow slow;
if (true) slow = new Slow(); // (jshell shows a declared value by its toString)
Talk talk = new Talk();
Plain plain = new Plain();
Sized sized = new Sized();
Runnable run = () -> {};
long big = 1L << 40;
6 * 7`)
	if r.Status != "done" || r.Vars == nil {
		t.Fatalf("%+v %+v", r, r.Error)
	}
	want := "Boom:class: Plain:class: Point:record: Sized:class: Slow:class: Talk:class: arr:int[]:3 items big:long: " +
		"boom:Boom: cfg:Map<String, Object>:2 keys plain:Plain: pt:Point:2 components run:Runnable: s:String:5 characters " +
		"sized:Sized: slow:Slow: talk:Talk: twice:method:2 overloads"
	if got := drivertest.VarLines(r.Vars.Vars); got != want {
		t.Errorf("the cell's look:\n%s\nwant\n%s", got, want)
	}
	for _, v := range r.Vars.Vars {
		if v.Note != "" || v.Name == "sized" && v.Size != "" {
			t.Errorf("the cell's look called the object's code: %+v", v)
		}
	}
	if len(r.Names) != 18 || r.Names[0] != "Boom" || r.ValueName == "" {
		t.Errorf("names %v, value %s", r.Names, r.ValueName)
	}
	temp := r.ValueName // $N of 6 * 7
	rec.TakeOutput()    // the cell's (jshell shows talk's and sized's values)
	in := p.(driver.Inspector)
	// Live, the unknown list's own size is asked (within the time).
	want = strings.Replace(want, "sized:Sized:", "sized:Sized:2 items", 1)
	var look driver.Look
	for try := 1; ; try++ {
		start := time.Now()
		var err error
		look, err = in.Vars(driver.VarsQuery{}, 20*time.Second)
		if err != nil || drivertest.VarLines(look.Vars) != want || look.Total != 18 {
			t.Fatalf("look: %s (%d), %v", drivertest.VarLines(look.Vars), look.Total, err)
		}
		if d := time.Since(start); d > 4*time.Second {
			t.Errorf("the look took %s: the slow toString was not cut", d)
		}
		// On a loaded machine the look's second for previews can run
		// out before the last ones (said in their notes, as it should
		// be): the JVM is warm for the next look.
		ranOut := slices.ContainsFunc(look.Vars, func(v api.Var) bool { return strings.Contains(v.Note, "ran out") })
		if !ranOut || try == 3 {
			break
		}
		t.Logf("look %d: the time for previews ran out; looking again", try)
	}
	got := map[string]api.Var{}
	for _, v := range look.Vars {
		got[v.Name] = v
	}
	for _, tc := range []struct{ name, size, preview, note string }{
		{"pt", "2 components", "Point[x=1, y=2]", ""},
		{"arr", "3 items", "[1, 2, 3]", ""},
		{"cfg", "2 keys", `{"db"={2 keys}, "tags"=[2 items]}`, ""},
		{"s", "5 characters", `"hello"`, ""},
		{"big", "", "1099511627776", ""},
		{"twice", "2 overloads", "int twice(int x)", ""},
		{"Point", "", "record Point(int x, int y)", ""},
		{"run", "", "lambda", ""},
		{"plain", "", `n=3, tags=[1 item]`, ""},
		{"boom", "", "a=1", "toString threw IllegalStateException: no toString"},
		{"slow", "", "", "toString took over 0.2 s"},
		{"talk", "", "talk", ""},
		{"sized", "2 items", "[0, 1]", ""},
	} {
		if v := got[tc.name]; v.Size != tc.size || v.Preview != tc.preview || v.Note != tc.note {
			t.Errorf("%s: %+v, want %+v", tc.name, v, tc)
		}
	}
	if v := got["arr"]; v.Memory != 32 || !v.Members {
		t.Errorf("arr: %+v, want 32 bytes and members", v)
	}
	for _, tc := range []struct{ path, want string }{
		{"pt", "x:int: y:int:"},
		{"arr", "[0]:int: [1]:int: [2]:int:"},
		{"cfg", `"db":TreeMap:2 keys "tags":ArrayList:2 items`},
		{`cfg["db"]`, `"host":String:1 character "port":Integer:`},
		{`cfg["tags"]`, `[0]:String:1 character [1]:String:1 character`},
		{`cfg["tags"][1]`, ``},
		{"boom", "a:int:"},
		{"plain", "n:int: tags:List:1 item"},
		{"plain.tags", "[0]:String:1 character"},
	} {
		look, err := in.Vars(driver.VarsQuery{Path: tc.path}, 20*time.Second)
		if tc.want == "" {
			if err == nil || !strings.Contains(err.Error(), "it has no members") {
				t.Errorf("%s: %v", tc.path, err)
			}
			continue
		}
		if err != nil || drivertest.VarLines(look.Vars) != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.path, drivertest.VarLines(look.Vars), err, tc.want)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"nope", "cannot find symbol: variable nope"},
		{`cfg["zz"]`, `key not found in cfg: "zz"`},
		{"arr[9]", "Index 9 out of bounds for length 3"},
		{"pt.z", "cannot find symbol: variable z, location: pt of type Point"},
		{"s[0]", "array required, but String found"},
		{"arr.clone()", `cannot read the path "arr.clone()"`},
		{"cfg.table", "cfg.table is a field of java.util.HashMap, which java.base does not open"},
	} {
		_, err := in.Vars(driver.VarsQuery{Path: tc.path}, 20*time.Second)
		var pe *driver.PathError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &pe) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
	all, err := in.Vars(driver.VarsQuery{All: true}, 20*time.Second)
	names := []string{}
	for _, v := range all.Vars {
		names = append(names, v.Name)
	}
	if err != nil || all.Total < look.Total+11 || !slices.Contains(names, "java.util.*") || !slices.Contains(names, temp) {
		t.Errorf("all: %s (%d), %v; want the 10 imports and %s more", drivertest.VarLines(all.Vars), all.Total, err, temp)
	}
	time.Sleep(500 * time.Millisecond) // the slow toString's thread, had it printed
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("a look printed %q", out)
	}
	// No snippet was made: the next temporary follows 6 * 7's, and
	// JShell's variables are the cell's 11 and that $N.
	r = drivertest.Run(t, p, rec, 2, "1 + 1")
	n, _ := strconv.Atoi(strings.TrimPrefix(temp, "$"))
	if want := "$" + strconv.Itoa(n+1); r.ValueName != want {
		t.Errorf("after the looks the value is %s, want %s", r.ValueName, want)
	}
	if r.Vars == nil || r.Vars.Total != 18 {
		t.Errorf("after the looks: %+v", r.Vars)
	}
	// JShell's variables (/vars) are those before and the new $N.
	if again, err := in.Vars(driver.VarsQuery{All: true}, 20*time.Second); err != nil || again.Total != all.Total+1 {
		t.Errorf("all after a cell: %d names, %v; before it %d", again.Total, err, all.Total)
	}
}

// The toString calls of one look take at most about a second in all:
// past that, the objects left get none, and their note says why. What a
// toString prints goes nowhere, even from a thread left running after its
// time (Java 20 and later cannot stop it).
func TestVarsBudget(t *testing.T) {
	exe := drivertest.Exe(t, "POLYREPL_TEST_JAVA", "java", "a JDK (Debian: apt-get install openjdk-17-jdk-headless)")
	p, rec := drivertest.StartExe(t, worker.Driver{R: Runtime}, exe)
	var b strings.Builder
	// (jshell shows each declared value: the toString is slow only after)
	b.WriteString(`class Slow { static boolean now; public String toString() { while (now) { System.out.print("X");
  System.err.print("Y"); try { Thread.sleep(10); } catch (InterruptedException e) {} } return "fast"; } }` + "\n")
	for i := 1; i <= 12; i++ {
		b.WriteString("Slow s" + strconv.Itoa(100 + i)[1:] + " = new Slow();\n")
	}
	b.WriteString("Slow.now = true;")
	if r := drivertest.Run(t, p, rec, 1, b.String()); r.Status != "done" {
		t.Fatalf("%+v", r)
	}
	rec.TakeOutput()
	start := time.Now()
	look, err := p.(driver.Inspector).Vars(driver.VarsQuery{}, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("the look took %s", d)
	}
	took, out := 0, 0
	for _, v := range look.Vars {
		switch {
		case v.Note == "toString took over 0.2 s":
			took++
		case strings.HasPrefix(v.Note, "the look's time for previews (1.0 s) ran out"):
			out++
		}
	}
	if took < 2 || took > 6 || took+out != 12 {
		t.Errorf("%d toString calls cut at 0.2 s, %d left without: %+v", took, out, look.Vars)
	}
	time.Sleep(300 * time.Millisecond)
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("the look's toString printed %q", out)
	}
	if r := drivertest.Run(t, p, rec, 20, `System.out.println("still here")`); r.Status != "done" || !strings.Contains(rec.TakeOutput(), "still here") {
		t.Errorf("after the look: %+v", r)
	}
}
