// Package sh is the POSIX shell runtime: dash (or the system's sh) driven
// in the terminal family on a pseudo-terminal, so that programs a cell
// runs see a terminal (isatty, progress bars, password prompts) and a
// person can attach to it as to a tmux pane (attach --raw). For a shell
// whose output must be exact bytes from pipes, use the bash runtime.
package sh

import (
	"fmt"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// Profile is the POSIX shell's terminal profile.
var Profile = &terminal.Profile{
	Info: driver.Info{
		Exit: "exit",
		Name: "sh", Family: "terminal", Ext: ".sh",
		Exes: []string{"dash", "sh"}, EnvVar: "POLYREPL_SH",
		Needs: "a POSIX shell (Debian: dash, always installed)",
		Limits: "runs on a terminal: programs see a tty, and a terminal's line discipline " +
			"applies (a typed line is cut at 4,095 bytes, but cells arrive as files); no " +
			"values: output, and the exit status (non-zero is an error); the names listed are " +
			"variables (dash lists no functions); read, and a program reading the terminal as its stdin, ask (status input; " +
			"end of file is the terminal's Ctrl-D); a cell that changes PS1 never ends (polyrepl reads the " +
			"prompt); exec PROGRAM replaces the shell and ends the session",
		VersionArgs: []string{"-c", "echo POSIX sh"},
	},
	Args: []string{"-i"},
	PTY:  true,
	Setup: func(m terminal.Mark) []string {
		eh, et := m.Halves("error")
		return []string{
			"PS1=''; PS2=''",
			// Says the last status, if it was a failure, as an error mark.
			fmt.Sprintf(`__polyrepl_status() { [ "$1" -eq 0 ] || printf '%%s%%s exit status %%s\n' '%s' '%s' "$1"; }`, eh, et),
			// The names the shell starts with: not the session's own.
			baseSetup,
		}
	},
	// The prompt says the shell waits for a command: a cell whose read
	// (read, a program reading the terminal as its stdin) waits asks.
	PromptMark: func(m terminal.Mark) string {
		h, t := m.Halves("prompt")
		// PS1 holds the mark's halves by name, expanded as the shell
		// prints it: its value never holds the mark whole, so set (a
		// look's, or a cell's) prints no prompt mark.
		return fmt.Sprintf(`__polyrepl_ph='%s'; __polyrepl_pt='%s'; PS1="$(printf '%%s\n_' '${__polyrepl_ph}${__polyrepl_pt}')"; PS1="${PS1%%_}"`, h, t)
	},
	RawPrompt: "$ ",
	Print: func(head, tail string) string {
		return fmt.Sprintf(`__polyrepl_status $?; printf '%%s%%s\n' '%s' '%s'`, head, tail)
	},
	Load: func(path string) string { return ". " + path },
	// A look (vars.go) is also a cell's names.
	Vars:      vars,
	ParseVars: parseVars,
}

func init() { driver.Register(terminal.Driver{P: Profile}) }
