// Package ghci is the Haskell runtime: GHC's own REPL, GHCi, driven in the
// terminal family over pipes (GHCi needs no terminal: it reads commands
// from a pipe and stops an evaluation on SIGINT). A cell is written to a
// file and run with :script, with its multi-line definitions grouped into
// :{ … :} blocks as a person would type them.
package ghci

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

// Profile is GHCi's terminal profile.
var Profile = &terminal.Profile{
	Info: driver.Info{
		Exit: ":quit",
		Name: "ghci", Family: "terminal", Ext: ".hs", Lang: "haskell",
		Exes: []string{"ghci"}, EnvVar: "POLYREPL_GHCI",
		Needs:  "GHC's ghci (Debian: ghc)",
		NoFork: "GHC's runtime system runs on threads, which a fork does not copy",
		Limits: "values are printed by GHCi as output (there is no separate value); a cell " +
			"stops at its first error, as :script does; lines starting at column 0 are " +
			"separate GHCi inputs unless they continue the definition above them (same " +
			"name, or its type signature), so write one definition's equations together; " +
			"getLine and other reads of stdin, and a subprocess reading it, ask (status input), " +
			"taking lines, not end of file; a cell that changes the prompt never ends (polyrepl " +
			"reads it); " +
			":load and :reload clear the session's bindings, as in GHCi",
		VersionArgs: []string{"--numeric-version"},
	},
	Setup: func(terminal.Mark) []string {
		return []string{`:set prompt ""`, `:set prompt-cont ""`}
	},
	// GHCi's prompt says it waits for a command (over pipes too): a cell
	// that reads stdin (getLine) asks. The runtime reads stdin on its IO
	// manager's thread, not its first.
	PromptMark: func(m terminal.Mark) string {
		h, t := m.Halves("prompt")
		return fmt.Sprintf(`:set prompt %q`, h+t+"\n")
	},
	ThreadReads: true,
	// A mark is printed by a bind statement, not an expression: GHCi
	// binds `it` to an expression's value, () included, so the end mark
	// took the cell's `it` and every look would.
	Print: func(head, tail string) string {
		return fmt.Sprintf(`() <- System.IO.hFlush System.IO.stderr >> Prelude.putStrLn (%q Prelude.++ %q) >> System.IO.hFlush System.IO.stdout`, head, tail)
	},
	Version:   `Prelude.putStrLn (Data.Version.showVersion System.Info.fullCompilerVersion)`,
	File:      Blocks,
	Load:      func(path string) string { return ":script " + path },
	Vars:      vars,
	ParseVars: parseVars,
	Binds:     binds,
	Error:     terminal.Pattern(`^(<interactive>|<cell \d+>|.*\.hs):\d+:\d+: error|^\*\*\* Exception: |^Exception: |^IO error: `),
}

func init() { driver.Register(terminal.Driver{P: Profile}) }

// Blocks groups a cell into GHCi inputs: a line starting at column 0
// starts a new input unless it continues the definition above it (an
// equation of the same name, or the definition under a type signature);
// indented and blank lines continue the input; inputs of more than one
// line are wrapped in :{ … :}. Blocks the user wrapped, and GHCi
// commands, pass as they are.
func Blocks(code string) string {
	var out strings.Builder
	var block []string
	head := ""
	flush := func() {
		for len(block) > 0 && strings.TrimSpace(block[len(block)-1]) == "" {
			block = block[:len(block)-1]
		}
		switch len(block) {
		case 0:
		case 1:
			out.WriteString(block[0] + "\n")
		default:
			out.WriteString(":{\n" + strings.Join(block, "\n") + "\n:}\n")
		}
		block, head = block[:0], ""
	}
	lines := strings.Split(strings.ReplaceAll(code, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.TrimSpace(l) == ":{":
			flush()
			for ; i < len(lines); i++ {
				out.WriteString(lines[i] + "\n")
				if strings.TrimSpace(lines[i]) == ":}" {
					break
				}
			}
		case strings.HasPrefix(l, ":"):
			flush()
			out.WriteString(l + "\n")
		case l == "" || unicode.IsSpace(rune(l[0])):
			if len(block) > 0 {
				block = append(block, l)
			}
		default:
			name := defines(l)
			if len(block) == 0 || name == "" || name != head {
				flush()
			}
			block = append(block, l)
			head = name
		}
	}
	flush()
	return out.String()
}

// defines is the name a top-level line declares or gives an equation or
// signature for, or "".
var defRE = terminal.Pattern(`^\(?([a-z_][\w']*|[!#$%&*+./<=>?@\\^|~:-]+)\)?\s*(::|[^=]*=|[^=]*\|)`)

func defines(line string) string {
	if m := defRE().FindStringSubmatch(line); m != nil {
		switch m[1] {
		case "let", "data", "type", "newtype", "class", "instance", "import", "where", "do", "if", "case":
			return ""
		}
		return m[1]
	}
	return ""
}

// binds reports whether a cell may bind names: unless each of its GHCi
// inputs is plainly an expression, it may (a definition, a declaration,
// a `<-` bind, a GHCi command such as :load). :show bindings takes
// milliseconds per hundred bindings, so evaluating cells skip it.
func binds(code string) bool {
	for _, l := range strings.Split(code, "\n") {
		if l == "" || unicode.IsSpace(rune(l[0])) {
			continue // a continuation: its head decides
		}
		if strings.HasPrefix(l, ":") || strings.Contains(l, "<-") || defRE().MatchString(l) {
			return true
		}
		switch strings.Fields(l)[0] {
		case "let", "data", "type", "newtype", "class", "instance", "import", "foreign", "pattern", "deriving":
			return true
		}
	}
	return false
}
