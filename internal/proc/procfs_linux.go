package proc

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// procStat reads the stat of pid from /proc; a pid no process holds gives
// ENOENT (or ESRCH if it vanished while being read).
func procStat(pid int) (stat, error) {
	s, _, err := readStat(unix.AT_FDCWD, statPath(pid), nil)
	return s, err
}

// stuckHint ends the error of a Kill that could not end every process.
const stuckHint = "check for state D in /proc/PID/stat or a lack of permission"

// readStat reads and parses /proc/PID/stat relative to dirfd (unix.AT_FDCWD
// for an absolute path), reusing buf to keep the scan allocation-free.
func readStat(dirfd int, path string, buf []byte) (stat, []byte, error) {
	b, err := readFileAt(dirfd, path, buf)
	if err != nil {
		return stat{}, b, err
	}
	s, err := parseStat(b)
	return s, b, err
}

// readFileAt reads a whole procfs file into buf, growing it as
// needed, and returns the filled slice. Errors are the raw errno so callers
// can tell a vanished process (ENOENT, ESRCH) from other failures.
func readFileAt(dirfd int, path string, buf []byte) ([]byte, error) {
	fd, err := unix.Openat(dirfd, path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return buf[:0], err
	}
	defer unix.Close(fd)
	if cap(buf) == 0 {
		buf = make([]byte, 0, 1024)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf, err
		}
		if n == 0 {
			return buf, nil
		}
		short := n < cap(buf)-len(buf)
		buf = buf[:len(buf)+n]
		if short {
			// procfs fills the whole buffer unless the file ended, so a
			// short read saves the extra read(2) that would return 0.
			return buf, nil
		}
	}
}

// statPath is the stat file of pid, built without fmt for speed.
func statPath(pid int) string {
	return "/proc/" + strconv.Itoa(pid) + "/stat"
}
