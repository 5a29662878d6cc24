package cli

import (
	"errors"
	"os"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
	"github.com/polyrepl/polyrepl/internal/render"
)

func init() {
	register(&command{
		name:    "exec",
		args:    "NAME CODE|-",
		summary: "run one cell in a session, creating it on first use",
		help: `Runs CODE as one cell in session NAME and waits for it up to -t seconds
(default 30, at most 600). If the cell is still running then, exec returns
with status 124 and the cell goes on: ` + "`polyrepl wait NAME`" + ` collects the rest.
-t 0 starts the cell and returns at once (status 124 while it runs).
With "-", the code is read from standard input; code over 2 MiB is
refused with its size (exit status 2), and nothing is run.

Standard output carries what the cell printed and its value, nothing
else; polyrepl's notes (the session created, other clients' activity,
cuts, figures' files) and the cell's error go to standard error. On a
terminal the output shows as the cell prints it, a progress bar drawn in
place; Ctrl-C stops waiting, shows what came so far and leaves the cell
running (status 124). Elsewhere the reply comes whole at the end.

The first exec under a name creates the session, in the current directory
(or --cwd) with the caller's environment, in runtime --runtime (default
python; ` + "`polyrepl runtimes`" + ` lists them). The executable is --exe (--python
for Python), else $POLYREPL_<RUNTIME> (e.g. $POLYREPL_PYTHON, $POLYREPL_R),
else the runtime's usual command on PATH. --project DIR activates a project
(Julia, like julia --project). --memory SIZE (512M, 2G) limits a new
session's memory: its whole process tree through a cgroup where the
machine allows one (a delegated cgroup v2, a scope asked of systemd, a
cgroup v1 memory group), else each process with an rlimit
($POLYREPL_MEMORY_BY=rlimit asks for that); the default is the daemon's
$POLYREPL_MEMORY, else no limit. On macOS the kernel enforces no memory
limit polyrepl can set, and --memory is refused.

--kernel NAME (or --runtime jupyter:NAME) makes a session of an installed
Jupyter kernel; with --gateway URL (or $POLYREPL_GATEWAY) the kernel runs
on that Jupyter Server, Kernel Gateway or Enterprise Gateway instead, its
token taken from $POLYREPL_GATEWAY_TOKEN or the file
$POLYREPL_GATEWAY_TOKEN_FILE names (0600). http:// is refused to any
host but this machine's loopback unless --gateway-http.

--sandbox POLICY confines a new session's runtime and everything it
starts, enforced by the kernel: read-only (reads where allowed, writes
only its own temporary directory), workspace-write (also writes its cwd
and each --writable DIR) or full (no sandbox; the default, unless
$POLYREPL_SANDBOX names a policy). Under read-only and workspace-write
the places that usually hold secrets (~/.ssh, ~/.aws, keyrings, …) are
unreadable unless given with --readable DIR, and the network is off
unless --network on. A kernel that cannot enforce a part the policy needs
refuses the session, saying what it lacks, unless --sandbox-best-effort;
the creation line and ` + "`polyrepl sessions`" + ` say exactly what is enforced.
A live session's policy cannot change: kill it and exec again.

Exit status: 0 the cell finished, 1 it raised or the session died, 2 the
request was refused or the daemon unreachable, 3 the cell waits for input
(polyrepl input answers it), 124 still running.`,
		new: func() runner { return &execCmd{} },
	})
}

// execCmd is one exec: its flags, and the spawn inputs of a new session.
type execCmd struct {
	timeout secondsFlag
	spawn   client.SpawnInput
	sandbox sandboxFlags
	json    bool
}

func (x *execCmd) flags(fs *flagSet) {
	fs.Var(&x.timeout, "t timeout", "SECS", "seconds to wait for the cell (default 30, at most 600; 0 returns at once)")
	fs.String(&x.spawn.Runtime, "runtime", "R", "", "runtime of a new session (default python)")
	fs.String(&x.spawn.Exe, "exe", "PATH", "", "executable of a new session")
	fs.String(&x.spawn.Python, "python", "PATH", "", "Python interpreter of a new Python or IPython session (as --exe)")
	fs.String(&x.spawn.Cwd, "cwd", "DIR", "", "working directory of a new session (default the current one)")
	fs.String(&x.spawn.Project, "project", "DIR", "", "project directory to activate in a new session (Julia)")
	fs.String(&x.spawn.Memory, "memory", "SIZE", "", "memory limit of a new session (512M, 2G)")
	fs.String(&x.spawn.Kernel, "kernel", "NAME", "", "Jupyter kernel of a new session (as --runtime jupyter:NAME)")
	fs.String(&x.spawn.Gateway, "gateway", "URL", "", "Jupyter gateway to run a new session's kernel on (default $POLYREPL_GATEWAY)")
	fs.Bool(&x.spawn.GatewayHTTP, "gateway-http", "allow an http:// gateway that is not on this machine")
	x.sandbox.declare(fs, "a new session", "a new session's sandbox")
	fs.Bool(&x.json, "json", "print the result as JSON")
}

func (x *execCmd) run(e *env, pos []string) int {
	c := e.cmd
	if len(pos) != 2 {
		return e.usageError(c, "exec takes a session name and the code (or - for standard input), got %s", render.Plural(len(pos), "argument"))
	}
	name, src := pos[0], pos[1]
	if src == "-" {
		var status int
		if src, status = e.readStdin(false, "the code"); status != 0 {
			return status
		}
	}
	x.spawn.Base, _ = os.Getwd() // "" if it is gone: only relative paths need it
	x.spawn.Env = os.Environ()
	sp, err := client.BuildSpawn(x.spawn)
	if err != nil {
		return e.spawnFail(c, err)
	}
	if sp.Sandbox, err = x.sandbox.build(os.Getenv, x.spawn.Base); err != nil {
		return e.usageError(c, "%v", err)
	}
	sp.SandboxDefault = x.sandbox.fromEnv != "" && !x.sandbox.flagged()
	req := api.ExecRequest{Code: src, Timeout: x.timeout.v, Spawn: sp, Client: e.me()}
	if x.live(e) {
		return x.liveExec(e, name, req)
	}
	r, err := e.client.Exec(e.ctx, name, req)
	if err != nil {
		return e.fail(x.sandbox.explain(err))
	}
	return e.result(r, x.json)
}

// result prints a cell result and returns the exit status for it: the
// cell's output and value on standard output, polyrepl's words on
// standard error (with --json, all of it on standard output).
func (e *env) result(r api.CellResult, asJSON bool) int {
	if asJSON {
		r.Notes = render.Worded(r.Notes, render.People)
		printJSON(e.stdout, r)
	} else {
		render.Split(e.stdout, e.stderr, r, render.PeopleStyle)
	}
	e.versionWarning()
	return exitFor(r.Status)
}

// spawnFail tells a refused spawn input in the CLI's terms: by its flag.
func (e *env) spawnFail(c *command, err error) int {
	var se *client.SpawnError
	if !errors.As(err, &se) {
		return e.fail(err)
	}
	switch se.Kind {
	case client.SpawnNoDir:
		e.errorf("%v", se)
		if se.Field == "project" {
			e.hintf("give an existing project directory with --project")
		} else {
			e.hintf("give an existing directory with --cwd")
		}
		return ExitUsage
	case client.SpawnConflict:
		return e.usageError(c, "--%s and --%s name different executables; give one", se.Field, se.Other)
	case client.SpawnNotPython:
		return e.usageError(c, "--%s is for Python sessions; use --exe for %s", se.Field, se.Value)
	case client.SpawnNotJupyter:
		return e.usageError(c, "--%s is for Jupyter kernels, and the runtime asked for is %s; give --kernel NAME (or --runtime jupyter:NAME)", se.Field, se.Value)
	case client.SpawnNoBase:
		e.errorf("cannot find the current directory, from which --%s is taken", se.Field)
		e.hintf("give an absolute path with --%s", se.Field)
		return ExitUsage
	}
	return e.usageError(c, "%v", se.Err)
}
