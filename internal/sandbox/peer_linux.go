package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// ReadPeer reads what /proc says of process pid: its no_new_privs, its
// environment's entry of cookieVar, its working directory and its
// ancestry, up to the first ancestor that started before since (a
// start time as proc.Proc's): an ancestor older than every session's
// runtime and holder is none of them, nor are its own ancestors, so a
// person's shell costs one read, not one per ancestor up to init (0:
// the whole ancestry). The peer's files are read through one directory
// descriptor, bound to that process: a pid reused meanwhile fails to
// read instead of mixing two processes.
func ReadPeer(pid int, cookieVar string, since uint64) (Peer, error) {
	p := Peer{PID: pid}
	if pid <= 0 {
		return p, fmt.Errorf("no process %d", pid)
	}
	dfd, err := unix.Open("/proc/"+strconv.Itoa(pid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return p, fmt.Errorf("read process %d: %w", pid, err)
	}
	defer unix.Close(dfd)
	status, err := readAt(dfd, "status", 64<<10)
	if err != nil {
		return p, fmt.Errorf("read process %d's status: %w", pid, err)
	}
	p.NoNewPrivs = statusNoNewPrivs(status)
	if env, err := readAt(dfd, "environ", 4<<20); err == nil {
		p.Cookie = envEntry(env, cookieVar)
	}
	if cwd, err := readlinkAt(dfd, "cwd"); err == nil {
		p.Cwd = cwd
	}
	l, err := linkAt(dfd)
	if err != nil {
		return p, fmt.Errorf("read process %d's stat: %w", pid, err)
	}
	p.Chain = append(p.Chain, l)
	for len(p.Chain) < MaxChain && l.PPID > 1 && l.Proc.Start >= since {
		if l, err = readLink(l.PPID); err != nil {
			break // gone meanwhile: its ancestry ends here
		}
		p.Chain = append(p.Chain, l)
	}
	return p, nil
}

// SelfNoNewPrivs says whether this process runs with no_new_privs.
func SelfNoNewPrivs() bool {
	b, err := os.ReadFile("/proc/self/status")
	return err == nil && statusNoNewPrivs(b)
}

// readLink reads one ancestor's stat: one open, one read (a stat line
// is far shorter than the buffer, and /proc gives it whole).
func readLink(pid int) (Link, error) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Link{}, err
	}
	defer unix.Close(fd)
	var buf [1024]byte
	n, err := unix.Read(fd, buf[:])
	if err != nil {
		return Link{}, err
	}
	return parseLink(buf[:n])
}

func linkAt(dfd int) (Link, error) {
	b, err := readAt(dfd, "stat", 4096)
	if err != nil {
		return Link{}, err
	}
	return parseLink(b)
}

func readAt(dfd int, name string, limit int) ([]byte, error) {
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 4096)
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(cap(buf), limit-len(buf)))
		}
		n, err := unix.Read(fd, buf[len(buf):min(cap(buf), limit)])
		if n > 0 {
			buf = buf[:len(buf)+n]
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return buf, nil
		}
	}
	return buf, nil // bounded: what is past limit is not looked at
}

func readlinkAt(dfd int, name string) (string, error) {
	b := make([]byte, 4096)
	n, err := unix.Readlinkat(dfd, name, b)
	if err != nil {
		return "", err
	}
	return string(b[:n]), nil
}

var errStat = errors.New("malformed /proc stat line")

// parseLink reads pid, ppid, process group, process session and start
// time from a /proc/PID/stat line. The command name (field 2) may hold
// spaces and ')': the fields after it start after the last ')'.
func parseLink(b []byte) (Link, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open <= 0 || end < open {
		return Link{}, errStat
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil || pid <= 0 {
		return Link{}, errStat
	}
	f := bytes.Fields(b[end+1:])
	// f[0] is field 3 (state): field N is f[N-3].
	if len(f) < 20 {
		return Link{}, errStat
	}
	num := func(n int) (int, error) { return strconv.Atoi(string(f[n-3])) }
	var l Link
	l.Proc.PID = pid
	if l.PPID, err = num(4); err != nil {
		return Link{}, errStat
	}
	if l.PGID, err = num(5); err != nil {
		return Link{}, errStat
	}
	if l.SID, err = num(6); err != nil {
		return Link{}, errStat
	}
	if l.Proc.Start, err = strconv.ParseUint(string(f[22-3]), 10, 64); err != nil {
		return Link{}, errStat
	}
	return l, nil
}

// statusNoNewPrivs reads the NoNewPrivs line of /proc/PID/status.
func statusNoNewPrivs(b []byte) bool {
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("NoNewPrivs:")); ok {
			return string(bytes.TrimSpace(v)) == "1"
		}
	}
	return false
}

// envEntry is the entry of variable key in a NUL-separated environment,
// whole ("KEY=VALUE"), or "".
func envEntry(env []byte, key string) string {
	prefix := []byte(key + "=")
	for _, e := range bytes.Split(env, []byte{0}) {
		if bytes.HasPrefix(e, prefix) {
			return string(e)
		}
	}
	return ""
}
