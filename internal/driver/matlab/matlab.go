// Package matlab is the MATLAB runtime: MATLAB's command window without
// its desktop, driven in the terminal family over pipes. A cell is written
// to a .m file and run with run(), so it may hold anything a script may.
//
// MATLAB cannot be installed on the machines polyrepl is tested on (it is
// licensed), so this profile is tested by its commands only.
package matlab

import (
	"fmt"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// Profile is MATLAB's terminal profile.
var Profile = &terminal.Profile{
	Info: driver.Info{
		Exit: "exit",
		Name: "matlab", Family: "terminal", Ext: ".m",
		Exes: []string{"matlab"}, EnvVar: "POLYREPL_MATLAB",
		Needs: "MATLAB (licensed; matlab on PATH or $POLYREPL_MATLAB)",
		Limits: "profile-tested only (MATLAB cannot be installed where polyrepl is tested); " +
			"values are printed by MATLAB as output (\"ans = 42\"); a cell stops at its first " +
			"error; functions must be defined at the end of a cell, as in scripts; figures " +
			"need saveas or exportgraphics (no display)",
		VersionArgs: []string{"-batch", "disp(version)"},
	},
	Args:   []string{"-nodesktop", "-nosplash", "-nodisplay"},
	Prompt: ">> ",
	Print: func(head, tail string) string {
		return fmt.Sprintf(`fprintf('%%s%%s\n', %s, %s);`, terminal.SingleQuoted(head), terminal.SingleQuoted(tail))
	},
	Version: `disp(version)`,
	Load:    func(path string) string { return "run(" + terminal.SingleQuoted(path) + ");" },
	Names:   "ans_polyrepl_names = who; fprintf('%s\\n', ans_polyrepl_names{~strcmp(ans_polyrepl_names, 'ans_polyrepl_names')}); clear ans_polyrepl_names",
	Error:   terminal.Pattern(`^(Error|Error using|Error in|Undefined) `),
	Setup: func(terminal.Mark) []string {
		return []string{"more off"}
	},
}

func init() { driver.Register(terminal.Driver{P: Profile}) }
