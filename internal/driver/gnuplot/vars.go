package gnuplot

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// A look in gnuplot is `show variables` (with all: `show variables all`,
// gnuplot's GPVAL_* and MOUSE_* too) and `show functions`: each
// variable's name and value as gnuplot shows it (strings quoted and
// escaped, an array as "<3 element array>"), whose form gives its type;
// user functions with their definitions. A path is an array's name: its
// items, from print (asked only if the name exists: an error would set
// GPVAL_ERRNO). show and print set nothing; gnuplot runs no user code
// for either.

var nameRE = terminal.Pattern(`^[A-Za-z_]\w*$`)

// vars is gnuplot's look command.
func vars(q driver.VarsQuery) (string, error) {
	if q.Path == "" {
		if q.All {
			return "show variables all\nshow functions", nil
		}
		return "show variables\nshow functions", nil
	}
	p := strings.TrimSpace(q.Path)
	if !nameRE().MatchString(p) {
		return "", &driver.PathError{Msg: "a gnuplot look's path is an array's name: " + api.Clip(q.Path, 80, "path") + " is not"}
	}
	return "show variables all\nif (exists(" + terminal.SingleQuoted(p) + ")) { print " + p + " }", nil
}

// parseVars reads show variables and show functions, or an array's
// print for a path.
func parseVars(out string, q driver.VarsQuery) (driver.Look, error) {
	var vs []api.Var
	byName := map[string]api.Var{}
	arrayLine := ""
	functions := false
	for _, l := range strings.Split(strings.ReplaceAll(out, "\r", ""), "\n") {
		if strings.HasPrefix(l, "[") {
			arrayLine = l
			continue
		}
		if !strings.HasPrefix(l, "\t") {
			continue
		}
		l = strings.TrimPrefix(l, "\t")
		if strings.HasSuffix(l, "Functions:") {
			functions = true
			continue
		}
		if functions {
			if name, _, ok := strings.Cut(l, "("); ok && nameRE().MatchString(name) {
				vs = append(vs, api.Var{Name: name, Type: "function", Preview: l})
			}
			continue
		}
		name, val, ok := strings.Cut(l, " = ")
		if !ok || !nameRE().MatchString(name) {
			continue
		}
		v := variable(name, val)
		byName[name] = v
		if q.Path == "" && (q.All || !predefined[name]) {
			vs = append(vs, v)
		}
	}
	if q.Path != "" {
		p := strings.TrimSpace(q.Path)
		v, ok := byName[p]
		switch {
		case !ok:
			return driver.Look{}, &driver.PathError{Msg: "undefined variable: " + p}
		case v.Type != "array":
			return driver.Look{}, &driver.PathError{Msg: p + " is a " + v.Type + ", not an array: it has no items"}
		}
		items := []api.Var{}
		for i, it := range arrayItems(arrayLine) {
			items = append(items, variable("["+strconv.Itoa(i+1)+"]", it))
		}
		return driver.Look{Vars: items, Total: len(items)}, nil
	}
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].Name < vs[j].Name })
	return driver.Look{Vars: vs, Total: len(vs)}, nil
}

// variable is one value's line, its type from its form.
func variable(name, val string) api.Var {
	v := api.Var{Name: name, Preview: val}
	switch {
	case val == "":
		v.Type = "undefined"
	case strings.HasPrefix(val, `"`):
		v.Type = "string"
		n := utf8.RuneCountInString(val) - 2
		if s, err := strconv.Unquote(val); err == nil {
			n = utf8.RuneCountInString(s)
		}
		v.Size = strconv.Itoa(n) + " characters"
		if n == 1 {
			v.Size = "1 character"
		}
	case strings.HasPrefix(val, "<") && strings.HasSuffix(val, " element array>"):
		v.Type, v.Members, v.Preview = "array", true, ""
		n := strings.TrimSuffix(strings.TrimPrefix(val, "<"), " element array>")
		v.Size = n + " items"
		if n == "1" {
			v.Size = "1 item"
		}
	case strings.HasPrefix(val, "{"):
		v.Type = "complex"
	case strings.ContainsAny(val, ".eEN"):
		v.Type = "real" // 2.5, 1e+30, NaN, Inf
	default:
		v.Type = "integer"
	}
	return v
}

// arrayItems splits print's "[1,\"a,b\",{1.0, 2.0},]" into its items
// (an undefined item is empty).
func arrayItems(line string) []string {
	line = strings.TrimSpace(line)
	if len(line) < 2 || line[0] != '[' || line[len(line)-1] != ']' {
		return nil
	}
	body := line[1 : len(line)-1]
	var items []string
	start, depth, quoted := 0, 0, false
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == ',' && depth == 0:
			items = append(items, strings.TrimSpace(body[start:i]))
			start = i + 1
		}
	}
	if start < len(body) || strings.HasSuffix(body, ",") {
		items = append(items, strings.TrimSpace(body[start:]))
	}
	return items
}
