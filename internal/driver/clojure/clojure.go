// Package clojure is the Clojure runtime: clojure.main's REPL driven in the
// terminal family over pipes. Setup starts a nested REPL whose reader,
// printer and error handler are polyrepl's: the printer marks the value,
// the error handler marks the failure, and the reader answers polyrepl's
// own forms (marks, looks) without evaluating them, so *1, *2, *3 and *e
// keep the cells' values. SIGINT stops the REPL thread as nREPL does.
package clojure

import (
	"fmt"
	"strconv"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// Profile is Clojure's terminal profile.
var Profile = &terminal.Profile{
	Info: driver.Info{
		Exit: "(System/exit n)",
		Name: "clojure", Family: "terminal", Ext: ".clj",
		Exes: []string{"clojure", "clj"}, EnvVar: "POLYREPL_CLOJURE",
		Needs:  "Clojure and a JDK (Debian: clojure)",
		NoFork: "the JVM's garbage collector and compilers run on threads, which a fork does not copy",
		Limits: "a cell's value is its last form's; an interrupt stops the cell's thread " +
			"with Thread.stop, which Java 20 and later no longer allow (kill the session " +
			"there); read-line and other reads of *in*, and a subprocess reading stdin, ask " +
			"(status input), taking lines, not end of file",
		VersionArgs: []string{"-e", "(print (clojure-version))"},
	},
	Setup: func(m terminal.Mark) []string {
		vh, vt := m.Halves("value")
		eh, et := m.Halves("error")
		return []string{
			// One line: the nested REPL reads every later line.
			fmt.Sprintf(`(let [t (Thread/currentThread) look %s] (sun.misc.Signal/handle (sun.misc.Signal. "INT") (reify sun.misc.SignalHandler (handle [_ _] (try (.stop t) (catch Throwable _ (.interrupt t)))))) `+
				`(clojure.main/repl :prompt (fn [] (when-let [p (System/getProperty "polyrepl.prompt")] (println p) (flush))) `+
				`:read (fn [rp re] (let [f (clojure.main/repl-read rp re)] (if (and (seq? f) (= 'polyrepl/mark (first f))) (do (flush) (.flush *err*) (println (str (eval (second f)) (eval (nth f 2)))) (flush) rp) `+
				`(if (and (seq? f) (= 'polyrepl/vars (first f))) (do (apply look *ns* (rest f)) rp) f)))) `+
				`:print (fn [v] (flush) (.flush *err*) (println (str %s %s)) (prn v) (flush)) `+
				`:caught (fn [e] (if (instance? ThreadDeath e) (binding [*out* *err*] (println "Interrupted.")) (clojure.main/repl-caught e)) (.flush *err*) (flush) (println (str %s %s)) (flush))))`,
				oneLine(lookFn), strconv.Quote(vh), strconv.Quote(vt), strconv.Quote(eh), strconv.Quote(et)),
		}
	},
	// The nested REPL's prompt says it waits for a form: a cell that
	// reads *in* (read-line) asks. The JVM reads on its main thread, not
	// the process's first.
	PromptMark: func(m terminal.Mark) string {
		h, t := m.Halves("prompt")
		return fmt.Sprintf(`(System/setProperty "polyrepl.prompt" (str %s %s))`, strconv.Quote(h), strconv.Quote(t))
	},
	ThreadReads: true,
	Print: func(head, tail string) string {
		return fmt.Sprintf("(polyrepl/mark %s %s)", strconv.Quote(head), strconv.Quote(tail))
	},
	Version: `(polyrepl/mark (clojure-version) "")`,
	Load:    func(path string) string { return "(load-file " + strconv.Quote(path) + ")" },
	// A look (vars.go) is also a cell's names.
	Vars:      vars,
	ParseVars: parseVars,
	Error:     terminal.Pattern(`^(Execution error|Syntax error|Unexpected error|Error printing return value)`),
}

func init() { driver.Register(terminal.Driver{P: Profile}) }
