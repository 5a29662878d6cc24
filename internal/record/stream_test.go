package record

import (
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestStreamLargeWrites feeds a stream writes of every size, up to
// twice its window, of lines, of lines longer than streamPartMax, and of
// characters split between writes: after each write the window is the
// end of what was let out, at counts the characters before it, end all
// of them, and what is held back is only the unfinished line.
func TestStreamLargeWrites(t *testing.T) {
	rng := rand.New(rand.NewSource(40))
	pieces := []string{"x", "é", "中", "🎉", "\n", strings.Repeat("y", 1000) + "\n"}
	for round := range 8 {
		var s stream
		var all strings.Builder // everything written, which is plain already
		for range 12 {
			var b strings.Builder
			size := []int{1, 7, 100, 5000, streamPartMax + 3, streamWindow/2 + 11, 2*streamWindow + 5}[rng.Intn(7)]
			if round%4 == 0 {
				size = 1 << 20 // one character repeated, no newline
				b.WriteString(strings.Repeat("z", size))
			}
			for b.Len() < size {
				b.WriteString(pieces[rng.Intn(len(pieces))])
			}
			p := []byte(b.String())
			// Split anywhere, even inside a character.
			cut := rng.Intn(len(p) + 1)
			s.write(p[:cut])
			s.write(p[cut:])
			all.Write(p)

			whole := all.String()
			let := whole[:len(whole)-len(s.part)]
			if !strings.HasSuffix(let, string(s.win)) {
				t.Fatalf("round %d: the window is not the end of what was let out", round)
			}
			if got, want := s.end, utf8.RuneCountInString(let); got != want {
				t.Fatalf("round %d: end %d, want %d", round, got, want)
			}
			if got, want := s.chars, utf8.RuneCount(s.win); got != want {
				t.Fatalf("round %d: the window's characters counted %d, want %d", round, got, want)
			}
			if got, want := s.at, utf8.RuneCountInString(let[:len(let)-len(s.win)]); got != want {
				t.Fatalf("round %d: at %d, want %d", round, got, want)
			}
			if len(s.win) > streamWindow+len(p) || strings.Contains(string(s.part), "\n") || len(s.part) > streamPartMax+len(p) {
				t.Fatalf("round %d: window %d bytes, part %d bytes (%q…)", round, len(s.win), len(s.part), clipped(string(s.part)))
			}
			if len(s.part) > streamPartMax+utf8.UTFMax {
				t.Fatalf("round %d: %d bytes held back, over %d", round, len(s.part), streamPartMax)
			}
			text, at, pending := s.read(s.end - 10)
			if at < s.at || !strings.HasSuffix(let, text) || pending != string(s.part) && utf8.ValidString(string(s.part)) {
				t.Fatalf("round %d: read from near the end: at %d (window at %d), %q, pending %q", round, at, s.at, clipped(text), clipped(pending))
			}
		}
	}
}

func clipped(s string) string { return s[:min(len(s), 40)] }
