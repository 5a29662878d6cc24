package octave

import (
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// A look in Octave is polyrepl_look.m, a function file in the session's
// directory of cell files (on the path from setup): whos of the base
// workspace, run as an assignment there (a bare whos would set ans) and
// read back by name, then a preview made from the value's structure for
// Octave's own classes only (the first numbers, a string's head, a
// struct's fields, a cell's items' classes, a function handle's text);
// an object of a user's class gets its class, size and bytes. A path is
// a variable then .field, {k} (a cell's item) or (k) (a struct array's
// element), parsed here and walked there, never evaluated.

//go:embed look/polyrepl_look.m
var lookFile string

// stepRE is one step of a path after its variable.
var (
	rootRE = terminal.Pattern(`^[A-Za-z]\w*`)
	stepRE = terminal.Pattern(`^(?:\.[A-Za-z]\w*|\{[1-9]\d{0,8}\}|\([1-9]\d{0,8}\))`)
)

// vars is Octave's look command.
func vars(q driver.VarsQuery) (string, error) {
	steps, err := parsePath(q.Path)
	if err != nil {
		return "", err
	}
	quoted := make([]string, len(steps))
	for i, s := range steps {
		quoted[i] = terminal.SingleQuoted(s)
	}
	return fmt.Sprintf("polyrepl_look({%s}, %t, %d);", strings.Join(quoted, ", "), q.All, api.VarsLimit), nil
}

// parsePath splits a path into its variable and steps: "cfg.db{2}" is
// cfg, .db, {2}.
func parsePath(path string) ([]string, error) {
	path = strings.TrimSpace(path)
	if path == "" {
		return nil, nil
	}
	root := rootRE().FindString(path)
	if root == "" {
		return nil, &driver.PathError{Msg: "parse error: an Octave look's path is a variable then .field, {k} or (k): " + api.Clip(path, 80, "path") + " is not"}
	}
	steps := []string{root}
	for rest := path[len(root):]; rest != ""; {
		s := stepRE().FindString(rest)
		if s == "" {
			return nil, &driver.PathError{Msg: "parse error: an Octave look's path is a variable then .field, {k} or (k): " + api.Clip(rest, 80, "path") + " is not"}
		}
		steps = append(steps, s)
		rest = rest[len(s):]
	}
	return steps, nil
}

// parseVars reads what polyrepl_look printed.
func parseVars(out string, q driver.VarsQuery) (driver.Look, error) {
	var l driver.Look
	for _, line := range strings.Split(strings.ReplaceAll(out, "\r", ""), "\n") {
		f := strings.SplitN(line, "\t", 6)
		switch {
		case len(f) == 2 && f[0] == "polyrepl_error":
			return driver.Look{}, &driver.PathError{Msg: f[1]}
		case strings.HasPrefix(line, "error: "):
			return driver.Look{}, &driver.PathError{Msg: strings.TrimPrefix(line, "error: ")}
		case len(f) == 2 && f[0] == "total":
			l.Total, _ = strconv.Atoi(f[1])
		case len(f) == 6:
			mem, _ := strconv.ParseInt(f[3], 10, 64)
			l.Vars = append(l.Vars, api.Var{Name: f[0], Type: f[1], Size: f[2], Memory: mem, Members: f[4] == "1", Preview: f[5]})
		}
	}
	if q.Path == "" {
		sort.SliceStable(l.Vars, func(i, j int) bool { return l.Vars[i].Name < l.Vars[j].Name })
	}
	l.Total = max(l.Total, len(l.Vars))
	return l, nil
}
