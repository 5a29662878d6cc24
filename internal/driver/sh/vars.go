package sh

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// A look in the POSIX shell is `set` (every variable, quoted as the shell
// reads it back) and `export -p` (which are exported): builtins, so
// nothing forks and no user code runs. The session's own variables are
// those not among the names the shell had when setup ended
// (__polyrepl_base, taken once then) and not the profile's own
// (__polyrepl_*); with all, every one. dash lists no functions (it has
// no typeset -f), so a look shows none. A path is a variable's name: its
// value's lines.

// exportsMark separates set's lines from export -p's in a look's output.
const exportsMark = "polyrepl-exports"

// baseSetup is the setup line taking the names the shell starts with.
const baseSetup = `__polyrepl_base=" $(set | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p' | tr '\n' ' ')"`

var nameRE = terminal.Pattern(`^[A-Za-z_][A-Za-z0-9_]*$`)

// vars is the shell's look command.
func vars(q driver.VarsQuery) (string, error) {
	if p := strings.TrimSpace(q.Path); p != "" && !nameRE().MatchString(p) {
		return "", &driver.PathError{Msg: api.Clip(q.Path, 80, "path") + ": bad variable name (a sh look's path is a variable's name)"}
	}
	return "set; printf '%s\\n' " + exportsMark + "; export -p", nil
}

// parseVars reads set's and export -p's lines.
func parseVars(out string, q driver.VarsQuery) (driver.Look, error) {
	out = strings.ReplaceAll(out, "\r\n", "\n")
	set, exports, _ := strings.Cut(out, exportsMark+"\n")
	vals := assignments(set)
	exported := map[string]bool{}
	for name := range assignments(exportLines(exports)) {
		exported[name] = true
	}
	if p := strings.TrimSpace(q.Path); p != "" {
		val, ok := vals[p]
		if !ok {
			return driver.Look{}, &driver.PathError{Msg: p + ": parameter not set"}
		}
		lines := strings.Split(strings.TrimSuffix(val, "\n"), "\n")
		vs := make([]api.Var, 0, len(lines))
		for i, l := range lines {
			vs = append(vs, variable(strconv.Itoa(i+1), l, false))
		}
		return driver.Look{Vars: vs, Total: len(vs)}, nil
	}
	base := map[string]bool{}
	for _, n := range strings.Fields(vals["__polyrepl_base"]) {
		base[n] = true
	}
	vs := []api.Var{}
	for name, val := range vals {
		if !q.All && (base[name] || strings.HasPrefix(name, "__polyrepl_")) {
			continue
		}
		vs = append(vs, variable(name, val, exported[name]))
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Name < vs[j].Name })
	return driver.Look{Vars: vs, Total: len(vs)}, nil
}

// exportLines is export -p's lines without their "export ".
func exportLines(out string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		b.WriteString(strings.TrimPrefix(l, "export "))
	}
	return b.String()
}

// variable is one variable's line: a string, its characters, its head
// quoted; a value of several lines can be looked into.
func variable(name, val string, exported bool) api.Var {
	v := api.Var{Name: name, Type: "string", Preview: strconv.Quote(val)}
	if exported {
		v.Type = "string, exported"
	}
	n := utf8.RuneCountInString(val)
	v.Size = strconv.Itoa(n) + " characters"
	if n == 1 {
		v.Size = "1 character"
	}
	if k := strings.Count(strings.TrimSuffix(val, "\n"), "\n"); k > 0 {
		v.Size += ", " + strconv.Itoa(k+1) + " lines"
		v.Members = true
	}
	return v
}

// assignments reads lines of NAME=VALUE, VALUE quoted as a POSIX shell
// reads it ('…', "…", \x, and bare characters), into their values.
func assignments(s string) map[string]string {
	vals := map[string]string{}
	for len(s) > 0 {
		eq := strings.IndexByte(s, '=')
		nl := strings.IndexByte(s, '\n')
		if eq < 0 || (nl >= 0 && nl < eq) || !nameRE().MatchString(s[:eq]) {
			if nl < 0 {
				break
			}
			s = s[nl+1:]
			continue
		}
		name := s[:eq]
		var val strings.Builder
		i := eq + 1
	value:
		for i < len(s) {
			switch c := s[i]; c {
			case '\n':
				i++
				break value
			case '\'':
				j := strings.IndexByte(s[i+1:], '\'')
				if j < 0 {
					val.WriteString(s[i+1:])
					i = len(s)
					break value
				}
				val.WriteString(s[i+1 : i+1+j])
				i += j + 2
			case '"':
				i++
				for i < len(s) && s[i] != '"' {
					if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
						i++
					}
					val.WriteByte(s[i])
					i++
				}
				i++
			case '\\':
				if i+1 < len(s) {
					val.WriteByte(s[i+1])
				}
				i += 2
			default:
				val.WriteByte(c)
				i++
			}
		}
		vals[name] = val.String()
		s = s[min(i, len(s)):]
	}
	return vals
}
