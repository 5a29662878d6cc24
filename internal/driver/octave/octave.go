// Package octave is the GNU Octave runtime: octave-cli's own REPL driven in
// the terminal family over pipes (--interactive keeps it a REPL on a pipe:
// an error or SIGINT returns to its prompt). A cell is written to a file
// and run with eval(fileread(…)), so it may define functions, which a
// sourced script file could not begin with.
package octave

import (
	"fmt"
	"regexp"

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
			"value; a cell stops at its first error; plots need a file output (print -dpng) " +
			"since there is no display; a cell reading stdin (input, keyboard) reads " +
			"polyrepl's next commands instead; exit ends the session",
		VersionArgs: []string{"--version"},
	},
	Args: []string{"--interactive", "--no-line-editing", "--quiet", "--no-window-system"},
	Setup: func(terminal.Mark) []string {
		return []string{`PS1(""); PS2(""); more off; page_screen_output(false);`}
	},
	Print: func(head, tail string) string {
		return fmt.Sprintf(`fflush(stderr); printf("%%s%%s\n", %s, %s); fflush(stdout);`, terminal.SingleQuoted(head), terminal.SingleQuoted(tail))
	},
	Version: `disp(OCTAVE_VERSION)`,
	Load:    func(path string) string { return "eval(fileread(" + terminal.SingleQuoted(path) + "));" },
	Names:   `printf("%s\n", who(){:});`,
	Error:   regexp.MustCompile(`^error: `),
}

func init() { driver.Register(terminal.Driver{P: Profile}) }
