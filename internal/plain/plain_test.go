package plain

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain\ttext\n", "plain\ttext\n"},
		{"\x1b[1;31mred\x1b[0m and \x1b[32mgreen\x1b[m\n", "red and green\n"},
		{"\x1b]0;window title\x07after", "after"},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"10%\r50%\r100%\n", "100%\n"},
		{"progress [##   ]\rprogress [#####]\ndone", "progress [#####]\ndone"},
		{"windows\r\nlines\r\n", "windows\nlines\n"},
		{"abc\bd\n", "abd\n"},
		{"héllo\r大\n", "大éllo\n"}, // character for character; widths are not known
		{"bell\x07 nul\x00 del\x7f\n", "bell nul del\n"},
		{"8-bit \u009b31mcsi\u009b0m and \u0085nel\n", "8-bit csi and nel\n"},
		{"\x1b(Bcharset \x1b=keypad\n", "charset keypad\n"},
		{"cut at the end \x1b[", "cut at the end "},
		{"é ü 中文 🎉", "é ü 中文 🎉"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "a\rb", "\x1b[31mx", "\x1b]0;t\x07", "é\b\b", "\u009b1m", "x\r\n", "\x1bP…\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if Simple([]byte(raw)) && (Text(raw) != raw || strings.ToValidUTF8(raw, "\uFFFD") != raw || utf8.RuneCountInString(raw) != len(raw)) {
			t.Fatalf("Simple(%q), yet Text, ToValidUTF8 or counting characters would change it", raw)
		}
		in := strings.ToValidUTF8(raw, "\uFFFD")
		out := Text(in)
		if !utf8.ValidString(out) {
			t.Fatalf("Text(%q) = %q: not valid UTF-8", in, out)
		}
		if len(out) > len(in) {
			t.Fatalf("Text(%q) = %q: longer than its input", in, out)
		}
		for _, r := range out {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Fatalf("Text(%q) = %q: control character %U left", in, out, r)
			}
		}
		if Text(out) != out {
			t.Fatalf("Text is not idempotent on %q: %q then %q", in, out, Text(out))
		}
	})
}

// TestSimple checks the word-at-a-time Simple against the byte rule, for
// every byte value at every place in a word and in the tail after it.
func TestSimple(t *testing.T) {
	for c := range 256 {
		want := (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t'
		for at := range 11 {
			p := []byte("abcdefghijk")
			p[at] = byte(c)
			if got := Simple(p); got != want {
				t.Errorf("Simple with byte %#x at %d = %v, want %v", c, at, got, want)
			}
		}
	}
}

func TestRuneCount(t *testing.T) {
	long := strings.Repeat("x", 100) + "é" + strings.Repeat("y", 13) + "\xff\x80" + strings.Repeat("中", 9) + "abcdefghi"
	for _, s := range []string{"", "a", "abcdefgh", "abcdefghi", "é", "ééééé", "\xe4\xb8", "abcdefg\xe4\xb8\xad", long, long[:len(long)-10], long[1:]} {
		if got, want := RuneCount([]byte(s)), utf8.RuneCountInString(s); got != want {
			t.Errorf("RuneCount(%q) = %d, want %d", s, got, want)
		}
	}
}

func FuzzRuneCount(f *testing.F) {
	for _, s := range []string{"", "abcdefgh\xff", "ééééé\x80abcdefgh", "中文 12345678"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := RuneCount([]byte(s)), utf8.RuneCountInString(s); got != want {
			t.Fatalf("RuneCount(%q) = %d, want %d", s, got, want)
		}
	})
}

// FuzzSimple: Simple, thirty-two and eight bytes at a time, says what
// looking at each byte says.
func FuzzSimple(f *testing.F) {
	for _, s := range []string{"", strings.Repeat("x", 40) + "\n\t", strings.Repeat("ab", 20) + "\x7f", strings.Repeat("y", 33) + "é", strings.Repeat("z", 64) + "\x1f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Simple([]byte(s)), simpleBytes([]byte(s)); got != want {
			t.Fatalf("Simple(%q) = %v, want %v", s, got, want)
		}
	})
}
