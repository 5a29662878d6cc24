package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// runner is one run of a command: the values of its flags, and what it
// does with them. Each command file declares its own, so that its flags,
// its synopsis and its help are written in one place.
type runner interface {
	// flags declares the command's flags on fs, bound to the runner's
	// fields.
	flags(fs *flagSet)
	// run does the command's work with the positional arguments.
	run(e *env, pos []string) int
}

// plain is a command without flags of its own.
type plain func(e *env, pos []string) int

func (plain) flags(*flagSet)                 {}
func (p plain) run(e *env, pos []string) int { return p(e, pos) }

// flagSet is a command's flags, declared for parsing and, in order, for
// its synopsis and help.
type flagSet struct {
	*flag.FlagSet
	defs []flagDef
}

// flagDef is one declared flag.
type flagDef struct {
	names []string // the first is the one the synopsis shows; the rest are aliases
	arg   string   // what the value is in the synopsis (SECS, PATH); "" for a switch
	def   string   // the default shown in help, if any
	usage string   // one line
}

func newFlagSet(name string) *flagSet { return &flagSet{FlagSet: flags(name)} }

// Var declares a flag of any kind under names ("t timeout"): the value v,
// shown as arg.
func (fs *flagSet) Var(v flag.Value, names, arg, usage string) {
	d := flagDef{names: strings.Fields(names), arg: arg, usage: usage}
	for _, n := range d.names {
		fs.FlagSet.Var(v, n, usage)
	}
	fs.defs = append(fs.defs, d)
}

// String declares a string flag whose default is def.
func (fs *flagSet) String(p *string, names, arg, def, usage string) {
	*p = def
	fs.Var((*stringValue)(p), names, arg, usage)
	fs.defs[len(fs.defs)-1].def = def
}

// Int declares an integer flag; its default is *p as the caller set it.
func (fs *flagSet) Int(p *int, names, arg, usage string) {
	fs.Var((*intValue)(p), names, arg, usage)
}

// Bool declares a switch.
func (fs *flagSet) Bool(p *bool, names, usage string) {
	fs.Var((*boolValue)(p), names, "", usage)
}

type stringValue string

func (s *stringValue) Set(v string) error { *s = stringValue(v); return nil }
func (s *stringValue) String() string     { return string(*s) }

type intValue int

func (n *intValue) Set(v string) error {
	i, err := strconv.ParseInt(v, 0, strconv.IntSize)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", v)
	}
	*n = intValue(i)
	return nil
}
func (n *intValue) String() string { return strconv.Itoa(int(*n)) }

type boolValue bool

func (b *boolValue) Set(v string) error {
	t, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q is not true or false", v)
	}
	*b = boolValue(t)
	return nil
}
func (b *boolValue) String() string   { return strconv.FormatBool(bool(*b)) }
func (b *boolValue) IsBoolFlag() bool { return true }

// dash spells a flag name as people type it: -t, --json.
func dash(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// synopsis is the command line of c, from its arguments and its flags.
func (c *command) synopsis(fs *flagSet) string {
	var b strings.Builder
	b.WriteString(c.name)
	if c.args != "" {
		b.WriteString(" " + c.args)
	}
	for _, d := range fs.defs {
		b.WriteString(" [" + dash(d.names[0]))
		if d.arg != "" {
			b.WriteString(" " + d.arg)
		}
		b.WriteString("]")
	}
	return b.String()
}

// declared returns a fresh runner of c and its flags.
func (c *command) declared() (runner, *flagSet) {
	r := c.new()
	fs := newFlagSet(c.name)
	r.flags(fs)
	return r, fs
}

// usage is c's synopsis, for errors and listings.
func (c *command) usage() string {
	_, fs := c.declared()
	return c.synopsis(fs)
}

// printFlags lists fs's flags, one a line, for help.
func printFlags(w io.Writer, fs *flagSet) {
	if len(fs.defs) == 0 {
		return
	}
	rows := make([]string, len(fs.defs))
	width := 0
	for i, d := range fs.defs {
		spelled := make([]string, len(d.names))
		for j, n := range d.names {
			spelled[j] = dash(n)
		}
		rows[i] = strings.Join(spelled, ", ")
		if d.arg != "" {
			rows[i] += " " + d.arg
		}
		width = max(width, len(rows[i]))
	}
	fmt.Fprint(w, "\nFlags:\n")
	for i, d := range fs.defs {
		line := d.usage
		if d.def != "" {
			line += " (default " + d.def + ")"
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, rows[i], line)
	}
}

// runCommand parses args by c's flags and runs it; -h and --help print
// its help instead.
func (e *env) runCommand(c *command, args []string) int {
	r, fs := c.declared()
	pos, err := parse(fs.FlagSet, args)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(e.stdout, c)
		return ExitOK
	}
	e.cmd = c
	if f := fs.Lookup("json"); f != nil && f.Value.String() == "true" {
		e.json = true
	}
	if err != nil {
		code := e.usageError(c, "%v", err)
		if uf := (*unknownFlag)(nil); errors.As(err, &uf) && strings.Contains(c.args, "CODE") {
			e.hintf("to pass code starting with '-', put `--` before it")
		}
		return code
	}
	return r.run(e, pos)
}

// jsonCmd is a command whose one flag is --json.
type jsonCmd struct {
	usage string // what --json prints
	json  bool
	do    func(e *env, pos []string, asJSON bool) int
}

func (j *jsonCmd) flags(fs *flagSet)            { fs.Bool(&j.json, "json", j.usage) }
func (j *jsonCmd) run(e *env, pos []string) int { return j.do(e, pos, j.json) }

// withJSON makes the runner of a command whose one flag is --json.
func withJSON(usage string, do func(e *env, pos []string, asJSON bool) int) func() runner {
	return func() runner { return &jsonCmd{usage: usage, do: do} }
}

// attachedValue says whether arg is a one-letter flag of fs that takes a
// value, given with the value attached as people type it (-t5 for -t 5),
// and which flag.
func attachedValue(fs *flag.FlagSet, arg string) (name string, ok bool) {
	if len(arg) < 3 || arg[0] != '-' || arg[1] == '-' || strings.Contains(arg, "=") {
		return "", false
	}
	f := fs.Lookup(arg[1:2])
	if f == nil {
		return "", false
	}
	if bf, isBool := f.Value.(interface{ IsBoolFlag() bool }); isBool && bf.IsBoolFlag() {
		return "", false
	}
	return f.Name, true
}
