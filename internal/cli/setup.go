package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/render"
	"github.com/polyrepl/polyrepl/internal/sandbox"
	"github.com/polyrepl/polyrepl/internal/setup"
)

func init() {
	register(&command{
		name:    "setup",
		args:    "CLIENT",
		summary: "register the MCP server with an agent: " + strings.Join(setup.Names(), ", "),
		help: `Prints how to register this polyrepl binary (by its absolute path) as an
MCP server with CLIENT, and with --write makes that edit in the client's
config file: a backup of the file beside it, then the new file written
whole and renamed into place with the old one's mode. Only polyrepl's
entry changes — other servers, settings, comments and layout stay — and
running it again changes nothing. A file that does not parse is refused
and left as it was.

The entry runs ` + "`polyrepl mcp --max-wait 50`" + `: a call on a long cell replies
"still running" after 50 s, before the client's own limit (60 s for most
clients, and Codex's tool_timeout_sec, which is written too), and the
cell goes on for ` + "`wait`" + ` to collect. Restart the client to load the entry.

--sandbox POLICY (read-only, workspace-write or full) and --network on|off
add ` + "`--sandbox POLICY --network on|off`" + ` to the entry's ` + "`polyrepl mcp`" + `: every
session the agent creates has that sandbox, and the agent cannot ask for
more (workspace-write writes where the client starts the server,
usually the project's directory). Run setup again without them to
register an unconfined server; --remove takes the entry out whatever it
gives.

--remove undoes --write: it takes polyrepl's entry (and only it) out of the
file, keeping a backup of the file as it was; a file that held nothing
else (--write created it) is deleted, with the directories made for it
that are left empty. It lists the backups polyrepl has kept beside the
file, for you to delete once the client works as you want. Run again, it
says there is nothing to remove. --dry-run, with --write or --remove, says
what would change and changes nothing.

Exit status: 0 done (or nothing to do); 2 unknown client or a file refused;
1 the file could not be written.`,
		more: printClients,
		new:  func() runner { return &setupCmd{} },
	})
}

type setupCmd struct {
	write, remove, dry, json bool
	file                     string
	sandbox                  policyValue
	network                  networkValue
}

func (s *setupCmd) flags(fs *flagSet) {
	fs.Bool(&s.write, "write", "edit the client's config file in place (a backup is kept beside it)")
	fs.Bool(&s.remove, "remove", "take polyrepl's entry out of the client's config file, undoing --write (a backup is kept beside it)")
	fs.Bool(&s.dry, "dry-run", "with --write or --remove: say what would change, and change nothing")
	fs.String(&s.file, "file", "PATH", "", "edit this file instead of the client's own (e.g. a project's .mcp.json)")
	fs.Var(&s.sandbox, "sandbox", "POLICY", "register the server with this sandbox, for every session the agent creates and the most it may reach: read-only, workspace-write or full")
	fs.Var(&s.network, "network", "on|off", "with --sandbox: the sandbox's network (default off, on for full)")
	fs.Bool(&s.json, "json", "print the registration, and what --write or --remove did, as JSON")
}

// setupReply is `setup --json`.
type setupReply struct {
	Client      string   `json:"client"`
	Title       string   `json:"title"`
	File        string   `json:"file"`
	Format      string   `json:"format"`
	Command     string   `json:"command"`
	Args        []string `json:"args"`
	MaxWait     int      `json:"max_wait"`
	ToolTimeout int      `json:"tool_timeout_sec,omitempty"`
	Entry       string   `json:"entry"`                  // the entry as it appears in the file
	CommandLine string   `json:"command_line,omitempty"` // the client's own command for it
	Written     bool     `json:"written"`                // --write was given and succeeded
	Created     bool     `json:"created,omitempty"`
	Changed     bool     `json:"changed"`
	Backup      string   `json:"backup,omitempty"`
	Warning     string   `json:"warning,omitempty"`
	// What --remove did (with --dry-run, would do): the entry it took
	// out, whether it deleted the file and which emptied directories,
	// and the backups polyrepl keeps of the file.
	Removed     bool     `json:"removed,omitempty"`
	RemovedText string   `json:"removed_entry,omitempty"`
	Deleted     bool     `json:"deleted,omitempty"`
	Dirs        []string `json:"dirs_removed,omitempty"`
	Backups     []string `json:"backups,omitempty"`
	DryRun      bool     `json:"dry_run,omitempty"`
}

func (s *setupCmd) run(e *env, pos []string) int {
	c := e.cmd
	if len(pos) != 1 {
		return e.usageError(c, "name the client to set up: %s", orList(setup.Names()))
	}
	cl, ok := setup.Lookup(pos[0])
	if !ok {
		return e.usageError(c, "unknown client %q; polyrepl sets up %s", pos[0], orList(setup.Names()))
	}
	if s.write && s.remove {
		return e.usageError(c, "give --write or --remove, not both")
	}
	if s.dry && !s.write && !s.remove {
		return e.usageError(c, "--dry-run goes with --write or --remove (without them, setup only prints)")
	}
	sb := setup.Sandbox{Policy: string(s.sandbox), Network: string(s.network)}
	if sb.Network != "" && sb.Policy == "" {
		return e.usageError(c, "--network shapes the server's sandbox: give --sandbox read-only or --sandbox workspace-write with it")
	}
	if sb.Policy != "" {
		if _, err := sandbox.Normal(&api.Sandbox{Policy: sb.Policy, Network: sb.Network}); err != nil {
			return e.usageError(c, "--sandbox %s: %v", sb.Policy, err)
		}
	}
	if s.remove && sb.Policy != "" {
		return e.usageError(c, "--remove takes polyrepl's entry out whatever its sandbox: give it without --sandbox and --network")
	}
	exe, err := executable()
	if err != nil {
		return e.setupFail(ExitFailed, api.CodeInternal, fmt.Errorf("cannot find this binary's path: %w", err), "")
	}
	file := s.file
	if file == "" {
		home, _ := os.UserHomeDir()
		if file, err = cl.File(setup.Env{Home: home, GOOS: runtime.GOOS, Getenv: os.Getenv}); err != nil {
			return e.setupFail(ExitUsage, api.CodeUsage, err, "")
		}
	} else if file, err = filepath.Abs(file); err != nil {
		return e.setupFail(ExitUsage, api.CodeUsage, err, "")
	}
	srv := cl.Server(exe, sb)
	reply := setupReply{
		Client: cl.Name, Title: cl.Title, File: file, Format: string(cl.Format),
		Command: srv.Command, Args: srv.Args, MaxWait: setup.MaxWait, ToolTimeout: cl.ToolTimeout,
		Entry: cl.Snippet(srv), CommandLine: cl.CommandLine(srv),
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		reply.Warning = fmt.Sprintf("%s is a temporary build (go run) that will be gone; install polyrepl somewhere stable (e.g. `install -m 755 polyrepl ~/.local/bin/`) and run setup from there", exe)
		if !s.json {
			fmt.Fprintf(e.stderr, "polyrepl: warning: %s\n", reply.Warning)
		}
	}
	if s.remove {
		return s.runRemove(e, cl, file, reply)
	}
	if !s.write {
		if s.json {
			printJSON(e.stdout, reply)
		} else {
			printRegistration(e.stdout, cl, reply)
		}
		return ExitOK
	}
	r, err := setup.Write(cl, file, srv, setup.Options{Now: time.Now(), DryRun: s.dry})
	if pe := (*setup.ParseError)(nil); errors.As(err, &pe) {
		return e.setupFail(ExitUsage, api.CodeBadRequest, err, "once the file parses, run this again; or add polyrepl's entry by hand:\n"+indent(reply.Entry, "    "))
	}
	if err != nil {
		return e.setupFail(ExitFailed, api.CodeInternal, err, "")
	}
	reply.File, reply.Written, reply.Created, reply.Changed, reply.Backup, reply.DryRun = r.File, !s.dry, r.Created, r.Changed, r.Backup, s.dry
	if s.json {
		printJSON(e.stdout, reply)
		return ExitOK
	}
	switch {
	case s.dry && !r.Changed:
		fmt.Fprintf(e.stdout, "%s already registers polyrepl (%s); --write would change nothing.\n", r.File, commandText(srv))
		return ExitOK
	case s.dry && r.Created:
		fmt.Fprintf(e.stdout, "--write would create %s, registering polyrepl:\n\n%s\n\nNothing was changed (--dry-run).\n", r.File, indent(reply.Entry, "    "))
		return ExitOK
	case s.dry:
		fmt.Fprintf(e.stdout, "--write would register polyrepl in %s, keeping a backup of the file beside it:\n\n%s\n\nNothing was changed (--dry-run).\n", r.File, indent(reply.Entry, "    "))
		return ExitOK
	case !r.Changed:
		fmt.Fprintf(e.stdout, "%s already registers polyrepl (%s); nothing changed.\n", r.File, commandText(srv))
		return ExitOK
	case r.Created:
		fmt.Fprintf(e.stdout, "Created %s, registering polyrepl (%s).\n", r.File, commandText(srv))
	default:
		fmt.Fprintf(e.stdout, "Registered polyrepl (%s) in %s; the file as it was is in %s.\n", commandText(srv), r.File, r.Backup)
	}
	fmt.Fprintf(e.stdout, "Restart %s to load it.\n", cl.Title)
	return ExitOK
}

// runRemove takes polyrepl's registration out of file (--remove).
func (s *setupCmd) runRemove(e *env, cl setup.Client, file string, reply setupReply) int {
	home, _ := os.UserHomeDir()
	r, err := setup.Remove(cl, file, setup.Options{Now: time.Now(), DryRun: s.dry, Home: home})
	if pe := (*setup.ParseError)(nil); errors.As(err, &pe) {
		return e.setupFail(ExitUsage, api.CodeBadRequest, err, "once the file parses, run this again; or take the \""+setup.Name+"\" entry out of it by hand")
	}
	if err != nil {
		return e.setupFail(ExitFailed, api.CodeInternal, err, "")
	}
	reply.File, reply.Changed, reply.Backup, reply.DryRun = r.File, r.Changed && !s.dry, r.Backup, s.dry
	reply.Removed, reply.RemovedText, reply.Deleted, reply.Dirs, reply.Backups = r.Changed, r.Removed, r.Deleted, r.Dirs, r.Backups
	if s.json {
		printJSON(e.stdout, reply)
		return ExitOK
	}
	w := e.stdout
	switch {
	case !r.Changed:
		fmt.Fprintf(w, "%s does not register polyrepl; nothing to remove.\n", r.File)
	case s.dry && r.Deleted:
		fmt.Fprintf(w, "--remove would delete %s: it holds nothing but polyrepl's entry:\n\n%s\n\nNothing was changed (--dry-run).\n", r.File, indent(r.Removed, "    "))
	case s.dry:
		fmt.Fprintf(w, "--remove would take this out of %s, keeping a backup of the file beside it:\n\n%s\n\nNothing was changed (--dry-run).\n", r.File, indent(r.Removed, "    "))
	case r.Deleted:
		fmt.Fprintf(w, "Deleted %s: it held nothing but polyrepl's entry (%s).\n", r.File, oneLine(r.Removed))
		if len(r.Dirs) > 0 {
			fmt.Fprintf(w, "Deleted the directories left empty: %s.\n", strings.Join(r.Dirs, ", "))
		}
	default:
		fmt.Fprintf(w, "Removed polyrepl's entry from %s (%s); the file as it was is in %s.\n", r.File, oneLine(r.Removed), r.Backup)
	}
	if r.Changed && !s.dry {
		fmt.Fprintf(w, "Restart %s to let polyrepl go.\n", cl.Title)
	}
	if len(r.Backups) > 0 {
		fmt.Fprintf(w, "polyrepl keeps %s of %s beside it, the file as it was before each edit; delete them once %s works as you want:\n    rm %s\n",
			render.Plural(len(r.Backups), "backup"), r.File, cl.Title, strings.Join(quoteAll(r.Backups), " "))
	}
	return ExitOK
}

// oneLine is an entry's text on one line, its runs of space as one, and
// at most 240 characters of it (the cut said).
func oneLine(text string) string {
	s, _ := bound.HeadTail(strings.Join(strings.Fields(text), " "), 240)
	return strings.ReplaceAll(s, "\n", " ")
}

func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = setup.ShellQuote(w)
	}
	return out
}

// printRegistration tells a person what to register and where.
func printRegistration(w io.Writer, cl setup.Client, r setupReply) {
	if r.CommandLine != "" {
		fmt.Fprintf(w, "Register polyrepl with %s, for all your projects:\n\n    %s\n\n", cl.Title, r.CommandLine)
		fmt.Fprintf(w, "or add this to %s (`polyrepl setup %s --write` does it, keeping a backup):\n\n%s\n", r.File, cl.Name, indent(r.Entry, "    "))
	} else {
		fmt.Fprintf(w, "%s keeps its MCP servers in %s. Add polyrepl there (`polyrepl setup %s --write` does it, keeping a backup):\n\n%s\n", cl.Title, r.File, cl.Name, indent(r.Entry, "    "))
	}
	fmt.Fprintf(w, "\n--max-wait %d: a call on a long cell replies \"still running\" after %d s, before %s gives up on it; the cell goes on, and `wait` collects it.\n", r.MaxWait, r.MaxWait, cl.Title)
	if sb := serverSandbox(r.Args); sb != "" {
		fmt.Fprintf(w, "%s: every session the agent creates through polyrepl has this sandbox, and the agent cannot ask for more.\n", sb)
	}
	fmt.Fprintf(w, "`polyrepl setup %s --remove` takes the entry out again.\n", cl.Name)
}

// setupFail reports a setup error, as JSON with --json, and returns status.
func (e *env) setupFail(status int, code string, err error, hint string) int {
	if e.json {
		printJSON(e.stdout, api.ErrorReply{Error: err.Error(), Hint: hint, Code: code})
		return status
	}
	e.errorf("%v", err)
	if hint != "" {
		e.hintf("%s", hint)
	}
	return status
}

// executable is this binary's absolute path, symlinks resolved, so that a
// registration names the file itself and not a link that may move.
func executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Abs(exe)
}

func commandText(s setup.Server) string {
	return strings.Join(append([]string{s.Command}, s.Args...), " ")
}

func indent(text, prefix string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// orList joins words as "a, b, c or d".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// printClients lists the clients and their files, for help.
func printClients(w io.Writer) {
	home, _ := os.UserHomeDir()
	env := setup.Env{Home: home, GOOS: runtime.GOOS, Getenv: os.Getenv}
	fmt.Fprint(w, "\nClients:\n")
	for _, c := range setup.Clients() {
		file, err := c.File(env)
		if err != nil {
			file = "(" + err.Error() + ")"
		}
		fmt.Fprintf(w, "  %-15s %s: %s\n", c.Name, c.Title, file)
	}
}

// serverSandbox is the --sandbox and --network of a registration's
// arguments as given ("--sandbox workspace-write --network off"), or "".
func serverSandbox(args []string) string {
	var out []string
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--sandbox" || args[i] == "--network" {
			out = append(out, args[i], args[i+1])
		}
	}
	return strings.Join(out, " ")
}
