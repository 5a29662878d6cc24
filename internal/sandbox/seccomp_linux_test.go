package sandbox

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// runBPF interprets the classic BPF the filter uses, on seccomp_data.
func runBPF(t *testing.T, prog []unix.SockFilter, data []byte) uint32 {
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			a = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			a &= in.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			hit := a == in.K
			if in.Code&0xf0 == unix.BPF_JGE {
				hit = a >= in.K
			}
			if hit {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %d: code %#x", pc, in.Code)
		}
	}
	t.Fatal("the filter ran off its end")
	return 0
}

// seccompData is the seccomp_data a filter sees for syscall nr of arch
// with args' low words.
func seccompData(arch, nr uint32, args ...uint32) []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[offNr:], nr)
	binary.LittleEndian.PutUint32(b[offArch:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint32(b[offArg0+8*i:], a)
	}
	return b
}

func TestNetFilter(t *testing.T) {
	if !SeccompNet {
		t.Skip("no filter on this architecture")
	}
	const allow, deny = unix.SECCOMP_RET_ALLOW, unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	sock := uint32(unix.SYS_SOCKET)
	for _, c := range []struct {
		name string
		d    []byte
		want uint32
	}{
		{"read", seccompData(seccompArch, unix.SYS_READ), allow},
		{"unix stream", seccompData(seccompArch, sock, unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0), allow},
		{"netlink", seccompData(seccompArch, sock, unix.AF_NETLINK, unix.SOCK_RAW, 0), allow},
		{"tcp", seccompData(seccompArch, sock, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0), allow},
		{"tcp6 explicit", seccompData(seccompArch, sock, unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_TCP), allow},
		{"udp", seccompData(seccompArch, sock, unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0), deny},
		{"udp6", seccompData(seccompArch, sock, unix.AF_INET6, unix.SOCK_DGRAM, unix.IPPROTO_UDP), deny},
		{"raw", seccompData(seccompArch, sock, unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP), deny},
		{"mptcp", seccompData(seccompArch, sock, unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP), deny},
		{"sctp", seccompData(seccompArch, sock, unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_SCTP), deny},
		{"packet", seccompData(seccompArch, sock, unix.AF_PACKET, unix.SOCK_RAW, 0), deny},
		{"io_uring", seccompData(seccompArch, unix.SYS_IO_URING_SETUP, 8, 0), deny},
		{"another arch", seccompData(0x40000003, 102), deny},
	} {
		if got := runBPF(t, netFilter(), c.d); got != c.want {
			t.Errorf("%s: %#x, want %#x", c.name, got, c.want)
		}
	}
	if seccompX32 {
		if got := runBPF(t, netFilter(), seccompData(seccompArch, 0x40000000|41, unix.AF_INET, unix.SOCK_DGRAM)); got != deny {
			t.Errorf("x32 socket: %#x", got)
		}
	}
}

func TestTTYFilter(t *testing.T) {
	if !SeccompNet {
		t.Skip("no filter on this architecture")
	}
	const allow, deny = unix.SECCOMP_RET_ALLOW, unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	io := uint32(unix.SYS_IOCTL)
	for _, c := range []struct {
		name string
		d    []byte
		want uint32
	}{
		{"read", seccompData(seccompArch, unix.SYS_READ), allow},
		{"tcsetattr", seccompData(seccompArch, io, 0, unix.TCSETS), allow},
		{"window size", seccompData(seccompArch, io, 0, unix.TIOCGWINSZ), allow},
		{"TIOCSTI", seccompData(seccompArch, io, 5, unix.TIOCSTI), deny},
		{"TIOCLINUX", seccompData(seccompArch, io, 5, unix.TIOCLINUX), deny},
		{"socket", seccompData(seccompArch, unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_DGRAM, 0), allow},
		{"another arch", seccompData(0x40000003, 54, 0, unix.TIOCSTI), deny},
	} {
		if got := runBPF(t, ttyFilter(), c.d); got != c.want {
			t.Errorf("%s: %#x, want %#x", c.name, got, c.want)
		}
	}
	if seccompX32 {
		if got := runBPF(t, ttyFilter(), seccompData(seccompArch, 0x40000000|16, 0, unix.TIOCSTI)); got != deny {
			t.Errorf("x32 ioctl: %#x", got)
		}
	}
}
