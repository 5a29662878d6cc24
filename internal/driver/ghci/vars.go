package ghci

import (
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// A look in GHCi is :show bindings: each binding's name, its type, and
// its value as far as it is evaluated, printed by GHCi's term printer
// (as :print does: structure, with `_` for each unevaluated thunk, and
// never a Show instance), so a look forces nothing and runs no user
// code; it is a GHCi command, not an expression, so `it` stays. The
// types, classes and synonyms the session declared are listed too. A
// path is one name (x, M.x, (+++)): its type from :type and its value
// from :sprint, the same printer; :type does not evaluate, and a name is
// all the grammar takes.

// pathRE is a path GHCi's look takes: a variable, qualified or not, or an
// operator in parentheses.
var pathRE = terminal.Pattern(`^(?:[A-Z][\w']*\.)*[a-z_][\w']*$|^\([!#$%&*+./<=>?@\\^|~:-]+\)$`)

// vars is GHCi's look command.
func vars(q driver.VarsQuery) (string, error) {
	if q.Path == "" {
		return ":show bindings", nil
	}
	p := strings.TrimSpace(q.Path)
	if !pathRE().MatchString(p) {
		return "", &driver.PathError{Msg: "a GHCi look's path is one name (x, M.x or (+++)): " + api.Clip(q.Path, 80, "path") + " is not"}
	}
	return ":type " + p + "\n:sprint " + p, nil
}

// entries joins GHCi's lines into its entries: an indented line goes on
// the entry above it (GHCi wraps long types and values).
func entries(out string) []string {
	var es []string
	for _, l := range strings.Split(strings.ReplaceAll(out, "\r", ""), "\n") {
		switch {
		case strings.TrimSpace(l) == "":
		case unicode.IsSpace(rune(l[0])) && len(es) > 0:
			es[len(es)-1] += " " + strings.TrimSpace(l)
		default:
			es = append(es, strings.TrimRight(l, " "))
		}
	}
	return es
}

// parseVars reads :show bindings, or :type and :sprint for a path.
func parseVars(out string, q driver.VarsQuery) (driver.Look, error) {
	es := entries(out)
	for _, e := range es {
		if _, msg, ok := strings.Cut(e, ": error:"); ok {
			return driver.Look{}, &driver.PathError{Msg: strings.TrimSpace(msg)}
		}
	}
	if q.Path != "" {
		return parsePath(es, strings.TrimSpace(q.Path)), nil
	}
	var vs []api.Var
	seen := map[string]bool{}
	for _, e := range es {
		v, ok := binding(e)
		if !ok || seen[v.Name] || (v.Name == "it" && !q.All) {
			continue
		}
		seen[v.Name] = true
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Name < vs[j].Name })
	return driver.Look{Vars: vs, Total: len(vs)}, nil
}

// binding reads one entry of :show bindings: "x :: Int = 1", "f :: a ->
// a = _", "data T = ...", "class C a ...", "type S = Int"; kind
// signatures ("type T :: *") and instances are not names.
func binding(e string) (api.Var, bool) {
	f := strings.Fields(e)
	if len(f) >= 2 {
		switch f[0] {
		case "instance", "deriving":
			return api.Var{}, false
		case "type", "data", "newtype", "class":
			name := f[1]
			if name == "family" && len(f) > 2 {
				name = f[2]
			}
			if strings.Contains(e, " :: ") && !strings.Contains(e, " = ") || f[0] == "type" && !strings.Contains(e, " = ") {
				return api.Var{}, false // a kind signature
			}
			return api.Var{Name: name, Type: f[0]}, true
		}
	}
	name, rest, ok := strings.Cut(e, " :: ")
	if n := strings.TrimSpace(name); !ok || n == "" || strings.ContainsAny(n, " \t") {
		return api.Var{}, false
	}
	typ, val, hasVal := strings.Cut(rest, " = ")
	v := api.Var{Name: strings.TrimSpace(name), Type: strings.TrimSpace(typ)}
	if hasVal {
		value(&v, strings.TrimSpace(val))
	}
	return v, true
}

// value puts what GHCi showed of a value on its line: its preview, and
// the items of a list it showed whole; an unevaluated one says so.
func value(v *api.Var, val string) {
	if val == "_" {
		if !isFunction(v.Type) {
			v.Note = "not evaluated (a look never forces it)"
		}
		return
	}
	v.Preview = val
	if n, ok := listItems(val); ok {
		v.Size = items(n)
	}
}

// parsePath reads :type's and :sprint's entries for one name.
func parsePath(es []string, path string) driver.Look {
	name := strings.Trim(path, "()")
	v := api.Var{Name: path}
	for _, e := range es {
		if n, typ, ok := strings.Cut(e, " :: "); ok && v.Type == "" && strings.TrimSpace(n) == path {
			v.Type = strings.TrimSpace(typ)
		} else if n, val, ok := strings.Cut(e, " = "); ok && strings.Trim(strings.TrimSpace(n), "()") == name {
			value(&v, strings.TrimSpace(val))
		}
	}
	return driver.Look{Vars: []api.Var{v}, Total: 1}
}

// isFunction reports whether a type is a function's: an arrow outside
// brackets, after any context.
func isFunction(typ string) bool {
	if _, t, ok := strings.Cut(typ, "=>"); ok {
		typ = t
	}
	depth := 0
	for i := 0; i < len(typ); i++ {
		switch typ[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '-':
			if depth == 0 && i+1 < len(typ) && typ[i+1] == '>' {
				return true
			}
		}
	}
	return false
}

// listItems counts the items of a list GHCi showed whole ("[1,2,3]"),
// its spine evaluated (an item may not be: "[1,_,3]"); not one whose
// spine is not ("1 : _").
func listItems(val string) (int, bool) {
	if len(val) < 2 || val[0] != '[' || val[len(val)-1] != ']' {
		return 0, false
	}
	if val == "[]" {
		return 0, true
	}
	depth, n, quote := 0, 1, byte(0)
	for i := 1; i < len(val)-1; i++ {
		c := val[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			n++
		}
	}
	return n, true
}

func items(n int) string {
	if n == 1 {
		return "1 item"
	}
	return strconv.Itoa(n) + " items"
}
