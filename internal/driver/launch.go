package driver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os/exec"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/sandbox"
)

// StartTimeout bounds how long a runtime may take to become ready: a JVM,
// a pyenv shim or Julia loading a project take seconds.
const StartTimeout = 60 * time.Second

// Launch is what starting a runtime's process takes, whatever protocol it
// then speaks: every family (worker, terminal, and Jupyter kernels to
// come) starts its process through one, and supplies only the protocol —
// as the MCP SDK's CommandTransport owns a subprocess whatever runs over
// it. A family builds the command (Command), connects its streams, starts
// it and hands it to Await, which waits for the protocol to say ready.
type Launch struct {
	Runtime string // the runtime's name, for errors: "python"
	Needs   string // what the executable must be, for the hint: "Python 3.8 or later"
	EnvVar  string // the variable that chooses the executable: "POLYREPL_PYTHON"
	Spec    Spec

	// Args come after the executable; Project, if the runtime has
	// projects, turns Spec.Project into more; Extra come last (a worker
	// script and its sentinel).
	Args    []string
	Project func(dir string) []string
	Extra   []string
	// Env is the runtime's own additions to the caller's environment.
	Env []string
	// Trampoline starts a sandboxed runtime through the trampoline even
	// where Start confines it directly: for tests and benchmarks.
	Trampoline bool
}

// Command resolves the executable on the caller's PATH and builds the
// command: arguments, working directory, and the environment with the
// session's cookie, by which its whole tree is found later. The family
// sets the command's streams and process attributes.
//
// A sandboxed runtime (Spec.Sandbox) gets its private temporary
// directory, and is confined by Start; where that takes the trampoline
// (sandbox.Trampoline: macOS's sandbox-exec), the command runs the
// holder's own binary, which confines itself and then executes the
// runtime in its place — the same process, so its pid, start time,
// process group and terminal are the runtime's. ExeOf is the runtime's
// executable either way.
func (l Launch) Command() (*exec.Cmd, error) {
	exe, err := LookPath(l.Spec.Exe, l.Spec.Env, l.Spec.Cwd)
	if err != nil {
		return nil, err
	}
	args := append([]string{exe}, l.Args...)
	if l.Spec.Project != "" {
		if l.Project == nil {
			return nil, fmt.Errorf("the %s runtime takes no project directory", l.Runtime)
		}
		args = append(args, l.Project(l.Spec.Project)...)
	}
	args = append(args, l.Extra...)
	env := append(append(append([]string(nil), l.Spec.Env...), l.Env...), l.Spec.Cookie)
	path := exe
	if sb := l.Spec.Sandbox; sb != nil {
		env = append(env, sb.Env(env)...)
		if sandbox.Trampoline || l.Trampoline {
			if path, args, err = sb.Wrap(sandbox.Self(), args); err != nil {
				return nil, err
			}
		}
	}
	return &exec.Cmd{Path: path, Args: args, Dir: l.Spec.Cwd, Env: env}, nil
}

// Start starts a command Command built, in place of cmd.Start: a
// sandboxed runtime is started confined (sandbox.StartConfined), unless
// the trampoline confines it.
func (l Launch) Start(cmd *exec.Cmd) error {
	sb := l.Spec.Sandbox
	if sb == nil || ExeOf(cmd) != cmd.Path {
		return cmd.Start()
	}
	return sandbox.StartConfined(*sb, cmd.Start)
}

// ExeOf is the runtime's executable in a command Command built: the
// one the trampoline becomes, for a sandboxed runtime.
func ExeOf(cmd *exec.Cmd) string {
	if len(cmd.Args) > 3 && cmd.Args[1] == sandbox.Command {
		return cmd.Args[3]
	}
	return cmd.Path
}

// TreeOf is the process tree of a started command: its leader (with its
// start time, so a reused pid is never signalled) and the cookie.
func (l Launch) TreeOf(cmd *exec.Cmd) proc.Tree {
	start, _ := proc.StartTime(cmd.Process.Pid)
	return proc.Tree{Leader: proc.Proc{PID: cmd.Process.Pid, Start: start}, Cookie: l.Spec.Cookie}
}

// Started is a launched process as Await watches it.
type Started struct {
	Tree proc.Tree
	// Ready closes when the protocol says the runtime is ready.
	Ready <-chan struct{}
	// Exited receives the process's exit, once reaped.
	Exited <-chan Exit
	// OutEOF closes when its output has been read to the end, so that an
	// error can quote all it printed.
	OutEOF <-chan struct{}
	// Early is what it printed before it was ready.
	Early func() []byte
}

// Await waits until s is ready, and otherwise — it exited, StartTimeout
// passed, ctx was cancelled — ends its tree and says why, with what it
// printed and a hint at the executable.
func (l Launch) Await(ctx context.Context, s Started) error {
	timer := time.NewTimer(StartTimeout)
	defer timer.Stop()
	hint := fmt.Sprintf("is it %s? Choose another executable, or set $%s", l.Needs, l.EnvVar)
	select {
	case <-s.Ready:
		return nil
	case ex := <-s.Exited:
		<-OrSoon(s.OutEOF)
		if l.Spec.Sandbox != nil && ex.Code == sandbox.ExitConfine {
			return fmt.Errorf("the %s session's sandbox could not be enforced, so its runtime was not started%s", l.Runtime, Printed(s.Early()))
		}
		return fmt.Errorf("%s did not start a %s session: it %s before it was ready%s; %s",
			l.Spec.Exe, l.Runtime, ex.Describe(), Printed(s.Early()), hint)
	case <-timer.C:
	case <-ctx.Done():
	}
	s.Tree.Kill(500 * time.Millisecond)
	<-OrSoon(s.OutEOF)
	return fmt.Errorf("%s did not become ready within %s%s; %s", l.Spec.Exe, StartTimeout, Printed(s.Early()), hint)
}

// Nonce is n random bytes in hex, for the markers a protocol must not
// mistake for a cell's output.
func Nonce(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("cannot make a session nonce: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// earlyLimit bounds what is kept of the output before ready.
const earlyLimit = 8192

// Early keeps the first output of a process before it is ready, for the
// error if it never is. Its owner serializes the calls.
type Early struct{ b bytes.Buffer }

// Keep adds p, up to the limit.
func (e *Early) Keep(p []byte) {
	if room := earlyLimit - e.b.Len(); room > 0 {
		e.b.Write(p[:min(len(p), room)])
	}
}

// Bytes is what was kept.
func (e *Early) Bytes() []byte { return e.b.Bytes() }

// Reset forgets it, once the process is ready.
func (e *Early) Reset() { e.b = bytes.Buffer{} }

// Reap waits for a started command to end, then, in order: closes what
// the family writes to it (closeIn), sends the exit on exited (for
// Await), waits for the end of its output — or a short grace, if a child
// that outlived it holds the output open — and calls report with the
// exit. A family runs it in a goroutine of its own once cmd started.
func Reap(cmd *exec.Cmd, exited chan<- Exit, outEOF <-chan struct{}, closeIn func(), report func(Exit)) {
	ex := ExitOf(cmd.Wait())
	closeIn()
	exited <- ex
	<-OrSoon(outEOF)
	report(ex)
}
