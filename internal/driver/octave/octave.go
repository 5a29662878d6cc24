// Package octave is the GNU Octave runtime: octave-cli's own REPL driven in
// the terminal family over pipes (--interactive keeps it a REPL on a pipe:
// an error or SIGINT returns to its prompt). A cell is written to a file
// and run with eval(fileread(…)), so it may define functions, which a
// sourced script file could not begin with.
package octave

import (
	"fmt"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// Profile is Octave's terminal profile.
var Profile = &terminal.Profile{
	Info: driver.Info{
		Exit: "exit",
		Name: "octave", Family: "terminal", Ext: ".m",
		Exes: []string{"octave-cli", "octave"}, EnvVar: "POLYREPL_OCTAVE",
		Needs: "GNU Octave (Debian: octave)",
		Limits: "values are printed by Octave as output (\"ans = 42\"), there is no separate " +
			"value; a cell stops at its first error; a cell's current figure comes back as a " +
			"640x480 PNG and its figures are closed after (drawing needs gnuplot and fonts: " +
			"Debian's gnuplot-nox and fonts-freefont-otf); input(), keyboard and a subprocess reading stdin " +
			"ask (status input), taking lines, not end of file; a cell that changes PS1 " +
			"never ends (polyrepl reads the prompt); exit ends the session",
		VersionArgs: []string{"--version"},
	},
	Args:  []string{"--interactive", "--no-line-editing", "--quiet", "--no-window-system"},
	Files: map[string]string{"polyrepl_look.m": lookFile},
	Setup: func(m terminal.Mark) []string {
		// Figures are drawn off screen (there is no display) and shown at
		// a cell's end as its plot; gnuplot's own warning about itself is
		// not the cell's.
		return []string{`PS1(""); PS2(""); more off; page_screen_output(false); ` +
			`set(0, "defaultfigurevisible", "off"); warning("off", "Octave:gnuplot-graphics"); addpath(` + terminal.SingleQuoted(m.Dir()) + `);`}
	},
	// The prompt says the REPL waits for a command: a cell that reads
	// standard input (input, keyboard, a subprocess) asks.
	PromptMark: func(m terminal.Mark) string {
		h, t := m.Halves("prompt")
		return fmt.Sprintf(`PS1([%s %s "\n"]);`, terminal.SingleQuoted(h), terminal.SingleQuoted(t))
	},
	// A cell's current figure comes back as a 640×480 PNG, and its
	// figures are closed after, as a notebook's inline plots are.
	Plot: func(file, code string) ([]string, []string) {
		return []string{""}, []string{`if !isempty(get(0, "children")), polyrepl_w = warning(); warning("off", "all"); try, print(gcf(), ` + terminal.SingleQuoted(file) +
			`, "-dpngcairo", "-S640,480"); catch polyrepl_err, disp(["polyrepl: the figure could not be saved: " polyrepl_err.message]); end, warning(polyrepl_w); close all; clear polyrepl_w polyrepl_err; end`}
	},
	// fflush's result is dropped by an assignment: as a statement it set
	// ans (to 0), so the end mark took the cell's ans and a look would.
	Print: func(head, tail string) string {
		return fmt.Sprintf(`[~] = fflush(stderr); printf("%%s%%s\n", %s, %s); [~] = fflush(stdout);`, terminal.SingleQuoted(head), terminal.SingleQuoted(tail))
	},
	Version: `disp(OCTAVE_VERSION)`,
	Load:    func(path string) string { return "eval(fileread(" + terminal.SingleQuoted(path) + "));" },
	// A look (vars.go) is also a cell's names.
	Vars:      vars,
	ParseVars: parseVars,
	Error:     terminal.Pattern(`^error: `),
}

func init() { driver.Register(terminal.Driver{P: Profile}) }
