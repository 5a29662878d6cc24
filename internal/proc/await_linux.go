package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// AwaitExit waits for p, a process that need not be this one's child (a
// fork of a session's runtime is its runtime's child, adopted by another
// holder), to end, and returns its wait status as its parent would see
// it. The status comes from the exit code a zombie's /proc/PID/stat keeps
// (field 52) until its parent reaps it; known is false when the parent
// reaped it first, or p was already gone when asked.
func AwaitExit(p Proc) (ws unix.WaitStatus, known bool, err error) {
	fd, err := pidfdOpen(p.PID, 0)
	if err != nil {
		return 0, false, fmt.Errorf("await the end of %v: open pidfd: %w", p, err)
	}
	defer unix.Close(fd)
	if s, err := procStat(p.PID); err != nil || s.start != p.Start {
		return 0, false, nil // gone, or another process now
	}
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil && !errors.Is(err, unix.EINTR) {
			return 0, false, fmt.Errorf("await the end of %v: %w", p, err)
		}
		if fds[0].Revents != 0 {
			break
		}
	}
	b, err := os.ReadFile(statPath(p.PID))
	if err != nil {
		return 0, false, nil // reaped already
	}
	s, err := parseStat(b)
	if err != nil || s.start != p.Start || !s.zombie() {
		return 0, false, nil
	}
	code, ok := statField(b, 52)
	if !ok {
		return 0, false, nil
	}
	n, err := strconv.Atoi(string(code))
	if err != nil {
		return 0, false, nil
	}
	return unix.WaitStatus(n), true, nil
}

// statField is field n (1-based, as in proc(5)) of a /proc/PID/stat line,
// counted after the command name.
func statField(line []byte, n int) ([]byte, bool) {
	end := bytes.LastIndexByte(line, ')')
	if end < 0 || n < 3 {
		return nil, false
	}
	f := bytes.Fields(line[end+1:])
	if n-3 >= len(f) {
		return nil, false
	}
	return f[n-3], true
}
