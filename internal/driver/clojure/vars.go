package clojure

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// A look in Clojure is a form the nested REPL's reader answers itself,
// (polyrepl/vars ROOT [STEP…] ALL), without evaluating it (so *1, *2, *3
// and *e stay the cells'): lookFn, bound in setup, reads ns-interns of
// the REPL's namespace (all: ns-map, with what it refers and imports),
// and describes each var from its value's class. Only Clojure's own
// persistent maps, vectors, lists and sets, strings, numbers, keywords,
// symbols, booleans and characters are counted and previewed, from their
// structure (a few items, two levels deep): a lazy seq is not realised,
// a record, a deftype or any other object gets its class only, and no
// print-method, toString or user code runs. A function's preview is its
// arglists. A path is a var's name then [:keyword], ["string"] or
// [index] steps into maps, vectors and lists, parsed here and walked
// there, never evaluated.
const lookFn = `(fn [ns root steps all]
 (let [lim 100
  cut (fn [s n] (if (> (count s) n) (str (subs s 0 n) "…") s))
  clean (fn [s] (clojure.string/replace s #"[\t\r\n]" " "))
  nums #{Long Integer Short Byte Double Float clojure.lang.BigInt java.math.BigInteger java.math.BigDecimal clojure.lang.Ratio}
  scalar? (fn [x] (or (nil? x) (contains? nums (class x)) (string? x) (keyword? x) (symbol? x) (instance? Boolean x) (char? x)))
  amap? (fn [x] (and (instance? clojure.lang.APersistentMap x) (not (sorted? x))))
  avec? (fn [x] (instance? clojure.lang.APersistentVector x))
  aset? (fn [x] (and (instance? clojure.lang.APersistentSet x) (not (sorted? x))))
  alist? (fn [x] (and (some? x) (contains? #{"clojure.lang.PersistentList" "clojure.lang.PersistentList$EmptyList"} (.getName ^Class (class x)))))
  acoll? (fn [x] (or (amap? x) (avec? x) (aset? x) (alist? x)))
  typ (fn [x] (cond (nil? x) "nil" (fn? x) "function" :else (.getSimpleName ^Class (class x))))
  pl (fn [n w] (str n " " w (if (= n 1) "" "s")))
  size (fn [x] (cond (string? x) (pl (count x) "character") (amap? x) (pl (count x) "key") (acoll? x) (pl (count x) "item") :else ""))
  pv (fn pv [x d]
   (cond (string? x) (pr-str (cut x 60))
    (scalar? x) (pr-str x)
    (fn? x) "#<fn>"
    (and (< d 2) (amap? x)) (str "{" (clojure.string/join ", " (map (fn [e] (str (pv (key e) (inc d)) " " (pv (val e) (inc d)))) (take 4 x))) (if (> (count x) 4) ", …" "") "}")
    (and (< d 2) (acoll? x)) (let [[o c] (cond (avec? x) ["[" "]"] (aset? x) ["#{" "}"] :else ["(" ")"])] (str o (clojure.string/join " " (map (fn [y] (pv y (inc d))) (take 6 x))) (if (> (count x) 6) " …" "") c))
    (acoll? x) (str "#<" (typ x) " of " (size x) ">")
    :else (str "#<" (typ x) ">")))
  line (fn [name x] (println (str (clean name) "\t" (typ x) "\t" (size x) "\t" (if (or (amap? x) (avec? x) (alist? x)) 1 0) "\t" (clean (cut (pv x 0) 200)))))
  err (fn [msg] (println (str "polyrepl_error\t" (clean msg))))
  into-x (fn [x at] (err (str at " is a " (typ x) ": a look goes into maps, vectors and lists")))]
  (try
   (if (nil? root)
    (let [es (sort-by (fn [e] (str (key e))) (filter (fn [e] (or all (var? (val e)))) (if all (ns-map ns) (ns-interns ns))))]
     (println (str "total\t" (count es)))
     (doseq [[k v] (take lim es)]
      (cond (class? v) (println (str k "\tclass\t\t0\t" (.getName ^Class v)))
       (:macro (meta v)) (println (str k "\tmacro\t\t0\t" (clean (cut (pr-str (:arglists (meta v))) 200))))
       (not (.isBound ^clojure.lang.Var v)) (println (str k "\tunbound\t\t0\t"))
       :else (let [x @v] (if (fn? x) (println (str k "\tfunction\t\t0\t" (clean (cut (pr-str (:arglists (meta v))) 200)))) (line (str k) x))))))
    (let [sym (symbol root)
      v (if (namespace sym) (try (find-var sym) (catch Exception _ nil)) (get (ns-map ns) sym))]
     (if-not (and (var? v) (.isBound ^clojure.lang.Var v))
      (err (str "Unable to resolve symbol: " root " in this context"))
      (loop [x @v at root steps steps]
       (if (seq steps)
        (let [k (first steps) at2 (str at "[" (pr-str k) "]")]
         (cond (amap? x) (if (contains? x k) (recur (get x k) at2 (rest steps)) (err (str at " has no key " (pr-str k))))
          (or (avec? x) (alist? x)) (if (and (integer? k) (< -1 k (count x))) (recur (nth x k) at2 (rest steps)) (err (str "index " (pr-str k) " is out of bounds for " at " (" (size x) ")")))
          :else (into-x x at)))
        (cond (amap? x) (do (println (str "total\t" (count x))) (doseq [e (take lim x)] (line (pv (key e) 1) (val e))))
         (or (avec? x) (alist? x)) (do (println (str "total\t" (count x))) (doseq [[i y] (map vector (range) (take lim x))] (line (str "[" i "]") y)))
         :else (into-x x at)))))))
   (catch Throwable e (err (str "the look failed: " e))))
  (flush)))`

// oneLine is lookFn as one line of the setup, which the nested REPL's
// reader takes whole.
func oneLine(code string) string { return strings.ReplaceAll(code, "\n", " ") }

var (
	symRE  = terminal.Pattern(`^[A-Za-z*+!_?<>=$%&-][\w*+!?<>=$%&'.-]*(/[A-Za-z*+!_?<>=$%&-][\w*+!?<>=$%&'.-]*)?`)
	stepRE = terminal.Pattern(`^\[\s*(:[\w*+!?<>=$%&'./-]+|"(?:[^"\\]|\\.)*"|-?\d{1,9})\s*\]`)
)

// vars is Clojure's look form.
func vars(q driver.VarsQuery) (string, error) {
	root, steps, err := parsePath(q.Path)
	if err != nil {
		return "", err
	}
	r := "nil"
	if root != "" {
		r = clojureString(root)
	}
	return fmt.Sprintf("(polyrepl/vars %s [%s] %t)", r, strings.Join(steps, " "), q.All), nil
}

// parsePath splits a path into its var's name and its steps, each as a
// Clojure literal: cfg[:db]["host"][0] is cfg, :db, "host", 0.
func parsePath(path string) (string, []string, error) {
	path = strings.TrimSpace(path)
	if path == "" {
		return "", nil, nil
	}
	bad := func(at string) error {
		return &driver.PathError{Msg: "a Clojure look's path is a var's name then [:key], [\"key\"] or [index] steps: " + api.Clip(at, 80, "path") + " is not"}
	}
	root := symRE().FindString(path)
	if root == "" {
		return "", nil, bad(path)
	}
	var steps []string
	for rest := path[len(root):]; rest != ""; {
		m := stepRE().FindStringSubmatch(rest)
		if m == nil {
			return "", nil, bad(rest)
		}
		lit := m[1]
		if strings.HasPrefix(lit, `"`) {
			s, err := strconv.Unquote(lit)
			if err != nil {
				return "", nil, bad(rest)
			}
			lit = clojureString(s)
		}
		steps = append(steps, lit)
		rest = rest[len(m[0]):]
	}
	return root, steps, nil
}

// clojureString is s as a Clojure string literal.
func clojureString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || r == utf8.RuneError:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// parseVars reads what lookFn printed.
func parseVars(out string, q driver.VarsQuery) (driver.Look, error) {
	var l driver.Look
	for _, line := range strings.Split(strings.ReplaceAll(out, "\r", ""), "\n") {
		f := strings.SplitN(line, "\t", 5)
		switch {
		case len(f) == 2 && f[0] == "polyrepl_error":
			return driver.Look{}, &driver.PathError{Msg: f[1]}
		case len(f) == 2 && f[0] == "total":
			l.Total, _ = strconv.Atoi(f[1])
		case len(f) == 5:
			l.Vars = append(l.Vars, api.Var{Name: f[0], Type: f[1], Size: f[2], Members: f[3] == "1", Preview: f[4]})
		}
	}
	if q.Path == "" {
		sort.SliceStable(l.Vars, func(i, j int) bool { return l.Vars[i].Name < l.Vars[j].Name })
	}
	l.Total = max(l.Total, len(l.Vars))
	return l, nil
}
