// Package gnuplot is the gnuplot runtime: gnuplot's own command line driven
// in the terminal family over pipes (gnuplot reading a pipe reports an
// error and goes on, and SIGINT stops a running command). A cell is written
// to a file and run with load, which stops at its first error.
package gnuplot

import (
	"fmt"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// Profile is gnuplot's terminal profile.
var Profile = &terminal.Profile{
	Info: driver.Info{
		Exit: "exit",
		Name: "gnuplot", Family: "terminal", Ext: ".gp",
		Exes: []string{"gnuplot"}, EnvVar: "POLYREPL_GNUPLOT",
		Needs: "gnuplot (Debian: gnuplot-nox, or gnuplot-qt for windows)",
		Limits: "gnuplot has no values: print writes output; a cell stops at its first " +
			"error; a cell's plot comes back as a 640x480 PNG (the last plot of the cell), " +
			"until a cell chooses a terminal (set terminal dumb draws text, svg with " +
			"set output writes a file); pause -1 and system(\"cat\") ask for input, " +
			"answered with lines (end of file would end gnuplot); an interrupt jumps out " +
			"of whatever gnuplot is doing, and now and then (about 1 in 300 interrupts of " +
			"a while loop) that aborts gnuplot, ending the session",
		VersionArgs: []string{"--version"},
	},
	Print: func(head, tail string) string {
		return fmt.Sprintf(`print %s.%s`, terminal.SingleQuoted(head), terminal.SingleQuoted(tail))
	},
	Version: `print sprintf("%g.%s", GPVAL_VERSION, GPVAL_PATCHLEVEL)`,
	Load:    func(path string) string { return "load " + terminal.SingleQuoted(path) },
	// gnuplot prompts only on a terminal, and load keeps the file open.
	LoadHoldsFile: true,
	// A look (vars.go) is also a cell's names.
	Vars:      vars,
	ParseVars: parseVars,
	Error:     terminal.Pattern(`^\s*(".*" )?line \d+: `),
	// A cell's plots go to a 640×480 PNG while the terminal is gnuplot's
	// own default (no display: "unknown"), and it is put back after; a
	// cell that sets a terminal or an output, and every cell once the user
	// chose a terminal, is left alone.
	Plot: func(file, code string) ([]string, []string) {
		if setsTerminal().MatchString(code) {
			return nil, nil
		}
		f := terminal.SingleQuoted(file)
		return []string{`if (GPVAL_TERM eq "unknown") { set terminal pngcairo size 640,480; set output ` + f + ` }`},
			[]string{`if (GPVAL_OUTPUT eq ` + f + `) { set output; set terminal unknown }`}
	},
}

func init() { driver.Register(terminal.Driver{P: Profile}) }

// setsTerminal matches a command choosing a terminal or an output, in
// any of gnuplot's abbreviations ("set term", "set o").
var setsTerminal = terminal.Pattern(`(?m)(^|;)\s*set\s+(t|te|ter|term|termi|termin|termina|terminal|o|ou|out|outp|outpu|output)\b`)

// predefined are the variables gnuplot defines itself.
var predefined = map[string]bool{"pi": true, "I": true, "NaN": true, "VoxelDistance": true, "ARGC": true, "ARG0": true, "ARGV": true}
