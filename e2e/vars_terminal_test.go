package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// termVarsCase is one terminal runtime's look, as a user checks it.
type termVarsCase struct {
	runtime, install string
	// setup defines the session's names and ends with a value the
	// REPL keeps (GHCi's it, Octave's ans, Clojure's *1).
	setup string
	names []wantVar
	// path looks inside one name; members are the names of its lines.
	path    string
	members []string
	// badPath names nothing; its error says so in the runtime's words.
	badPath, badWords string
	// check is a cell run after the looks, whose output and value show
	// that they changed nothing (it, ans, *1, GPVAL_ERRNO, a variable).
	check, checkSays string
	// running is a cell that runs for a while, printing run-mark first.
	running string
}

var termVarsCases = []termVarsCase{
	{
		runtime: "ghci", install: "ghc",
		setup: "x = 1 :: Int\nxs = [1..10] :: [Integer]\nys = [1,2,3] :: [Int]\nlength ys\nf a = a + 1\ndata T = A | B Int deriving Show\n6 * 7",
		names: []wantVar{
			{"x", "Int", "", "1", ""},
			{"xs", "[Integer]", "", "", "not evaluated (a look never forces it)"},
			{"ys", "[Int]", "3 items", "[1,2,3]", ""},
			{"f", "Num a => a -> a", "", "", ""},
			{"T", "data", "", "", ""},
		},
		path: "ys", members: []string{"ys"},
		badPath: "dfx", badWords: "Variable not in scope: dfx",
		check: ":sprint xs\nit", checkSays: "xs = _\n42\n",
		running: "putStrLn \"run-mark\" >> Control.Concurrent.threadDelay 30000000",
	},
	{
		runtime: "octave", install: "octave",
		setup: "A = reshape(1:12, 3, 4); s = 'hello'; cfg.db.host = 'h'; cfg.db.port = 5432; c = {1, 'two', [3 4]}; f = @(t) t.^2; 6*7",
		names: []wantVar{
			{"A", "double", "3x4", "1 2 3 4 5 6 7 8 …", ""},
			{"s", "char", "1x5", `"hello"`, ""},
			{"cfg", "struct", "1x1", "db", ""},
			{"c", "cell", "1x3", "{double, char, double}", ""},
			{"f", "function_handle", "1x1", "@(t) t .^ 2", ""},
		},
		path: "cfg.db", members: []string{"host", "port"},
		badPath: "dfx", badWords: "'dfx' undefined",
		check: "ans", checkSays: "ans = 42\n",
		running: `disp("run-mark"); pause(30)`,
	},
	{
		runtime: "clojure", install: "clojure",
		setup: `(def cfg {:db {:host "h" :port 5432} :tags ["x" "y"]})
(defn add [a b] (+ a b))
(def lazy (map (fn [i] (println "REALISED") i) (range)))
(def s "hello")
42`,
		names: []wantVar{
			{"cfg", "PersistentArrayMap", "2 keys", `{:db {:host "h", :port 5432}, :tags ["x" "y"]}`, ""},
			{"add", "function", "", "([a b])", ""},
			{"lazy", "LazySeq", "", "#<LazySeq>", ""},
			{"s", "String", "5 characters", `"hello"`, ""},
		},
		path: "cfg[:db]", members: []string{":host", ":port"},
		badPath: "dfx", badWords: "Unable to resolve symbol: dfx in this context",
		check: "*1", checkSays: "42",
		running: `(println "run-mark") (Thread/sleep 30000)`,
	},
	{
		runtime: "gnuplot", install: "gnuplot-nox",
		setup: "x = 1\ns = \"hello\"\narray A[3]\nA[1] = 2.5\nA[2] = \"two\"\nf(t) = t**2",
		names: []wantVar{
			{"x", "integer", "", "1", ""},
			{"s", "string", "5 characters", `"hello"`, ""},
			{"A", "array", "3 items", "", ""},
			{"f", "function", "", "f(t) = t**2", ""},
		},
		path: "A", members: []string{"[1]", "[2]", "[3]"},
		badPath: "dfx", badWords: "undefined variable: dfx",
		check: "print GPVAL_ERRNO", checkSays: "0\n",
		running: "print \"run-mark\"\npause 30",
	},
	{
		runtime: "sh", install: "dash",
		setup: "x=hello; y='two\nlines'; export E=1",
		names: []wantVar{
			{"x", "string", "5 characters", `"hello"`, ""},
			{"y", "string", "9 characters, 2 lines", `"two\nlines"`, ""},
			{"E", "string, exported", "1 character", `"1"`, ""},
		},
		path: "y", members: []string{"1", "2"},
		badPath: "dfx", badWords: "dfx: parameter not set",
		check: "echo $x", checkSays: "hello\n",
		running: "echo run-mark; sleep 30",
	},
}

// TestVarsTerminal: each terminal runtime (GHCi, Octave, Clojure,
// gnuplot, sh) answers polyrepl vars through what its REPL offers —
// GHCi's :show bindings, Octave's whos, Clojure's ns-interns, gnuplot's
// show variables, the shell's set — with the session's own names sorted,
// their types, sizes and previews from structure (a thunk not forced, a
// lazy seq not realised); goes into what a path names; says in the
// runtime's words that a path names nothing; lists more with --all; and
// while a cell runs answers from the look as the last cell ended, with
// its number. No look is in the record or the output, and none changes
// what the REPL keeps (it, ans, *1, GPVAL_ERRNO).
func TestVarsTerminal(t *testing.T) {
	t.Parallel()
	for _, c := range termVarsCases {
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
			if look.Look != api.LookLive || look.Total != len(look.Vars) || look.Total != len(c.names) {
				t.Errorf("look %s, %d lines of %d, want %d: %+v", look.Look, len(look.Vars), look.Total, len(c.names), look.Vars)
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
				if v.Type != w.typ || v.Size != w.size || v.Preview != w.preview || v.Note != w.note {
					t.Errorf("%s: %+v, want type %q, size %q, preview %q, note %q", w.name, v, w.typ, w.size, w.preview, w.note)
				}
			}
			if names := e.session(name).Names; len(names) != len(c.names) {
				t.Errorf("sessions lists %v, the look %d names", names, len(c.names))
			}

			e.lookBeyond(name, c.path, c.members, c.badPath, c.badWords, look, c.names[0])

			// The looks changed nothing the REPL keeps.
			chk := e.runJSON("exec", name, c.check)
			if chk.Status != "done" || chk.Output+chk.Value != c.checkSays {
				t.Errorf("after the looks, %q said %q (value %q), want %q", c.check, chk.Output, chk.Value, c.checkSays)
			}

			// While a cell runs: the look taken as cell 2 ended.
			e.must(124, "exec", name, c.running, "-t", "0.5")
			during := e.look(name)
			if during.Look != api.LookLast || during.Cell != 2 || during.Total != look.Total {
				t.Errorf("during cell 3: look %q after cell %d, %d names; want last after 2, %d", during.Look, during.Cell, during.Total, look.Total)
			}
			e.must(0, "interrupt", name)
			if !waitFor(20*time.Second, func() bool { return e.session(name).State == "idle" }) {
				t.Fatalf("the running cell did not end: %+v", e.session(name))
			}

			hist, _ := e.must(0, "history", name, "--json")
			wantLacks(t, "the record after the looks", hist, `"cell":4`, "polyrepl_look", "show variables", ":show bindings", "polyrepl/vars")
			out, _ := e.must(0, "log", name)
			wantLacks(t, "the output after the looks", out, "\nREALISED\n", "polyrepl_", "total\t")
			if after := e.look(name); after.Total != look.Total {
				t.Errorf("%d names after the looks and the cells, %d before", after.Total, look.Total)
			}
			if strings.Contains(out, "\x00") {
				t.Errorf("NUL in the output")
			}
		})
	}
}

// TestVarsWhileAttachedRaw: a person attached raw to an sh session sees
// nothing of a look another client takes — not its command (the
// terminal's echo is off while it runs), not its output, not a second
// prompt — and their typing after it echoes and runs as before.
func TestVarsWhileAttachedRaw(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "term", "--runtime", "sh", "x=41")
	con := e.onTerminal("attach", "term", "--raw", "--label", "dana")
	con.expect("start", "Attached to the terminal of session 'term' as dana", "running).\r\n$ ")
	before := con.scr.String()
	if look := e.look("term"); look.Total != 1 || look.Vars[0].Name != "x" {
		t.Errorf("the look: %+v", look)
	}
	con.send("echo typed-$((x+1))\r")
	con.expect("a typed command after the look", "typed-42\r\n$ ")
	seen := strings.TrimPrefix(con.scr.String(), before)
	if seen != "echo typed-$((x+1))\r\ntyped-42\r\n$ " {
		t.Errorf("the person saw %q after the look, want only their command", seen)
	}
	con.send("\x1d")
	if err := con.exit("Ctrl-]"); err != nil {
		t.Errorf("attach --raw ended with %v after Ctrl-], want exit 0", err)
	}
}
