package proc

import "testing"

func TestEpollReadsStdin(t *testing.T) {
	for _, c := range []struct {
		info string
		want bool
	}{
		{"pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t1038\ntfd:        0 events:       19 data:     7fe100000000  pos:0 ino:98400d sdev:fe00000\n", true},
		{"tfd:        3 events:       19 data: 0\ntfd:        0 events:        4 data: 0\n", false},
		{"tfd:       10 events:       19 data: 0\n", false},
		{"", false},
	} {
		if got := epollReadsStdin([]byte(c.info)); got != c.want {
			t.Errorf("epollReadsStdin(%q) = %v, want %v", c.info, got, c.want)
		}
	}
}

func TestParseSyscall(t *testing.T) {
	for _, s := range []string{"running", "-1 0x7ffd 0x0", "", "0 0x0 0x7f 0x1"} {
		if _, ok := parseSyscall([]byte(s)); ok {
			t.Errorf("parseSyscall(%q) took it for a blocked call", s)
		}
	}
	c, ok := parseSyscall([]byte("270 0x1 0x7ff9e9eca4e0 0x0 0x0 0x0 0x0 0x7ffdf36b3cd0 0x7ff9e991c9ec\n"))
	if !ok || c.nr != 270 || c.args[0] != 1 || c.args[1] != 0x7ff9e9eca4e0 {
		t.Fatalf("parseSyscall = %+v, %v", c, ok)
	}
	n := syscallNums{read: 0, sel: 23, pselect6: 270, poll: 7, ppoll: 271}
	fd0 := func(uint64, int) []byte { return []byte{1} }
	fd3 := func(uint64, int) []byte { return []byte{8} }
	if !stdinWait(c, n, fd0) || stdinWait(c, n, fd3) || stdinWait(c, n, func(uint64, int) []byte { return nil }) {
		t.Error("pselect6: descriptor 0 in the read set decides")
	}
	if stdinWait(blockedCall{nr: 0, args: [5]uint64{5}}, n, fd0) || !stdinWait(blockedCall{nr: 0}, n, fd0) {
		t.Error("read: descriptor 0 decides")
	}
	poll := func(fd int32, ev uint16) func(uint64, int) []byte {
		return func(uint64, int) []byte {
			b := make([]byte, 8)
			b[0], b[4] = byte(fd), byte(ev)
			return b
		}
	}
	pc := blockedCall{nr: 7, args: [5]uint64{0x1000, 1}}
	if !stdinWait(pc, n, poll(0, 1)) || stdinWait(pc, n, poll(0, 4)) || stdinWait(pc, n, poll(3, 1)) {
		t.Error("poll: descriptor 0 waiting to read decides")
	}
}
