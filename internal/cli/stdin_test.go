package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestReadAllStdin(t *testing.T) {
	for _, c := range []struct {
		name  string
		in    string
		limit int
		size  int64 // 0: accepted whole
		over  bool
	}{
		{"empty", "", 10, 0, false},
		{"under", "print(1)\n", 10, 0, false},
		{"exact", strings.Repeat("x", 10), 10, 0, false},
		{"one over", strings.Repeat("x", 11), 10, 11, false},
		{"far over", strings.Repeat("x", 3_000_013), 10, 3_000_013, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := readAll(strings.NewReader(c.in), c.limit, "the code")
			checkRead(t, got, err, c.in, c.size, c.over)
		})
	}
}

func TestReadLineStdin(t *testing.T) {
	long := strings.Repeat("y", 10<<20) + "END"
	for _, c := range []struct {
		name, in, want string
		limit          int
		size           int64
	}{
		{"one line", "yes\n", "yes", 10, 0},
		{"no newline", "yes", "yes", 10, 0},
		{"first of two", "yes\nno\n", "yes", 10, 0},
		{"exact", strings.Repeat("a", 10) + "\nrest", strings.Repeat("a", 10), 10, 0},
		{"long first line", strings.Repeat("a", 11) + "\nb\n", "", 10, 11},
		{"10 MB ending END", long, "", 2 << 20, int64(len(long))},
		{"short line, long rest", "ok\n" + strings.Repeat("z", 5<<20), "ok", 2 << 20, 0},
		{"empty", "", "", 10, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := readLine(strings.NewReader(c.in), c.limit, "the answer")
			checkRead(t, got, err, c.want, c.size, false)
		})
	}
}

// checkRead: a read gives exactly want, or (size > 0) refuses with the
// real size.
func checkRead(t *testing.T, got string, err error, want string, size int64, over bool) {
	t.Helper()
	if size == 0 {
		if err != nil || got != want {
			t.Fatalf("got %.40q, %v; want %.40q", got, err, want)
		}
		return
	}
	var tl *tooLong
	if !errors.As(err, &tl) || tl.Size != size || tl.Over != over || got != "" {
		t.Fatalf("got %.40q, %v; want a refusal of %d bytes", got, err, size)
	}
	if !strings.Contains(tl.Error(), "nothing was sent") {
		t.Errorf("the refusal does not say nothing was sent: %s", tl.Error())
	}
}

// FuzzReadLine: the first line comes back whole, or the refusal counts
// every byte of it.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("yes\nno"), 4)
	f.Add([]byte("a\r\n"), 1)
	f.Add(bytes.Repeat([]byte("x"), 70000), 65536)
	f.Fuzz(func(t *testing.T, in []byte, limit int) {
		limit = max(0, limit%100000)
		first, _, _ := bytes.Cut(in, []byte("\n"))
		got, err := readLine(bytes.NewReader(in), limit, "the answer")
		if len(first) <= limit {
			if err != nil || got != string(first) {
				t.Fatalf("got %q, %v; want %q", got, err, first)
			}
			return
		}
		var tl *tooLong
		if !errors.As(err, &tl) || tl.Size != int64(len(first)) {
			t.Fatalf("got %q, %v; want a refusal of %d bytes", got, err, len(first))
		}
	})
}
