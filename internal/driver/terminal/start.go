package terminal

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Starting a REPL on pipes or on a PTY, in its own process group or
// session.

// startPipes starts cmd (by start: driver.Launch's) with fd 0 a pipe and fds 1 and 2 one pipe, in its
// own process group; it returns the read end of the output and the write
// end of the input, and — if keep — the write end of the output, which
// the caller closes once the REPL has ended.
func startPipes(cmd *exec.Cmd, keep bool, start func(*exec.Cmd) error) (out, in, outKeep *os.File, err error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, nil, nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, outW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = start(cmd)
	inR.Close()
	if err != nil || !keep {
		outW.Close()
		outW = nil
	}
	if err != nil {
		outR.Close()
		inW.Close()
		return nil, nil, nil, err
	}
	return outR, inW, outW, nil
}

// startPTY starts cmd (by start) on a new pseudo-terminal with echo off, output
// untranslated and input kept on interrupts; the child leads a new session with the terminal as its
// controlling one. It returns the terminal's master side, and — if keep
// — its slave side, which the caller closes once the REPL has ended
// (until then the master reads no end of file).
func startPTY(cmd *exec.Cmd, keep bool, start func(*exec.Cmd) error) (master, slave *os.File, err error) {
	master, tty, err := pty.Open()
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if slave == nil {
			tty.Close()
		}
	}()
	if t, err := unix.IoctlGetTermios(int(tty.Fd()), getTermios); err == nil {
		t.Lflag &^= unix.ECHO | unix.ECHOE | unix.ECHOK | unix.ECHONL
		// Ctrl-C must not flush the input queue: the end mark after the
		// interrupted cell is waiting there.
		t.Lflag |= unix.NOFLSH
		t.Oflag &^= unix.OPOST
		unix.IoctlSetTermios(int(tty.Fd()), setTermios, t)
	}
	pty.Setsize(master, &pty.Winsize{Rows: 50, Cols: 200})
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := start(cmd); err != nil {
		master.Close()
		return nil, nil, err
	}
	if keep {
		slave = tty
	}
	return master, slave, nil
}
