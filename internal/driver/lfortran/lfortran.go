// Package lfortran is the Fortran runtime: LFortran's interactive mode
// driven in the terminal family on a pseudo-terminal (its prompt reads
// from a terminal). Cells are sent as typed.
//
// LFortran is not in Debian 12 and cannot be installed on the machines
// polyrepl is tested on, so this profile is tested by its commands only.
package lfortran

import (
	"fmt"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// Profile is LFortran's terminal profile.
var Profile = &terminal.Profile{
	Info: driver.Info{
		Exit: "stop",
		Name: "lfortran", Family: "terminal", Ext: ".f90", Lang: "fortran",
		Exes: []string{"lfortran"}, EnvVar: "POLYREPL_LFORTRAN",
		Needs: "LFortran (lfortran.org, conda-forge; not in Debian 12)",
		Limits: "profile-tested only (LFortran cannot be installed where polyrepl is " +
			"tested); values are printed by LFortran as output; defined names are not " +
			"listed; a line longer than 4,095 bytes is cut by the terminal",
		VersionArgs: []string{"--version"},
	},
	PTY:    true,
	Prompt: "> ",
	Print: func(head, tail string) string {
		return fmt.Sprintf(`print '(a)', "%s" // "%s"`, head, tail)
	},
	Error: terminal.Pattern(`^(semantic|syntax|tokenizer|parser) error: `),
}

func init() { driver.Register(terminal.Driver{P: Profile}) }
