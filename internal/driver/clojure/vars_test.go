package clojure

import (
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// varLines is a look's lines as "name:type:size:preview", one a line.
func varLines(vars []api.Var) string {
	var out []string
	for _, v := range vars {
		out = append(out, v.Name+":"+v.Type+":"+v.Size+":"+v.Preview)
	}
	return strings.Join(out, "\n")
}

func TestParsePath(t *testing.T) {
	for path, want := range map[string]string{
		"":                     "",
		"cfg":                  "cfg",
		`cfg[:db]["host"][0]`:  `cfg :db "host" 0`,
		`my.ns/x[:a/b]`:        `my.ns/x :a/b`,
		`s["q\"\n"]`:           `s "q\"\n"`,
		"cfg.db":               "cfg.db", // a symbol may hold dots
		"cfg[db]":              "error",
		"(launch)":             "error",
		"x[:a](f)":             "error",
		`x[#=(System/exit 0)]`: "error",
		"1x":                   "error",
	} {
		root, steps, err := parsePath(path)
		got := strings.TrimSpace(root + " " + strings.Join(steps, " "))
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("parsePath(%q) = %q (%v), want %q", path, got, err, want)
		}
	}
}

func TestParseVars(t *testing.T) {
	l, err := parseVars("total\t3\nx\tLong\t\t0\t1\ncfg\tPersistentArrayMap\t2 keys\t1\t{:db {:host \"h\"}}\n", driver.VarsQuery{})
	if want := "cfg:PersistentArrayMap:2 keys:{:db {:host \"h\"}}\nx:Long::1"; err != nil || varLines(l.Vars) != want || l.Total != 3 || !l.Vars[0].Members {
		t.Errorf("%v %d\n%s", err, l.Total, varLines(l.Vars))
	}
	if _, err := parseVars("polyrepl_error\tUnable to resolve symbol: dfx in this context\n", driver.VarsQuery{Path: "dfx"}); err == nil || !strings.Contains(err.Error(), "dfx") {
		t.Errorf("bad path: %v", err)
	}
}

// FuzzParseVars: whatever the REPL prints, the look is read without a
// panic, and its total is never below its lines.
func FuzzParseVars(f *testing.F) {
	f.Add("total\t1\nx\tLong\t\t0\t1\n", "")
	f.Add("polyrepl_error\tno\n", "x")
	f.Fuzz(func(t *testing.T, out, path string) {
		l, err := parseVars(out, driver.VarsQuery{Path: path})
		if err == nil && l.Total < len(l.Vars) {
			t.Errorf("total %d below %d lines", l.Total, len(l.Vars))
		}
		if _, steps, err := parsePath(path); err == nil {
			for _, s := range steps {
				if strings.ContainsAny(s, "()#") && !strings.HasPrefix(s, `"`) {
					t.Errorf("path %q gave step %q", path, s)
				}
			}
		}
	})
}

// A live Clojure: the look lists the namespace's vars from their values'
// structure (a map's keys and first entries, a vector's items, a
// function's arglists), realises no lazy seq and calls no toString of a
// user's type, goes into maps and vectors, says a name that is not there
// in Clojure's words, and leaves *1 and the output as they were; a cell
// carries the same look.
func TestVars(t *testing.T) {
	exe := drivertest.Exe(t, "POLYREPL_TEST_CLOJURE", "clojure", "Clojure (Debian: apt-get install clojure)")
	p, rec := drivertest.StartExe(t, terminal.Driver{P: Profile}, exe)
	r := drivertest.Run(t, p, rec, 1, `(def cfg {:db {:host "h" :port 5432} :tags ["x" "y"]})
(defn add [a b] (+ a b))
(def lazy (map (fn [i] (println "REALISED") i) (range)))
(deftype Boom [] Object (toString [_] (throw (Exception. "no toString"))))
(def boom (Boom.))
(def s "hello")
42`)
	want := `->Boom:function::([])
add:function::([a b])
boom:Boom::#<Boom>
cfg:PersistentArrayMap:2 keys:{:db {:host "h", :port 5432}, :tags ["x" "y"]}
lazy:LazySeq::#<LazySeq>
s:String:5 characters:"hello"`
	if r.Status != "done" || r.Vars == nil || varLines(r.Vars.Vars) != want {
		t.Fatalf("%+v\n%s", r, varLines(r.Vars.Vars))
	}
	if strings.Join(r.Names, " ") != "->Boom add boom cfg lazy s" {
		t.Errorf("names %v", r.Names)
	}
	rec.TakeOutput()
	in := p.(driver.Inspector)
	l, err := in.Vars(driver.VarsQuery{}, 20*time.Second)
	if err != nil || varLines(l.Vars) != want {
		t.Errorf("look: %v\n%s", err, varLines(l.Vars))
	}
	for path, want := range map[string]string{
		"cfg[:db]":             ":host:String:1 character:\"h\"\n:port:Long::5432",
		"cfg[:tags]":           "[0]:String:1 character:\"x\"\n[1]:String:1 character:\"y\"",
		"user/cfg[:db][:port]": "",
	} {
		l, err := in.Vars(driver.VarsQuery{Path: path}, 20*time.Second)
		if want == "" {
			if err == nil || !strings.Contains(err.Error(), "is a Long") {
				t.Errorf("%s: %v", path, err)
			}
			continue
		}
		if err != nil || varLines(l.Vars) != want {
			t.Errorf("%s: %v\n%s\nwant\n%s", path, err, varLines(l.Vars), want)
		}
	}
	for path, want := range map[string]string{"dfx": "Unable to resolve symbol: dfx in this context", "cfg[:nope]": "cfg has no key :nope", "cfg[:tags][5]": "index 5 is out of bounds"} {
		if _, err := in.Vars(driver.VarsQuery{Path: path}, 20*time.Second); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	if all, err := in.Vars(driver.VarsQuery{All: true}, 20*time.Second); err != nil || all.Total < 500 || len(all.Vars) != api.VarsLimit {
		t.Errorf("all: %d, %d lines (%v)", all.Total, len(all.Vars), err)
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("the looks printed %q", out)
	}
	if r := drivertest.Run(t, p, rec, 2, "*1"); r.Value != "42" {
		t.Errorf("*1 after the looks: %q", r.Value)
	}
}
