package driver

import (
	"strconv"

	"github.com/polyrepl/polyrepl/internal/api"
)

// A runtime's facts (Info) travel from the holder that runs its driver to
// the daemon, which has no driver of its own: a holder of any build may
// send them, so the daemon holds them to these bounds where it reads them.
const (
	// FactLimit bounds each fact in words (its name, family, language,
	// exit, console lines, value format), in characters: the longest a
	// driver of this build says is under 50.
	FactLimit = 200
	// FactTextLimit bounds the facts in prose (what a runtime needs, its
	// known limits), in characters: the longest a driver of this build
	// says (R's limits) is under 800.
	FactTextLimit = 2000
	// FactItems bounds each list of the facts (executables, version
	// arguments), and FactLimit each of its entries.
	FactItems = 32
	// extLimit bounds a transcript's extension, in bytes after its dot.
	extLimit = 16
)

// Neutral are the facts of a runtime this binary has no driver for, which
// a holder of another build runs and did not describe: its name, a plain
// value display, a transcript of text. The session goes on with them; a
// restart, which starts the runtime anew, says what is missing.
func Neutral(runtime string) Info {
	return Info{Name: runtime, Family: "worker", Ext: ".txt"}
}

// Facts are the facts of runtime as this binary's registry has them: its
// driver's, or Neutral if it has none. It is for a holder that did not
// send its own (one of a build before holders did).
func Facts(runtime string) Info {
	if d, err := Lookup(runtime); err == nil {
		return d.Info()
	}
	return Neutral(runtime)
}

// Bounded returns i held to the facts' bounds, for facts read from
// another process: each text to FactLimit characters (prose to
// FactTextLimit), the cut said in it (api.Clip); each list to FactItems
// entries of FactLimit characters,
// the last kept entry saying how many were cut; and Ext to a file
// extension (a dot, then up to 16 letters, digits, '_', '+' or '-'), else
// ".txt": it names a file in the state directory, so it is never a path.
func (i Info) Bounded() Info {
	i.Name = api.Clip(i.Name, FactLimit, "runtime name")
	i.Family = api.Clip(i.Family, FactLimit, "family")
	if !validExt(i.Ext) {
		i.Ext = Neutral("").Ext
	}
	i.Lang = api.Clip(i.Lang, FactLimit, "language")
	i.Exes = boundList(i.Exes, "executable")
	i.EnvVar = api.Clip(i.EnvVar, FactLimit, "variable")
	i.AlsoEnvVar = api.Clip(i.AlsoEnvVar, FactLimit, "variable")
	i.Needs = api.Clip(i.Needs, FactTextLimit, "needs")
	i.Limits = api.Clip(i.Limits, FactTextLimit, "limits")
	i.NoFork = api.Clip(i.NoFork, FactTextLimit, "why it cannot fork")
	i.VersionArgs = boundList(i.VersionArgs, "version argument")
	i.Exit = api.Clip(i.Exit, FactLimit, "exit")
	i.ConsoleLines = api.Clip(i.ConsoleLines, FactLimit, "console lines")
	i.ValueFormat = api.Clip(i.ValueFormat, FactLimit, "value format")
	return i
}

// boundList holds list to FactItems entries of FactLimit characters
// each; a longer list's last kept entry says how many it had.
func boundList(list []string, what string) []string {
	if list == nil {
		return nil
	}
	n := min(len(list), FactItems)
	out := make([]string, n)
	for k := range n {
		out[k] = api.Clip(list[k], FactLimit, what)
	}
	if len(list) > FactItems {
		out[n-1] = "[" + what + "s cut: " + strconv.Itoa(len(list)) + " in all; showing the first " + strconv.Itoa(n-1) + "]"
	}
	return out
}

// validExt reports whether ext is a file extension a transcript's name
// can end with: a dot and 1 to extLimit letters, digits, '_', '+' or '-'.
func validExt(ext string) bool {
	if len(ext) < 2 || len(ext) > 1+extLimit || ext[0] != '.' {
		return false
	}
	for _, c := range []byte(ext[1:]) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '+', c == '-':
		default:
			return false
		}
	}
	return true
}
