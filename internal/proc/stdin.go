package proc

import (
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// WaitsOnStdin reports whether p's main thread is blocked reading its
// standard input: in read(0, …); in select, pselect6, poll or ppoll with
// descriptor 0 among those it waits to read; or in epoll_wait on an
// epoll set that waits for descriptor 0 to be readable (an event loop —
// Node's, Julia's — reading stdin). It is how polyrepl
// knows that a runtime which reads its console in C (R's browser() and
// readline()) is asking a question: the kernel says so, nothing is
// guessed from the output. False when p is gone, runs, or cannot be
// inspected (another user's process: /proc/PID/syscall needs the right
// to trace it).
func WaitsOnStdin(p Proc) bool {
	return taskWaitsOnStdin(p.PID, "/proc/"+strconv.Itoa(p.PID)+"/syscall", nil)
}

// AnyThreadWaitsOnStdin is WaitsOnStdin for any of p's threads: a JVM
// reads standard input on a thread of its own, not its first.
func AnyThreadWaitsOnStdin(p Proc) bool {
	dir := "/proc/" + strconv.Itoa(p.PID) + "/task"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	buf := make([]byte, 0, 160)
	for _, e := range ents {
		if taskWaitsOnStdin(p.PID, dir+"/"+e.Name()+"/syscall", buf) {
			return true
		}
	}
	return false
}

// taskWaitsOnStdin decides for one thread of process pid, from its
// syscall file, whether it waits to read descriptor 0 (buf is reused).
func taskWaitsOnStdin(pid int, syscallFile string, buf []byte) bool {
	b, err := readFileAt(unix.AT_FDCWD, syscallFile, buf)
	if err != nil {
		return false
	}
	c, ok := parseSyscall(b)
	if !ok {
		return false
	}
	if c.nr == sysNums.epollWait || c.nr == sysNums.epollPwait || c.nr == sysNums.epollPwait2 {
		info, err := readFileAt(unix.AT_FDCWD, "/proc/"+strconv.Itoa(pid)+"/fdinfo/"+strconv.FormatUint(c.args[0], 10), nil)
		return err == nil && epollReadsStdin(info)
	}
	return stdinWait(c, sysNums, func(addr uint64, n int) []byte { return readMem(pid, addr, n) })
}

// epollReadsStdin says whether an epoll set's fdinfo has descriptor 0
// waiting to be readable: a line "tfd:        0 events:       19 …"
// (events in hexadecimal; EPOLLIN is 1).
func epollReadsStdin(info []byte) bool {
	for line := range bytes.SplitSeq(info, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) < 4 || string(f[0]) != "tfd:" || string(f[1]) != "0" || string(f[2]) != "events:" {
			continue
		}
		ev, err := strconv.ParseUint(string(f[3]), 16, 32)
		return err == nil && ev&unix.EPOLLIN != 0
	}
	return false
}

// Reads is how many read calls p has made (syscr of /proc/PID/io): it
// moves once a blocked read returns. ok is false once p is gone.
func Reads(pid int) (n uint64, ok bool) {
	b, err := readFileAt(unix.AT_FDCWD, "/proc/"+strconv.Itoa(pid)+"/io", make([]byte, 0, 256))
	if err != nil {
		return 0, false
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if v, found := bytes.CutPrefix(line, []byte("syscr:")); found {
			n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// Children lists pid's children (its main thread's: a runtime forks
// from it), from /proc/PID/task/PID/children; none if the kernel does
// not keep that file.
func Children(pid int) []int {
	s := strconv.Itoa(pid)
	b, err := readFileAt(unix.AT_FDCWD, "/proc/"+s+"/task/"+s+"/children", make([]byte, 0, 64))
	if err != nil {
		return nil
	}
	var kids []int
	for _, f := range bytes.Fields(b) {
		if k, err := strconv.Atoi(string(f)); err == nil {
			kids = append(kids, k)
		}
	}
	return kids
}

// HasOpen says whether pid has the file at path open (compared by device
// and inode, so any name for it counts): a REPL that keeps the file it
// loads open while it runs it is still running it.
func HasOpen(pid int, path string) bool {
	var want unix.Stat_t
	if unix.Stat(path, &want) != nil {
		return false
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		var st unix.Stat_t
		if unix.Stat(dir+"/"+e.Name(), &st) == nil && st.Ino == want.Ino && st.Dev == want.Dev {
			return true
		}
	}
	return false
}

// SeesStdinReads says whether WaitsOnStdin can see anything here: a
// system-call table for this architecture, and a /proc that shows a
// process's blocked call (Linux; not macOS, nor a sandbox that hides it).
func SeesStdinReads() bool {
	seesOnce.Do(func() {
		_, err := readFileAt(unix.AT_FDCWD, "/proc/self/syscall", make([]byte, 0, 160))
		sees = sysNums.read >= 0 && err == nil
	})
	return sees
}

var (
	seesOnce sync.Once
	sees     bool
)

// syscallNums are the numbers of the calls a read of standard input
// blocks in, on one architecture (-1: the architecture has no such call).
type syscallNums struct {
	read, sel, pselect6, poll, ppoll   int64
	epollWait, epollPwait, epollPwait2 int64
}

// blockedCall is /proc/PID/syscall parsed: the call's number and its
// first five arguments.
type blockedCall struct {
	nr   int64
	args [5]uint64
}

// parseSyscall reads "NR ARG1 … ARG6 SP PC"; "running" or "-1 …" (not in
// a call) is not a blocked call.
func parseSyscall(b []byte) (blockedCall, bool) {
	f := bytes.Fields(b)
	if len(f) < 6 {
		return blockedCall{}, false
	}
	nr, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err != nil || nr < 0 {
		return blockedCall{}, false
	}
	c := blockedCall{nr: nr}
	for i := range c.args {
		v, err := strconv.ParseUint(string(bytes.TrimPrefix(f[i+1], []byte("0x"))), 16, 64)
		if err != nil {
			return blockedCall{}, false
		}
		c.args[i] = v
	}
	return c, true
}

// stdinWait decides from a blocked call whether it waits to read
// descriptor 0; mem reads the process's memory for the descriptor sets
// and poll arrays the call points at (nil when it cannot).
func stdinWait(c blockedCall, n syscallNums, mem func(addr uint64, n int) []byte) bool {
	switch c.nr {
	case n.read:
		return c.args[0] == 0
	case n.sel, n.pselect6:
		nfds, readfds := c.args[0], c.args[1]
		if nfds == 0 || readfds == 0 {
			return false
		}
		set := mem(readfds, 1)
		return len(set) == 1 && set[0]&1 != 0
	case n.poll, n.ppoll:
		count := c.args[1]
		if count == 0 || count > 1024 || c.args[0] == 0 {
			return false
		}
		fds := mem(c.args[0], int(count)*8)
		for i := 0; i+8 <= len(fds); i += 8 {
			fd := int32(binary.NativeEndian.Uint32(fds[i:]))
			events := binary.NativeEndian.Uint16(fds[i+4:])
			if fd == 0 && events&(unix.POLLIN|pollRdNorm) != 0 {
				return true
			}
		}
	}
	return false
}

// readMem reads n bytes of pid's memory at addr (nil if it cannot).
func readMem(pid int, addr uint64, n int) []byte {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/mem", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	buf := make([]byte, n)
	got, err := unix.Pread(fd, buf, int64(addr))
	if err != nil || got != n {
		return nil
	}
	return buf
}

// pollRdNorm is Linux's POLLRDNORM (not in x/sys/unix), which a poll for
// reading may ask instead of POLLIN.
const pollRdNorm = 0x40
