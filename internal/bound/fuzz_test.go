package bound

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzHeadTail(f *testing.F) {
	f.Add("", uint16(0))
	f.Add("hello, world", uint16(5))
	f.Add("héllo wörld 中文 😀🎉", uint16(6))
	f.Add("a\xff\xfeb\x80\x80c\xe4\xb8", uint16(3))
	f.Add(strings.Repeat("😀", 40), uint16(31))
	f.Fuzz(func(t *testing.T, s string, l uint16) {
		limit := int(l % 512)
		out, cut := HeadTail(s, limit)
		if !utf8.ValidString(out) {
			t.Fatalf("output not valid UTF-8: %q", out)
		}
		v := strings.ToValidUTF8(s, replacement)
		n := utf8.RuneCountInString(v)
		if cut == nil {
			if n > limit || out != v {
				t.Fatalf("no cut for %d runes with limit %d, out %q", n, limit, out)
			}
			return
		}
		if cut.Total != n || cut.Head != limit/2 || cut.Tail != limit-limit/2 || cut.File != "" {
			t.Fatalf("cut %+v for %d runes, limit %d", cut, n, limit)
		}
		m := Marker(cut.Total - cut.Head - cut.Tail)
		if got := utf8.RuneCountInString(out); got > limit+utf8.RuneCountInString(m) {
			t.Fatalf("output has %d runes, limit %d", got, limit)
		}
		head := out[:runeOffset(out, cut.Head)]
		if !strings.HasPrefix(v, head) {
			t.Fatalf("head %q is not a prefix of %q", head, v)
		}
		if rest := out[len(head):]; !strings.HasPrefix(rest, m) || !strings.HasSuffix(v, rest[len(m):]) {
			t.Fatalf("after the head, %q is not marker + a suffix of %q", rest, v)
		}
	})
}

func FuzzSink(f *testing.F) {
	f.Add([]byte(""), uint16(0), []byte{})
	f.Add([]byte("hello"), uint16(10), []byte{1, 2})
	f.Add([]byte("héllo wörld 中文 😀🎉 and more text"), uint16(7), []byte{3, 1, 4, 1, 5, 9, 2, 6})
	f.Add([]byte("a\xff\xfeb\x80\x80c\xe4\xb8d\xf0\x9f"), uint16(2), []byte{1})
	f.Add(bytes.Repeat([]byte("中😀"), 300), uint16(40), []byte{255, 7, 13})
	// Take syncs each spool file; on tmpfs that is cheap, so fuzzing
	// runs many more inputs per second there.
	dir, err := os.MkdirTemp("/dev/shm", "bound-fuzz-")
	if err == nil {
		f.Cleanup(func() { os.RemoveAll(dir) })
	} else {
		dir = f.TempDir()
	}
	f.Fuzz(func(t *testing.T, data []byte, l uint16, splits []byte) {
		limit := int(l % 300)
		s := NewSink(limit, dir, "fuzz-*")
		for round := range 2 { // the second round checks Take's reset
			rest, i := data, 0
			for len(rest) > 0 {
				n := len(rest)
				if len(splits) > 0 {
					n = min(n, int(splits[i%len(splits)])+1)
					i++
				}
				s.Write(rest[:n])
				rest = rest[n:]
			}
			if s.Len() != int64(len(data)) {
				t.Fatalf("Len = %d, want %d", s.Len(), len(data))
			}
			text, cut, err := s.Take()
			if err != nil {
				t.Fatal(err)
			}
			checkBounded(t, text, cut, limit)
			want, wantCut := HeadTailLines(string(data), limit)
			if cut == nil {
				if text != want || wantCut != nil {
					t.Fatalf("round %d: no cut, text %q, HeadTail %q %+v", round, text, want, wantCut)
				}
				continue
			}
			got, err := os.ReadFile(cut.File)
			os.Remove(cut.File)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("round %d: spool file %x (%v), want %x", round, got, err, data)
			}
			if utf8.Valid(data) {
				if text != want || cut.Total != wantCut.Total || cut.Head != wantCut.Head || cut.Tail != wantCut.Tail {
					t.Fatalf("round %d: valid input gave %q %+v, HeadTail %q %+v", round, text, cut, want, wantCut)
				}
			}
		}
	})
}
