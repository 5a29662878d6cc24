package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// printResult shows a cell's result the way a REPL would: what happened
// before (a loss, a new session), the output, the value or the error, then
// what the caller should know (still running, other sessions).
func printResult(w io.Writer, r api.CellResult) {
	var b strings.Builder
	note := func(kinds ...string) {
		for _, n := range r.Notes {
			for _, k := range kinds {
				if n.Kind == k {
					b.WriteString(bracket(n.Text))
				}
			}
		}
	}
	note(api.NoteLost, api.NoteCreated, api.NoteIdle, api.NoteUncollected)
	if r.Output != "" {
		b.WriteString(r.Output)
		if !strings.HasSuffix(r.Output, "\n") {
			b.WriteString("\n")
		}
	}
	if r.OutputCut != nil {
		b.WriteString(r.OutputCut.Describe("output") + "\n")
	}
	if r.Value != "" {
		fmt.Fprintf(&b, "Out[%d]: %s\n", r.Cell, r.Value)
		if r.ValueCut != nil {
			b.WriteString(r.ValueCut.Describe("value") + "\n")
		}
	}
	if e := r.Error; e != nil {
		switch {
		case e.Traceback != "":
			b.WriteString(e.Traceback)
			if !strings.HasSuffix(e.Traceback, "\n") {
				b.WriteString("\n")
			}
		case e.Message != "":
			fmt.Fprintf(&b, "%s: %s\n", e.Type, e.Message)
		default:
			b.WriteString(e.Type + "\n")
		}
	}
	for _, n := range r.Notes {
		switch n.Kind {
		case api.NoteLost, api.NoteCreated, api.NoteIdle, api.NoteUncollected:
		default:
			b.WriteString(bracket(n.Text))
		}
	}
	io.WriteString(w, b.String())
}

// bracket sets a note apart from the cell's own output.
func bracket(text string) string {
	return "[" + strings.TrimRight(text, "\n") + "]\n"
}

// exitFor maps a cell status to the exit status.
func exitFor(status string) int {
	switch status {
	case api.StatusDone:
		return ExitOK
	case api.StatusRunning:
		return ExitTimeout
	}
	return ExitFailed
}

func printJSON(w io.Writer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintf(w, "{\"error\": %q}\n", err.Error())
		return
	}
	w.Write(append(b, '\n'))
}

// ago prints a duration compactly, as `sessions` shows it: 40s, 2m, 3h,
// 2d.
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// megabytes prints a memory size in MB.
func megabytes(n uint64) string {
	return fmt.Sprintf("%d MB", (n+500_000)/1_000_000)
}

// plural says "1 cell", "3 cells".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
