package proc

import (
	"encoding/binary"
	"strings"
	"testing"
)

// procArgs fabricates a kern.procargs2 reply: argc, then the strings
// joined as the kernel lays them out (the caller writes the NULs).
func procArgs(argc int32, strs string) []byte {
	b := binary.NativeEndian.AppendUint32(nil, uint32(argc))
	return append(b, strs...)
}

func TestProcArgsEnv(t *testing.T) {
	const cookie = "POLYREPL_SESSION=abc"
	for _, c := range []struct {
		name  string
		reply []byte
		want  string // the NUL-separated environment
	}{
		{"normal", procArgs(2, "/bin/sleep\x00\x00\x00\x00\x00\x00sleep\x00100\x00HOME=/h\x00"+cookie+"\x00\x00\x00ptr_munge=x\x00"),
			"HOME=/h\x00" + cookie + "\x00"},
		{"no padding", procArgs(1, "/bin/sh\x00sh\x00A=1\x00"), "A=1\x00"},
		{"environment to the end", procArgs(1, "/bin/sh\x00\x00sh\x00A=1\x00B=2\x00"), "A=1\x00B=2\x00"},
		{"apple strings without a separator", procArgs(1, "/p\x00p\x00A=1\x00executable_path=/p\x00"), "A=1\x00executable_path=/p\x00"},
		{"empty environment", procArgs(2, "/bin/sleep\x00\x00sleep\x00100\x00\x00\x00executable_path=/bin/sleep\x00"), ""},
		{"no environment at all", procArgs(2, "/bin/sleep\x00\x00sleep\x00100\x00"), ""},
		{"no arguments", procArgs(0, "/bin/x\x00\x00\x00A=1\x00"), "A=1\x00"},
		{"cut off in an entry", procArgs(1, "/bin/sh\x00sh\x00A=1\x00"+cookie+"def"), "A=1\x00"},
		{"cut off in the cookie", procArgs(1, "/bin/sh\x00sh\x00"+cookie[:10]), ""},
		{"cut off in the arguments", procArgs(3, "/bin/sh\x00sh\x00-c"), ""},
		{"argc beyond the strings", procArgs(5, "/bin/sh\x00sh\x00A=1\x00B=2\x00"), ""},
		{"cut off in the path", procArgs(1, "/bin/s"), ""},
		{"negative argc", procArgs(-1, "/bin/sh\x00sh\x00A=1\x00"), ""},
		{"shorter than argc", []byte{1, 0}, ""},
		{"empty", nil, ""},
	} {
		got := procArgsEnv(c.reply)
		if string(got) != c.want {
			t.Errorf("%s: procArgsEnv = %q; want %q", c.name, got, c.want)
		}
		if want := strings.Contains(c.want, cookie+"\x00"); hasEntry(got, []byte(cookie)) != want {
			t.Errorf("%s: cookie found %v; want %v", c.name, !want, want)
		}
	}
}

// TestProcArgsEnvEmptyFirstArgument documents the one layout the parser
// cannot read exactly: an empty argv[0] looks like padding, so the first
// environment entry is lost, and nothing else is taken for one.
func TestProcArgsEnvEmptyFirstArgument(t *testing.T) {
	got := procArgsEnv(procArgs(2, "/bin/x\x00\x00\x00arg\x00A=1\x00B=2\x00"))
	if string(got) != "B=2\x00" {
		t.Errorf("procArgsEnv = %q; want only B=2", got)
	}
}

func TestBSDState(t *testing.T) {
	for pstat, want := range map[int8]byte{bsdSIDL: 'R', bsdSRUN: 'R', bsdSSLEEP: 'S', bsdSSTOP: 'T', bsdSZOMB: 'Z', 0: '?', 9: '?'} {
		if got := bsdState(pstat); got != want {
			t.Errorf("bsdState(%d) = %q; want %q", pstat, got, want)
		}
	}
	if !(stat{state: bsdState(bsdSZOMB)}).zombie() || (stat{state: bsdState(bsdSSTOP)}).zombie() {
		t.Error("only SZOMB counts as a zombie")
	}
}

func TestBSDStart(t *testing.T) {
	if got := bsdStart(1_700_000_000, 123_456); got != 1_700_000_000_123_456 {
		t.Errorf("bsdStart = %d", got)
	}
	// One microsecond apart is another start time.
	if bsdStart(5, 999_999)+1 != bsdStart(6, 0) {
		t.Error("bsdStart does not count start times in microseconds")
	}
}
