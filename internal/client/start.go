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

// startDaemon launches `polyrepl daemon` detached — its own process
// session, stdin from /dev/null, output to the log beside the socket — and
// waits until it answers. Two clients racing here end up with one daemon:
// the daemon takes a lock, and the loser exits quietly.
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
	for time.Now().Before(deadline) {
		conn, err := c.dial(ctx)
		if err == nil {
			conn.Close()
			return nil
		}
		if !isNotRunning(err) {
			return err
		}
		select {
		case err := <-exited:
			// It may have lost the race to another daemon; keep polling
			// unless it failed.
			if err != nil {
				return fmt.Errorf("the daemon failed to start (%v): %s", err, logTail(logPath))
			}
			exited = nil
			// Or the daemon holding the lock was on its way out (it was
			// just stopped) and has let go of it since: start another.
			if lockFree(filepath.Join(dir, paths.LockName)) {
				if exited, err = spawn(); err != nil {
					return err
				}
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
// the race and exits quietly, and its client starts another.
func lockFree(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return false
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return true
}

// Gone reports whether no daemon holds this client's daemon lock: the one
// it stopped has exited, not only stopped answering.
func (c *Client) Gone() bool { return lockFree(filepath.Join(filepath.Dir(c.Socket), paths.LockName)) }
