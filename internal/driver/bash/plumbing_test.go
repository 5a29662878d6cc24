package bash

import (
	"strings"
	"testing"
)

// TestPlumbing: what a cell may do to the shell that the session's own
// plumbing needs — options, traps, its standard streams and the worker's
// descriptors — neither ends the session nor loses a result: the cell
// that does it, an interrupt of the next (the whole escalation) and the
// one after all report, the variables live on, and what was put back is
// said in the note.
func TestPlumbing(t *testing.T) {
	for _, c := range []struct {
		code   string
		note   string // in the first cell's note
		out1   string // in the first cell's output
		outInt string // in the interrupted cell's output
		after  string // a cell run last, and what its output must hold
		want   string
	}{
		{code: "set -e; false; echo not here", note: "set -e stopped the cell at a failing command; the session stays up; set -e stays on"},
		{code: "set -e", note: "set -e stays on", after: "false; echo not here", want: ""},
		{code: "set -eT", note: "set -e stays on"},
		{code: "set -eu; f() { false; }; f; echo not here", note: "set -e stopped the cell"},
		{code: "set -u; echo $undefined_var", out1: "unbound variable"},
		{code: "set -o pipefail; false | true", after: "false | true; echo st=$?", want: "st=1"},
		{code: "set +E", note: "set -E was turned back on", after: `echo "$-"`, want: "E"},
		{code: "set -o functrace", after: `echo "$-"`, want: "T"},
		{code: "set -k"},
		{code: "set -m; sleep 0.1", note: "set -m was turned off", after: `echo "$-"`, want: "hiBE"},
		{code: "trap 'echo int-trap' INT", outInt: "int-trap", after: "trap -p INT", want: "trap -- 'echo int-trap' SIGINT"},
		{code: "trap 'echo \"err-trap $?\"' ERR; set -e; (exit 3); echo not here", out1: "err-trap 3", note: "set -e stopped the cell"},
		{code: "set -e; trap - ERR; false; echo not here", note: "set -e stopped the cell"},
		{code: "set -e; builtin trap 'echo err-b' ERR", note: "set -e stays on", after: "false; echo not here", want: "err-b"},
		{code: "trap 'echo exit-trap' EXIT"},
		{code: "trap 'echo dbg-trap' DEBUG", after: "trap -p DEBUG", want: "trap -- 'echo dbg-trap' DEBUG"},
		{code: "shopt -s extdebug; trap false DEBUG"},
		{code: "trap 'echo ret-trap' RETURN; f() { :; }; f"},
		{code: "trap() { builtin trap \"$@\"; echo mine; }", after: "trap '' USR1", want: "mine"},
		{code: "exit() { echo my-exit; }", after: "exit 3", want: "my-exit"},
		{code: "unalias -a; exit 4", note: "exit 4 was caught"},
		{code: "exec >/dev/null; echo gone", note: "standard output was put back"},
		{code: "exec 1>&-", note: "standard output was put back"},
		{code: "exec 2>/dev/null", note: "standard error was put back", after: "echo err >&2", want: "err"},
		{code: "exec 2>&-", note: "standard error was put back"},
		{code: "exec 0</dev/null", note: "standard input was put back"},
		{code: "exec 60<&- 61>&- 62>&- 63<&-; exec 60>/dev/null 61>/dev/null 62>/dev/null"},
	} {
		t.Run(c.code, func(t *testing.T) {
			s := start(t)
			r := s.run(t, "A=1; "+c.code)
			out := s.rec.TakeOutput()
			if !strings.Contains(r.Note, c.note) || c.note == "" && r.Note != "" {
				t.Errorf("note %q, want %q", r.Note, c.note)
			}
			if !strings.Contains(out, c.out1) || strings.Contains(out, "not here") {
				t.Errorf("output %q, want %q", out, c.out1)
			}
			// An interrupt of the next cell, through the whole escalation.
			if r, out := s.interruptCell(t, "sleep 100; echo not here"); r.Status != "interrupted" || !strings.Contains(out, c.outInt) || strings.Contains(out, "not here") {
				t.Errorf("the next cell: %+v, output %q, want %q", r, out, c.outInt)
			}
			if out := s.ok(t, `echo "A=$A"`); !strings.Contains(out, "A=1") {
				t.Errorf("A after the interrupt: %q", out)
			}
			if c.after != "" {
				s.run(t, c.after)
				if out := s.rec.TakeOutput(); !strings.Contains(out, c.want) || strings.Contains(out, "not here") {
					t.Errorf("%q: output %q, want %q", c.after, out, c.want)
				}
			}
			for _, stray := range []string{"dbg-trap", "ret-trap", "exit-trap"} {
				if out := s.ok(t, "echo done"); strings.Contains(out, stray) {
					t.Errorf("%s ran: %q", stray, out)
				}
			}
		})
	}
}
