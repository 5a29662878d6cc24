package render

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Vars puts a look at a session into words for its reader: what was
// looked at and how (live, or the last look while a cell runs), then a
// line per name or member — name, type, size, memory, preview, a note
// when its preview could not be made — then what was not shown.
func Vars(r api.VarsReply, v Voice) string {
	var b strings.Builder
	what := fmt.Sprintf("Session '%s' holds %s", r.Session, Plural(r.Total, "name"))
	if r.All {
		what += ", its imports and built-ins among them"
	}
	if r.Path != "" {
		what = fmt.Sprintf("%s in session '%s' has %s", r.Path, r.Session, Plural(r.Total, "member"))
	}
	switch r.Look {
	case api.LookLast:
		age := ""
		if !r.At.IsZero() {
			age = ", " + Ago(time.Since(r.At)) + " ago"
		}
		fmt.Fprintf(&b, "%s as the look after cell %d saw them%s: a cell runs, and the %s runtime looks between cells.\n", what, r.Cell, age, r.Runtime)
	case api.LookDuring:
		fmt.Fprintf(&b, "%s (looked while cell %d runs).\n", what, r.Cell)
	default:
		fmt.Fprintf(&b, "%s.\n", what)
	}
	if len(r.Vars) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, x := range r.Vars {
			mem := ""
			if x.Memory > 0 {
				mem = Kilobytes(x.Memory)
			}
			preview := x.Preview
			if x.Note != "" {
				preview = strings.TrimSpace(preview + " [" + x.Note + "]")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cell(x.Name), cell(x.Type), cell(x.Size), mem, cell(preview))
		}
		tw.Flush()
	}
	if more := r.Total - len(r.Vars); more > 0 {
		fmt.Fprintf(&b, "[%s more not shown (a look lists %d)]\n", Plural(more, "line"), api.VarsLimit)
	}
	if r.Path == "" && !r.All && r.Look != api.LookLast {
		fmt.Fprintf(&b, "[%s also lists imports and built-ins; %s looks inside one of them]\n", v.Input("all"), v.Input(api.FieldPath))
	}
	return b.String()
}

// cell keeps a field of a look's line in its column: one line, no tab.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(strings.ReplaceAll(s, "\r", "")), "\t", " ")
}
