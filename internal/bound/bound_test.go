package bound

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHeadTailUnits(t *testing.T) {
	units := []string{"a", "é", "中", "😀"}
	for _, u := range units {
		for _, limit := range []int{0, 1, 2, 3, 4, 7, 10, 11, 100} {
			for k := max(0, limit-3); k <= limit+3; k++ {
				s := strings.Repeat(u, k)
				got, cut := HeadTail(s, limit)
				if !utf8.ValidString(got) {
					t.Fatalf("%q×%d limit %d: invalid output %q", u, k, limit, got)
				}
				if k <= limit {
					if got != s || cut != nil {
						t.Fatalf("%q×%d limit %d: got %q, %+v; want input unchanged and no cut", u, k, limit, got, cut)
					}
					continue
				}
				h, tl := limit/2, limit-limit/2
				want := strings.Repeat(u, h) + Marker(k-limit) + strings.Repeat(u, tl)
				if got != want {
					t.Fatalf("%q×%d limit %d: got %q, want %q", u, k, limit, got, want)
				}
				if cut == nil || *cut != (Cut{Total: k, Head: h, Tail: tl}) {
					t.Fatalf("%q×%d limit %d: cut %+v, want {%d %d %d}", u, k, limit, cut, k, h, tl)
				}
			}
		}
	}
}

func TestHeadTailTable(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		limit int
		want  string
		cut   *Cut
	}{
		{"empty", "", 0, "", nil},
		{"empty with room", "", 10, "", nil},
		{"exact limit", "héllo", 5, "héllo", nil},
		{"limit plus one", "héllo!", 5, "hé" + Marker(1) + "lo!", &Cut{Total: 6, Head: 2, Tail: 3}},
		{"mixed multibyte", "a中😀éb中😀é", 4, "a中" + Marker(4) + "😀é", &Cut{Total: 8, Head: 2, Tail: 2}},
		{"negative limit", "ab", -1, Marker(2), &Cut{Total: 2, Head: 0, Tail: 0}},
		{"zero limit", "x", 0, Marker(1), &Cut{Total: 1}},
		{"invalid fits", "a\xffb", 3, "a\uFFFDb", nil},
		{"invalid run is one character", "a\xff\xfe\x80b", 3, "a\uFFFDb", nil},
		{"invalid cut", "a\xff\xfeb", 2, "a" + Marker(1) + "b", &Cut{Total: 3, Head: 1, Tail: 1}},
		{"truncated rune fits", "\xe4\xb8", 1, "\uFFFD", nil},
		{"truncated rune in the middle", "中\xe4\xb8中", 2, "中" + Marker(1) + "中", &Cut{Total: 3, Head: 1, Tail: 1}},
		{"only invalid", "\xff\xff\xff", 0, Marker(1), &Cut{Total: 1}},
		{"lone continuation bytes", "\x80\x80a\x80", 2, "\uFFFD" + Marker(1) + "\uFFFD", &Cut{Total: 3, Head: 1, Tail: 1}},
		{"marker thousands", strings.Repeat("x", 1002), 2, "x" + Marker(1000) + "x", &Cut{Total: 1002, Head: 1, Tail: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := HeadTail(tt.in, tt.limit)
			if got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
			if (cut == nil) != (tt.cut == nil) || (cut != nil && *cut != *tt.cut) {
				t.Errorf("cut = %+v, want %+v", cut, tt.cut)
			}
			if !utf8.ValidString(got) {
				t.Errorf("output is not valid UTF-8: %q", got)
			}
		})
	}
}

func TestHeadTailUnchangedIsSame(t *testing.T) {
	s := strings.Repeat("中", 100)
	got, cut := HeadTail(s, 100)
	if cut != nil || got != s {
		t.Fatalf("got cut %+v", cut)
	}
	if allocs := testing.AllocsPerRun(100, func() { HeadTail(s, 100) }); allocs != 0 {
		t.Errorf("HeadTail of fitting valid text allocates %v times, want 0", allocs)
	}
}

func TestMarker(t *testing.T) {
	if got, want := Marker(1234567), "\n[… 1,234,567 characters cut …]\n"; got != want {
		t.Errorf("marker = %q, want %q", got, want)
	}
	if got, want := Marker(1), "\n[… 1 character cut …]\n"; got != want {
		t.Errorf("marker = %q, want %q", got, want)
	}
}

func TestCommas(t *testing.T) {
	tests := map[int]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 12345: "12,345", 123456: "123,456",
		1234567: "1,234,567", -1234: "-1,234", -999: "-999", 1000000000: "1,000,000,000",
	}
	for n, want := range tests {
		if got := commas(n); got != want {
			t.Errorf("commas(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		cut  Cut
		what string
		want string
	}{
		{Cut{Total: 1234567, Head: 15000, Tail: 15000, File: "/path/file.txt"}, "output",
			"[output cut: 1,234,567 characters in all; showing the first 15,000 and the last 15,000; the whole output is in /path/file.txt]"},
		{Cut{Total: 20001, Head: 5000, Tail: 5000}, "value",
			"[value cut: 20,001 characters in all; showing the first 5,000 and the last 5,000]"},
		{Cut{Total: 3, Head: 0, Tail: 1}, "output", "[output cut: 3 characters in all; showing the last 1]"},
		{Cut{Total: 3, Head: 1, Tail: 0}, "output", "[output cut: 3 characters in all; showing the first 1]"},
		{Cut{Total: 1, File: "/f"}, "output", "[output cut: 1 character in all; showing none of it; the whole output is in /f]"},
	}
	for _, tt := range tests {
		if got := tt.cut.Describe(tt.what); got != tt.want {
			t.Errorf("Describe(%q) of %+v\n got %q\nwant %q", tt.what, tt.cut, got, tt.want)
		}
	}
}

func TestCutJSON(t *testing.T) {
	b, err := json.Marshal(Cut{Total: 3, Head: 1, Tail: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"total":3,"head":1,"tail":1}`; got != want {
		t.Errorf("json = %s, want %s", got, want)
	}
}

// countAll counts b in one piece.
func countAll(b []byte) int64 {
	var c counter
	c.add(b)
	return c.n
}

func TestCounter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := [][]byte{
		[]byte("a"), []byte("é"), []byte("中"), []byte("😀"), []byte("\n"),
		{0x80}, {0xff}, {0xe4, 0xb8}, {0xf0, 0x9f}, {0xc0}, {0xed, 0xa0, 0x80}, {0xe0, 0x80},
	}
	for iter := range 3000 {
		var b []byte
		valid := iter%2 == 0
		for range rng.IntN(200) {
			if valid {
				b = append(b, alphabet[rng.IntN(5)]...)
			} else {
				b = append(b, alphabet[rng.IntN(len(alphabet))]...)
			}
		}
		whole := countAll(b)
		if valid && whole != int64(utf8.RuneCount(b)) {
			t.Fatalf("count of valid %q = %d, want %d", b, whole, utf8.RuneCount(b))
		}
		if v := utf8.RuneCountInString(strings.ToValidUTF8(string(b), replacement)); whole < int64(v) {
			t.Fatalf("count of %q = %d, below valid-ized rune count %d", b, whole, v)
		}
		// Any split counts the same.
		var c counter
		rest := b
		for len(rest) > 0 {
			n := min(len(rest), 1+rng.IntN(9))
			c.add(rest[:n])
			rest = rest[n:]
		}
		if c.n != whole {
			t.Fatalf("split count of %q = %d, whole count %d", b, c.n, whole)
		}
		// headEnd agrees with the counter.
		for k := 0; int64(k) <= whole; k++ {
			cutAt := rng.IntN(len(b) + 1)
			end, more := headEnd(b[:cutAt], b[cutAt:], k)
			if more != (int64(k) < whole) {
				t.Fatalf("headEnd(%q, %d) more = %v, whole count %d", b, k, more, whole)
			}
			if more && countAll(b[:end]) != int64(k) {
				t.Fatalf("headEnd(%q, %d) = %d, which holds %d characters", b, k, end, countAll(b[:end]))
			}
		}
	}
}

// slowCount is the counter's rule written plainly, one byte at a time.
func slowCount(p []byte) int64 {
	var n int64
	need := 0
	for _, b := range p {
		switch {
		case b < 0x80:
			n++
			need = 0
		case b < 0xC0:
			if need > 0 {
				need--
			} else {
				n++
			}
		case b < 0xE0:
			n++
			need = 1
		case b < 0xF0:
			n++
			need = 2
		case b < 0xF8:
			n++
			need = 3
		default:
			n++
			need = 0
		}
	}
	return n
}

func TestCounterMatchesRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]byte, rng.IntN(100))
		for i := range b {
			switch rng.IntN(4) {
			case 0:
				b[i] = byte(rng.UintN(256))
			case 1:
				b[i] = 0x80 | byte(rng.UintN(64))
			case 2:
				b[i] = 0xC0 | byte(rng.UintN(64))
			default:
				b[i] = byte(rng.UintN(128))
			}
		}
		want := slowCount(b)
		var c counter
		rest := b
		for len(rest) > 0 {
			n := min(len(rest), 1+rng.IntN(20))
			c.add(rest[:n])
			rest = rest[n:]
		}
		if c.n != want {
			t.Fatalf("counter(%x) = %d, want %d", b, c.n, want)
		}
	}
}

func TestRuneCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for range 1000 {
		v := string(mixedText(rng, rng.IntN(100)))
		if got, want := runeCount(v), utf8.RuneCountInString(v); got != want {
			t.Fatalf("runeCount(%q) = %d, want %d", v, got, want)
		}
	}
}
