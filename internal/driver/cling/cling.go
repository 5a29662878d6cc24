// Package cling is the C++ runtime ("cpp"): CERN's cling interpreter driven
// in the terminal family over pipes. Cells are sent as typed, since cling
// keeps top-level statements and declarations only when they arrive at its
// prompt (a loaded file must hold declarations alone).
//
// cling is not in Debian and cannot be installed on the machines polyrepl
// is tested on, so this profile is tested by its commands only.
package cling

import (
	"fmt"
	"strconv"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// Profile is cling's terminal profile.
var Profile = &terminal.Profile{
	Info: driver.Info{
		Exit: "exit()",
		Name: "cpp", Family: "terminal", Ext: ".cpp",
		Exes: []string{"cling"}, EnvVar: "POLYREPL_CPP",
		Needs: "cling (root.cern/cling; not in Debian)",
		Limits: "profile-tested only (cling cannot be installed where polyrepl is tested); " +
			"values are printed by cling as output (\"(int) 42\" for an expression without " +
			"a semicolon); defined names are not listed; a crash in a cell (a bad pointer) " +
			"ends the session",
		VersionArgs: []string{"--version"},
	},
	Args:   []string{"--nologo"},
	Prompt: "[cling]$ ",
	Setup: func(terminal.Mark) []string {
		return []string{"#include <cstdio>"}
	},
	Print: func(head, tail string) string {
		return fmt.Sprintf(`std::fflush(stderr); std::printf("%%s%%s\n", %s, %s); std::fflush(stdout);`, strconv.Quote(head), strconv.Quote(tail))
	},
	Version: `std::printf("%s\n", CLING_VERSION);`,
	Error:   terminal.Pattern(`(^|: )error: `),
}

func init() { driver.Register(terminal.Driver{P: Profile}) }
