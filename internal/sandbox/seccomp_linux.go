package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Under network off, Landlock up to ABI 9 governs TCP only: UDP (DNS to
// anywhere), raw and packet sockets, SCTP and MPTCP (a SOCK_STREAM of
// another protocol), and io_uring (which makes sockets without socket(2))
// stay open. A seccomp filter on the confined thread, inherited by the
// runtime and all it starts, closes them: socket(2) is allowed for unix
// and netlink sockets and for TCP (protocol 0 or 6, which Landlock
// governs), and refused with EACCES otherwise (PermissionError in
// Python); io_uring_setup is refused; a syscall of another architecture
// (i386's socketcall, x32) is refused whole.

// seccomp_data offsets, little-endian (amd64, arm64): the syscall
// number, the architecture, and the low words of args 0, 1 and 2.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
	offArg2 = 32
)

// SeccompNet says whether this build closes what Landlock leaves open
// under network off.
const SeccompNet = seccompArch != 0

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// netFilter is the filter, as classic BPF.
func netFilter() []unix.SockFilter {
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		and  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		deny = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	)
	x32 := uint32(0xffffffff) // no syscall number is this high
	if seccompX32 {
		x32 = 0x40000000
	}
	// Each jump counts the instructions it skips: DENY is 18, ALLOW 19.
	return []unix.SockFilter{
		/* 0 */ stmt(ld, offArch),
		/* 1 */ jump(jeq, seccompArch, 1, 0),
		/* 2 */ stmt(ret, deny),
		/* 3 */ stmt(ld, offNr),
		/* 4 */ jump(jge, x32, 13, 0), // → DENY
		/* 5 */ jump(jeq, uint32(unix.SYS_IO_URING_SETUP), 12, 0), // → DENY
		/* 6 */ jump(jeq, uint32(unix.SYS_SOCKET), 0, 12), // else → ALLOW
		/* 7 */ stmt(ld, offArg0),
		/* 8 */ jump(jeq, unix.AF_UNIX, 10, 0), // → ALLOW
		/* 9 */ jump(jeq, unix.AF_NETLINK, 9, 0), // → ALLOW
		/* 10 */ jump(jeq, unix.AF_INET, 1, 0), // → 12
		/* 11 */ jump(jeq, unix.AF_INET6, 0, 6), // else → DENY
		/* 12 */ stmt(ld, offArg1),
		/* 13 */ stmt(and, 0xf), // SOCK_TYPE_MASK: without SOCK_CLOEXEC, SOCK_NONBLOCK
		/* 14 */ jump(jeq, unix.SOCK_STREAM, 0, 3), // else → DENY
		/* 15 */ stmt(ld, offArg2),
		/* 16 */ jump(jeq, 0, 2, 0), // → ALLOW
		/* 17 */ jump(jeq, unix.IPPROTO_TCP, 1, 0), // → ALLOW
		/* 18 */ stmt(ret, deny), // DENY
		/* 19 */ stmt(ret, unix.SECCOMP_RET_ALLOW), // ALLOW
	}
}

// filterNet installs netFilter on the calling thread, which has
// no_new_privs.
func filterNet() error {
	if !SeccompNet {
		return nil
	}
	f := netFilter()
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return fmt.Errorf("cannot install the seccomp filter for network off: %w", err)
	}
	return nil
}

// ttyFilter refuses, under every sandboxed policy, the two ioctls that
// type into a terminal: TIOCSTI (fake input on a terminal, which a
// process with CAP_SYS_ADMIN may push into any other — a person's shell,
// another session's REPL — where dev.tty.legacy_tiocsti is on) and
// TIOCLINUX (which can do the same on a virtual console). A sandboxed
// runtime may open other terminals under /dev/pts (Landlock cannot tell
// its own from another's: new ones appear as it makes them), so typing
// into them is closed here. Another architecture's syscalls and x32's
// are refused whole, as netFilter does.
func ttyFilter() []unix.SockFilter {
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		deny = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	)
	x32 := uint32(0xffffffff)
	if seccompX32 {
		x32 = 0x40000000
	}
	// DENY is 8 (and 10), ALLOW 11.
	return []unix.SockFilter{
		/* 0 */ stmt(ld, offArch),
		/* 1 */ jump(jeq, seccompArch, 1, 0),
		/* 2 */ stmt(ret, deny),
		/* 3 */ stmt(ld, offNr),
		/* 4 */ jump(jge, x32, 3, 0), // → DENY
		/* 5 */ jump(jeq, uint32(unix.SYS_IOCTL), 0, 5), // else → ALLOW
		/* 6 */ stmt(ld, offArg1),
		/* 7 */ jump(jeq, unix.TIOCSTI, 0, 1), // else → 9 (TIOCLINUX below)
		/* 8 */ stmt(ret, deny), // DENY
		/* 9 */ jump(jeq, unix.TIOCLINUX, 0, 1), // else → ALLOW
		/* 10 */ stmt(ret, deny),
		/* 11 */ stmt(ret, unix.SECCOMP_RET_ALLOW), // ALLOW
	}
}

// filterTTY installs ttyFilter on the calling thread, which has
// no_new_privs.
func filterTTY() error {
	if !SeccompNet {
		return nil
	}
	f := ttyFilter()
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return fmt.Errorf("cannot install the seccomp filter against typing into terminals: %w", err)
	}
	return nil
}
