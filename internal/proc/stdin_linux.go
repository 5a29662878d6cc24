package proc

import (
	"bytes"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// waitsOnStdin reads p's main thread's blocked call from /proc/PID/syscall.
func waitsOnStdin(p Proc) bool {
	return taskWaitsOnStdin(p.PID, "/proc/"+strconv.Itoa(p.PID)+"/syscall", nil)
}

// anyThreadWaitsOnStdin reads the blocked call of every thread in
// /proc/PID/task.
func anyThreadWaitsOnStdin(p Proc) bool {
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

// reads is syscr of /proc/PID/io.
func reads(pid int) (n uint64, ok bool) {
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

// children reads /proc/PID/task/PID/children.
func children(pid int) []int {
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

// hasOpen compares path with each descriptor of /proc/PID/fd.
func hasOpen(pid int, path string) bool {
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

// seesStdinReads checks once that this process's own blocked call can be
// read, and that there is a system-call table for this architecture.
func seesStdinReads() bool {
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
