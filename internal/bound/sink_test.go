package bound

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
)

// writeSplit writes data to s in pieces of random sizes up to maxPiece.
func writeSplit(t testing.TB, s *Sink, data []byte, rng *rand.Rand, maxPiece int) {
	t.Helper()
	for len(data) > 0 {
		n := min(len(data), 1+rng.IntN(maxPiece))
		if m, err := s.Write(data[:n]); m != n || err != nil {
			t.Fatalf("Write = %d, %v; want %d, nil", m, err, n)
		}
		data = data[n:]
	}
}

// mixedText returns about n bytes of valid text mixing 1- to 4-byte runes.
func mixedText(rng *rand.Rand, n int) []byte {
	units := []string{"a", "b", " ", "\n", "é", "ß", "中", "文", "😀", "🎉"}
	var b []byte
	for len(b) < n {
		b = append(b, units[rng.IntN(len(units))]...)
	}
	return b
}

// dirFiles lists the names in dir.
func dirFiles(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// checkBounded fails unless text is valid UTF-8 within limit characters plus
// the marker for cut.
func checkBounded(t testing.TB, text string, cut *Cut, limit int) {
	t.Helper()
	if !utf8.ValidString(text) {
		t.Fatalf("text is not valid UTF-8: %q", text)
	}
	bound := limit
	if cut != nil {
		bound += utf8.RuneCountInString(Marker(cut.Total - cut.Head - cut.Tail))
		if cut.Head > limit/2 || cut.Tail > limit-limit/2 {
			t.Fatalf("cut %+v keeps more than limit %d allows", cut, limit)
		}
	}
	if n := utf8.RuneCountInString(text); n > bound {
		t.Fatalf("text has %d characters, bound is %d", n, bound)
	}
}

func TestSinkSmallStaysInMemory(t *testing.T) {
	dir := t.TempDir()
	s := NewSink(100, dir, "out-*.txt")
	for _, p := range []string{"hello ", "wörld ", "中文 ", "😀"} {
		s.Write([]byte(p))
	}
	if s.Len() != int64(len("hello wörld 中文 😀")) {
		t.Errorf("Len = %d", s.Len())
	}
	text, cut, err := s.Take()
	if text != "hello wörld 中文 😀" || cut != nil || err != nil {
		t.Fatalf("Take = %q, %+v, %v", text, cut, err)
	}
	if s.file != nil || s.path != "" || len(dirFiles(t, dir)) != 0 {
		t.Errorf("small output opened a spool file: %v", dirFiles(t, dir))
	}
}

func TestSinkExactLimit(t *testing.T) {
	for _, u := range []string{"a", "é", "中", "😀"} {
		for _, limit := range []int{0, 1, 2, 5, 10} {
			for k := max(0, limit-2); k <= limit+2; k++ {
				for _, piece := range []int{1, 2, 3, 5, 100} {
					dir := t.TempDir()
					s := NewSink(limit, dir, "out-*")
					data := []byte(strings.Repeat(u, k))
					rest := data
					for len(rest) > 0 {
						n := min(piece, len(rest))
						s.Write(rest[:n])
						rest = rest[n:]
					}
					text, cut, err := s.Take()
					if err != nil {
						t.Fatal(err)
					}
					want, wantCut := HeadTailLines(string(data), limit)
					if text != want {
						t.Fatalf("%q×%d limit %d piece %d: text %q, want %q", u, k, limit, piece, text, want)
					}
					if (cut == nil) != (wantCut == nil) {
						t.Fatalf("%q×%d limit %d piece %d: cut %+v, want %+v", u, k, limit, piece, cut, wantCut)
					}
					if cut == nil {
						if n := len(dirFiles(t, dir)); n != 0 {
							t.Fatalf("no cut but %d spool files", n)
						}
						continue
					}
					if cut.Total != wantCut.Total || cut.Head != wantCut.Head || cut.Tail != wantCut.Tail {
						t.Fatalf("%q×%d limit %d piece %d: cut %+v, want %+v", u, k, limit, piece, cut, wantCut)
					}
					got, err := os.ReadFile(cut.File)
					if err != nil || !bytes.Equal(got, data) {
						t.Fatalf("spool file %q = %q, %v; want %q", cut.File, got, err, data)
					}
				}
			}
		}
	}
}

func TestSinkLargeSpills(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ limit, size, piece int }{
		{10, 1000, 7},
		{1000, 200_000, 5000},
		{30000, 1 << 20, 64 << 10},
		{30000, 3 << 20, 100},
	} {
		dir := t.TempDir()
		s := NewSink(tc.limit, dir, "out-*.txt")
		data := mixedText(rng, tc.size)
		writeSplit(t, s, data, rng, tc.piece)
		if s.Len() != int64(len(data)) {
			t.Fatalf("Len = %d, want %d", s.Len(), len(data))
		}
		text, cut, err := s.Take()
		if err != nil {
			t.Fatal(err)
		}
		want, wantCut := HeadTailLines(string(data), tc.limit)
		if text != want {
			t.Fatalf("limit %d: text differs from HeadTail of everything written", tc.limit)
		}
		if cut == nil || cut.File == "" || cut.Total != wantCut.Total || cut.Head != wantCut.Head || cut.Tail != wantCut.Tail {
			t.Fatalf("cut = %+v, want %+v with a file", cut, wantCut)
		}
		if filepath.Dir(cut.File) != dir || !strings.HasPrefix(filepath.Base(cut.File), "out-") {
			t.Errorf("spool file %s is not in %s with the pattern", cut.File, dir)
		}
		got, err := os.ReadFile(cut.File)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("spool file holds %d bytes (%v), want exactly the %d written", len(got), err, len(data))
		}
		fi, err := os.Stat(cut.File)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("spool file mode = %v, %v; want 0600", fi.Mode(), err)
		}
		checkBounded(t, text, cut, tc.limit)
		if !strings.Contains(cut.Describe("output"), cut.File) {
			t.Errorf("Describe does not name the file: %s", cut.Describe("output"))
		}
	}
}

func TestSinkTakeResets(t *testing.T) {
	dir := t.TempDir()
	s := NewSink(10, dir, "out-*")
	s.Write([]byte("0123456789abcdef"))
	if _, cut, err := s.Take(); cut == nil || err != nil {
		t.Fatalf("first Take: cut %+v, err %v", cut, err)
	}
	if s.Len() != 0 {
		t.Errorf("Len after Take = %d", s.Len())
	}
	if text, cut, err := s.Take(); text != "" || cut != nil || err != nil {
		t.Fatalf("empty Take = %q, %+v, %v", text, cut, err)
	}
	s.Write([]byte("small"))
	if text, cut, err := s.Take(); text != "small" || cut != nil || err != nil {
		t.Fatalf("Take after reset = %q, %+v, %v", text, cut, err)
	}
	if n := len(dirFiles(t, dir)); n != 1 {
		t.Errorf("%d spool files, want 1", n)
	}
}

func TestSinkTwoSegmentsTwoFiles(t *testing.T) {
	dir := t.TempDir()
	s := NewSink(20, dir, "out-*")
	first := []byte(strings.Repeat("中a", 50))
	second := []byte(strings.Repeat("😀b", 70))
	s.Write(first)
	_, cut1, err := s.Take()
	if err != nil || cut1 == nil {
		t.Fatalf("first Take: %+v, %v", cut1, err)
	}
	s.Write(second[:3])
	s.Write(second[3:])
	text2, cut2, err := s.Take()
	if err != nil || cut2 == nil {
		t.Fatalf("second Take: %+v, %v", cut2, err)
	}
	if cut1.File == cut2.File {
		t.Fatalf("both segments went to %s", cut1.File)
	}
	for _, c := range []struct {
		file string
		want []byte
	}{{cut1.File, first}, {cut2.File, second}} {
		got, err := os.ReadFile(c.file)
		if err != nil || !bytes.Equal(got, c.want) {
			t.Errorf("%s = %q, %v; want %q", c.file, got, err, c.want)
		}
	}
	if want, _ := HeadTailLines(string(second), 20); text2 != want {
		t.Errorf("second text %q, want %q", text2, want)
	}
}

func TestSinkMultibyteNeverSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, limit := range []int{1, 2, 3, 4, 5, 8, 13, 64} {
		for piece := 1; piece <= 9; piece++ {
			s := NewSink(limit, t.TempDir(), "out-*")
			data := mixedText(rng, 50*limit+rng.IntN(40))
			writeSplit(t, s, data, rng, piece)
			text, cut, err := s.Take()
			if err != nil {
				t.Fatal(err)
			}
			if !utf8.ValidString(text) {
				t.Fatalf("limit %d piece %d: invalid text %q", limit, piece, text)
			}
			if want, _ := HeadTailLines(string(data), limit); text != want {
				t.Fatalf("limit %d piece %d: text %q, want %q", limit, piece, text, want)
			}
			checkBounded(t, text, cut, limit)
		}
	}
}

func TestSinkInvalidUTF8(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for iter := range 500 {
		limit := rng.IntN(40)
		data := make([]byte, rng.IntN(400))
		for i := range data {
			if rng.IntN(3) == 0 {
				data[i] = byte(rng.UintN(256))
			} else {
				data[i] = "a中😀é"[rng.IntN(10)]
			}
		}
		s := NewSink(limit, t.TempDir(), "out-*")
		writeSplit(t, s, data, rng, 1+iter%17)
		text, cut, err := s.Take()
		if err != nil {
			t.Fatal(err)
		}
		checkBounded(t, text, cut, limit)
		if cut == nil {
			want, wantCut := HeadTailLines(string(data), limit)
			if text != want || wantCut != nil {
				t.Fatalf("no cut, text %q, HeadTail %q %+v", text, want, wantCut)
			}
			continue
		}
		got, err := os.ReadFile(cut.File)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("spool file = %x, %v; want %x", got, err, data)
		}
		if head := text[:runeOffset(text, cut.Head)]; !strings.HasPrefix(strings.ToValidUTF8(string(data), replacement), head) {
			t.Fatalf("head of %q is not a prefix: %q", data, text)
		}
	}
}

func TestSinkMemoryBounded(t *testing.T) {
	const limit = 30000
	for _, tc := range []struct {
		name  string
		chunk []byte
	}{
		{"text", mixedText(rand.New(rand.NewPCG(11, 12)), 64<<10)},
		{"continuation bytes", bytes.Repeat([]byte{0x80}, 64<<10)},
		{"lead bytes", bytes.Repeat([]byte{0xf0}, 64<<10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := NewSink(limit, dir, "out-*")
			var ms runtime.MemStats
			s.Write(tc.chunk) // spills
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			const total = 50 << 20
			written := len(tc.chunk)
			for written < total {
				s.Write(tc.chunk)
				written += len(tc.chunk)
			}
			runtime.ReadMemStats(&ms)
			if grew := ms.TotalAlloc - before; grew > 1<<20 {
				t.Errorf("writing %d MB allocated %d bytes", total>>20, grew)
			}
			if c := cap(s.buf); c > 8*limit {
				t.Errorf("head buffer cap %d for limit %d", c, limit)
			}
			if c := cap(s.ring); c > 4*limit+3 {
				t.Errorf("tail ring cap %d for limit %d", c, limit)
			}
			if s.w.Size() > spoolBuffer {
				t.Errorf("spool buffer %d", s.w.Size())
			}
			text, cut, err := s.Take()
			if err != nil {
				t.Fatal(err)
			}
			checkBounded(t, text, cut, limit)
			fi, err := os.Stat(cut.File)
			if err != nil || fi.Size() != int64(written) {
				t.Fatalf("spool file size %v, %v; want %d", fi.Size(), err, written)
			}
			if cut.Total < cut.Head+cut.Tail {
				t.Errorf("cut %+v", cut)
			}
		})
	}
}

func TestSinkUnwritableDir(t *testing.T) {
	base := t.TempDir()
	notDir := filepath.Join(base, "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{
		"missing":   filepath.Join(base, "missing"),
		"not a dir": filepath.Join(notDir, "spool"),
		"read only": filepath.Join(base, "ro"),
	}
	if err := os.Mkdir(dirs["read only"], 0o500); err != nil {
		t.Fatal(err)
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			if name == "read only" && os.Geteuid() == 0 {
				t.Skip("root can write to a read-only directory")
			}
			s := NewSink(10, dir, "out-*")
			data := []byte(strings.Repeat("中x", 100))
			s.Write(data[:7])
			s.Write(data[7:])
			text, cut, err := s.Take()
			if err == nil {
				t.Fatal("Take reported no error for an unwritable spool directory")
			}
			if errors.Unwrap(err) == nil || !strings.Contains(err.Error(), "create spool file") {
				t.Errorf("error does not wrap the cause or say what failed: %v", err)
			}
			if cut == nil || cut.File != "" {
				t.Fatalf("cut = %+v, want a cut without a file", cut)
			}
			checkBounded(t, text, cut, 10)
			if want, _ := HeadTailLines(string(data), 10); text != want {
				t.Errorf("text %q, want %q", text, want)
			}
			// The error is reported once; the next segment is fresh.
			s.Write([]byte("ok"))
			if text, cut, err := s.Take(); text != "ok" || cut != nil || err != nil {
				t.Errorf("next Take = %q, %+v, %v", text, cut, err)
			}
		})
	}
}

func TestSinkWriteFailure(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "full")
	s := NewSink(100, dir, "out-*")
	s.create = func(string, string) (*os.File, error) {
		if err := os.Symlink("/dev/full", link); err != nil {
			return nil, err
		}
		return os.OpenFile(link, os.O_WRONLY, 0)
	}
	rng := rand.New(rand.NewPCG(13, 14))
	data := mixedText(rng, 1<<20)
	writeSplit(t, s, data, rng, 1000)
	text, cut, err := s.Take()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v, want one wrapping ENOSPC", err)
	}
	if cut == nil || cut.File != "" {
		t.Fatalf("cut = %+v, want one without a file", cut)
	}
	if want, _ := HeadTailLines(string(data), 100); text != want {
		t.Errorf("text %q, want %q", text, want)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("the failed spool file was not removed: %v", err)
	}
}

func TestSinkClose(t *testing.T) {
	dir := t.TempDir()
	s := NewSink(10, dir, "out-*")
	data := []byte(strings.Repeat("0123456789", 100))
	s.Write(data)
	path := s.path
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after Close the spool file holds %d bytes (%v), want %d", len(got), err, len(data))
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// Nothing written after Close: the file is whole and still reported.
	_, cut, err := s.Take()
	if err != nil || cut == nil || cut.File != path {
		t.Fatalf("Take after Close = %+v, %v", cut, err)
	}
	// A closed sink keeps bounding output but opens no spool files.
	s.Write(data)
	text, cut, err := s.Take()
	if err == nil || cut == nil || cut.File != "" {
		t.Fatalf("Take of a spilled segment after Close = %+v, %v", cut, err)
	}
	checkBounded(t, text, cut, 10)
	if n := len(dirFiles(t, dir)); n != 1 {
		t.Errorf("%d files in the spool dir, want 1", n)
	}

	// Output after Close in a segment that already spilled is reported.
	s2 := NewSink(10, dir, "out-*")
	s2.Write(data)
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	s2.Write([]byte("more"))
	if _, cut, err := s2.Take(); err == nil || cut.File != "" {
		t.Errorf("output after Close: cut %+v, err %v", cut, err)
	}
}
