package driver

import (
	"bytes"
	"testing"
)

func TestHeldBack(t *testing.T) {
	marker := []byte("\x01end\x02")
	for _, tc := range []struct {
		data string
		want int
	}{
		{"", 0},
		{"abc", 0},
		{"abc\x01", 1},
		{"abc\x01e", 2},
		{"abc\x01en", 3},
		{"abc\x01end", 4},
		{"\x01en", 3},
		{"abc\x01x", 0},
		{"e", 0},
	} {
		if got := HeldBack([]byte(tc.data), marker); got != tc.want {
			t.Errorf("HeldBack(%q) = %d, want %d", tc.data, got, tc.want)
		}
	}
}

// FuzzSplitter cuts a stream into reads anywhere: the output passed on is
// the stream without its markers, and every marker is seen once, in place.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte("abc\x01end\x02def"), uint8(3))
	f.Add([]byte("\x01en\x01end\x02\x01end\x02"), uint8(1))
	f.Add([]byte("no marker at all \x01en"), uint8(7))
	f.Fuzz(func(t *testing.T, stream []byte, step uint8) {
		marker := []byte("\x01end\x02")
		want := bytes.ReplaceAll(stream, marker, []byte("|"))
		var got []byte
		sp := Splitter{Marker: marker}
		n := int(step)%16 + 1
		for i := 0; i < len(stream); i += n {
			sp.Feed(stream[i:min(i+n, len(stream))], func(b []byte) { got = append(got, b...) }, func() { got = append(got, '|') })
		}
		sp.Flush(func(b []byte) { got = append(got, b...) })
		if bytes.Contains(stream, []byte("|")) {
			return // the stand-in for a marker is ambiguous then
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("split %q in reads of %d: %q, want %q", stream, n, got, want)
		}
	})
}
