package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
)

// A cell's output read by position: two readers each get every byte
// from where they are, a long part is cut with its characters counted
// (multibyte ones too) and points at the bytes of the file it was read
// from, and a character split between two writes is left for the next
// read whole.
func TestCellOutputReadByPosition(t *testing.T) {
	whole := filepath.Join(t.TempDir(), "s-1.txt")
	f, err := os.OpenFile(whole, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := newCellOutput(whole)
	var all bytes.Buffer
	write := func(p []byte) { // as the holder does: the file, then the event
		all.Write(p)
		f.Write(p)
		o.write(p)
	}
	line := []byte(strings.Repeat("é", 50) + "\n")
	for all.Len() < 3*charBlock {
		write(line)
	}
	text, cut, end, err := o.read(0, api.OutputLimit, false)
	if err != nil || end != int64(all.Len()) || cut == nil || cut.File != whole || cut.From != 0 || cut.To != end {
		t.Fatalf("the first reader: cut %+v, end %d, %v", cut, end, err)
	}
	if want := utf8.RuneCount(all.Bytes()); cut.Total != want || utf8.RuneCountInString(text) > api.OutputLimit+100 {
		t.Errorf("the cut counts %d characters of %d, keeps %d", cut.Total, want, utf8.RuneCountInString(text))
	}
	// A character split between two writes: the read stops before it.
	write([]byte("ab\xc3"))
	text, _, end2, _ := o.read(end, api.OutputLimit, false)
	if text != "ab" || end2 != end+2 {
		t.Errorf("a split character: read %q to %d, want \"ab\" to %d", text, end2, end+2)
	}
	write([]byte("\xa9!\n"))
	if text, _, _, _ := o.read(end2, api.OutputLimit, false); text != "é!\n" {
		t.Errorf("the rest: %q, want the character whole", text)
	}
	// Another reader from the start gets it all again.
	if _, cut, _, _ := o.read(0, api.OutputLimit, true); cut == nil || cut.Total != utf8.RuneCount(all.Bytes()) || cut.To != 0 {
		t.Errorf("a second reader's cut of a finished cell: %+v, want the whole, no part", cut)
	}
	if p := o.part(end, end2, "ab"); p == nil || p.From != end || p.To != end2 {
		t.Errorf("the part of a short read: %+v", p)
	}
}

// Output the file could not take is shown from what the daemon holds of
// its end, and a gap says how much is missing and why.
func TestCellOutputLostPart(t *testing.T) {
	o := newCellOutput(filepath.Join(t.TempDir(), "none.txt"))
	o.cut(0, errors.New("disk full"))
	for range 4 * lastKept / 1000 {
		o.write(bytes.Repeat([]byte("x"), 999))
		o.write([]byte("\n"))
	}
	text, _, _, err := o.read(0, api.OutputLimit, true)
	if !strings.Contains(text, "were lost here: disk full") || err == nil {
		t.Errorf("the reply says %q…, err %v; want the gap said", text[:min(len(text), 200)], err)
	}
}

// TestRuneStarts: counted eight bytes at a time as byte by byte, for
// text, invalid bytes and every split.
func TestRuneStarts(t *testing.T) {
	s := []byte("abc é中🎉\x80\xbf\xc0\xff" + strings.Repeat("xé", 20) + "\xe4\xb8")
	for i := range s {
		for j := i; j <= len(s); j++ {
			want := 0
			for _, b := range s[i:j] {
				if b&0xC0 != 0x80 {
					want++
				}
			}
			if got := runeStarts(s[i:j]); got != want {
				t.Fatalf("runeStarts(%q) = %d, want %d", s[i:j], got, want)
			}
		}
	}
}
