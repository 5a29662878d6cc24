package client

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/proc"
	"golang.org/x/sys/unix"
)

// startWait bounds how long a client waits for a daemon it started.
const startWait = 10 * time.Second

// isNotRunning tells a connection error that means "no daemon here" (start
// one) from one that means "something is wrong" (say so).
func isNotRunning(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

// IsNotRunning reports whether err means that no daemon is listening.
func IsNotRunning(err error) bool {
	var ce *ConnError
	return errors.As(err, &ce) && isNotRunning(ce.Err)
}

// probeEvery is how often a client waiting for a daemon that refused to
// start looks at the locks: each look takes them for an instant, when
// a daemon starting would be refused.
const probeEvery = 50 * time.Millisecond

// refusedStatus is the exit status of `polyrepl daemon` when another
// daemon keeps the state directory or holds the socket (cli.ExitUsage):
// not a failure for a client that raced to start one.
const refusedStatus = 2

// startDaemon launches `polyrepl daemon` detached — its own process
// session, stdin from /dev/null, output to the log beside the socket — and
// waits until it answers, at Socket or where the daemon that keeps
// StateDir says. Two clients racing here end up with one daemon: the
// daemon takes the state directory's lock and the socket's, and the
// loser refuses to run.
func (c *Client) startDaemon(ctx context.Context) error {
	dir := filepath.Dir(c.Socket)
	if err := paths.EnsurePrivateDir(dir); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the polyrepl binary to start the daemon: %w", err)
	}
	logPath := filepath.Join(dir, paths.LogName)
	logf, err := paths.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return fmt.Errorf("cannot open the daemon log: %w", err)
	}
	defer logf.Close()
	// The daemon gets 0, 1 and 2 and nothing else: a descriptor this
	// process inherited open (a shell's, a harness's pipe) must not reach
	// it, nor through it every runtime.
	proc.CloseOnExecInherited()
	spawn := func() (<-chan error, error) {
		cmd := exec.Command(exe, "daemon")
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.Dir = "/"
		cmd.Env = daemonEnv(os.Environ())
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("cannot start the daemon (%s daemon): %w", exe, err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		return exited, nil
	}
	exited, err := spawn()
	if err != nil {
		return err
	}

	deadline := time.Now().Add(startWait)
	var probed time.Time
	for time.Now().Before(deadline) {
		conn, err := c.dial(ctx)
		if err == nil {
			conn.Close()
			return nil
		}
		if !isNotRunning(err) {
			return err
		}
		if exited == nil && time.Since(probed) > probeEvery {
			// The daemon that refused ours may have been on its way out
			// (it was just stopped): once it has let go, start another.
			probed = time.Now()
			if c.Gone() {
				if exited, err = spawn(); err != nil {
					return err
				}
			}
		}
		select {
		case err := <-exited:
			exited = nil
			// It refused: another daemon holds a lock, and answers
			// soon (keep polling) or is leaving (start another once it
			// is gone).
			var ee *exec.ExitError
			if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == refusedStatus) {
				return fmt.Errorf("the daemon failed to start (%v): %s", err, logTail(logPath))
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return fmt.Errorf("the daemon did not answer within %s; see its log %s: %s", startWait, logPath, logTail(logPath))
}

// logTail returns the last lines of the daemon log, for error messages.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log)"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, "\n")
}

// lockFree reports whether no daemon holds the lock at path. It takes the
// lock for an instant to know; a daemon starting in that instant loses
// the race and refuses to run, and its client starts another. A file
// there that is not a lock of the user's (a planted link or FIFO) is
// not opened, and counts as free: the daemon started next refuses it,
// saying why.
func lockFree(path string) bool {
	f, err := paths.OpenFile(path, os.O_RDONLY)
	if err != nil {
		return !errors.Is(err, fs.ErrPermission)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return false
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return true
}

// Gone reports whether no daemon holds the locks this client's daemon
// held — its socket directory's, where it was reached, and the state
// directory's — so the one it stopped has exited, not only stopped
// answering, and one this client starts is not refused.
func (c *Client) Gone() bool {
	if !lockFree(filepath.Join(filepath.Dir(c.Reached()), paths.LockName)) ||
		!lockFree(filepath.Join(filepath.Dir(c.Socket), paths.LockName)) {
		return false
	}
	return c.StateDir == "" || lockFree(filepath.Join(c.StateDir, paths.StateLockName))
}

// sessionCookie starts the entry that marks a session's processes
// (session.CookieVar).
const sessionCookie = "POLYREPL_SESSION="

// daemonEnv is env without a session's cookie: a daemon started from a
// cell of a session is no process of that session, and every holder
// refuses a peer that carries one.
func daemonEnv(env []string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, sessionCookie) {
			out = append(out, e)
		}
	}
	return out
}
