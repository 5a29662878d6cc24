package proc

import (
	"bytes"
	"encoding/binary"
	"strconv"

	"golang.org/x/sys/unix"
)

// This file holds what polyrepl asks about a runtime reading its console,
// and the parsers of what Linux answers with; stdin_linux.go reads /proc,
// stdin_darwin.go says what macOS cannot tell.

// WaitsOnStdin reports whether p's main thread is blocked reading its
// standard input: in read(0, …); in select, pselect6, poll or ppoll with
// descriptor 0 among those it waits to read; or in epoll_wait on an
// epoll set that waits for descriptor 0 to be readable (an event loop —
// Node's, Julia's — reading stdin). It is how polyrepl
// knows that a runtime which reads its console in C (R's browser() and
// readline()) is asking a question: the kernel says so, nothing is
// guessed from the output. False when p is gone, runs, or cannot be
// inspected (another user's process: /proc/PID/syscall needs the right
// to trace it). Always false on macOS, which shows no process's blocked
// call without the right to debug it (SeesStdinReads says so).
func WaitsOnStdin(p Proc) bool { return waitsOnStdin(p) }

// AnyThreadWaitsOnStdin is WaitsOnStdin for any of p's threads: a JVM
// reads standard input on a thread of its own, not its first. Always false
// on macOS.
func AnyThreadWaitsOnStdin(p Proc) bool { return anyThreadWaitsOnStdin(p) }

// Reads is how many read calls p has made (syscr of /proc/PID/io): it
// moves once a blocked read returns. ok is false once p is gone, and
// always on macOS, which keeps no such count.
func Reads(pid int) (n uint64, ok bool) { return reads(pid) }

// Children lists pid's children: on Linux its main thread's (a runtime
// forks from it), from /proc/PID/task/PID/children, none if the kernel does
// not keep that file; on macOS the processes whose parent is pid in the
// process table.
func Children(pid int) []int { return children(pid) }

// HasOpen says whether pid has the file at path open (compared by device
// and inode, so any name for it counts): a REPL that keeps the file it
// loads open while it runs it is still running it. Always false on macOS,
// where no /proc/PID/fd lists another process's descriptors.
func HasOpen(pid int, path string) bool { return hasOpen(pid, path) }

// SeesStdinReads says whether WaitsOnStdin can see anything here: a
// system-call table for this architecture, and a /proc that shows a
// process's blocked call (Linux; not macOS, nor a sandbox that hides it).
func SeesStdinReads() bool { return seesStdinReads() }

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
		return err == nil && ev&epollIn != 0
	}
	return false
}

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

// pollRdNorm is Linux's POLLRDNORM (not in x/sys/unix), which a poll for
// reading may ask instead of POLLIN.
const pollRdNorm = 0x40

// epollIn is Linux's EPOLLIN, named here because x/sys/unix defines it only
// for Linux and these parsers build (and are tested) everywhere.
const epollIn = 0x1
