package session

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/holder"
	"github.com/polyrepl/polyrepl/internal/paths"
)

// A cell's output as the daemon reads it. The holder owns the cell's
// output log: its first holder.CellInMemory bytes in memory, then the
// whole of it in the cell's whole-output file, which becomes the
// record's. The daemon counts what it is told of, holds the same first
// bytes and the last few, and reads any part by position: each reader
// (a client) from where it left off, so that collecting never takes
// output from anyone. It stores no copy of its own.

const (
	// charBlock spaces the marks that count characters, so that a
	// reader's part of a long output is counted reading at most two
	// blocks of its file.
	charBlock = 1 << 20
	// lastKept is how many of the last bytes the daemon holds: a reply's
	// tail without a read, and what it can still show of the output
	// its file could not take.
	lastKept = 4*api.OutputLimit + 8
)

// cellOutput is the daemon's view of a cell's output log.
type cellOutput struct {
	n     int64  // bytes printed
	first []byte // bytes [0, len(first)), up to holder.CellInMemory
	whole string // the file holding bytes [0, fileEnd()) past first
	// cutAt is where the file stops holding the output (the disk refused
	// the rest: why), or -1.
	cutAt int64
	why   error
	last  lastBytes
	// chars counts the characters (the bytes that begin one) in bytes
	// [0, counted); marks[k] those before byte (k+1)*charBlock.
	chars   int64
	counted int64
	marks   []int64
}

func newCellOutput(whole string) *cellOutput {
	return &cellOutput{whole: whole, cutAt: -1}
}

// write adds what the holder says the cell printed.
func (o *cellOutput) write(p []byte) {
	if room := holder.CellInMemory - len(o.first); room > 0 && int64(len(o.first)) == o.n {
		o.first = append(o.first, p[:min(room, len(p))]...)
	}
	if o.counted == o.n {
		o.count(p)
	}
	o.n += int64(len(p))
	o.last.write(p)
}

// count counts the characters of p, the bytes that follow o.counted.
func (o *cellOutput) count(p []byte) {
	for len(p) > 0 {
		k := min(int64(len(p)), charBlock-o.counted%charBlock)
		o.chars += int64(runeStarts(p[:k]))
		o.counted += k
		if o.counted%charBlock == 0 {
			o.marks = append(o.marks, o.chars)
		}
		p = p[k:]
	}
}

// runeStarts counts the bytes of p that begin a character: exact for
// valid UTF-8, and additive however the output was split. Eight bytes
// at a time: a continuation byte is 10xxxxxx, its top bit set and the
// next clear.
func runeStarts(p []byte) int {
	const highs = 0x8080808080808080
	n := len(p)
	for len(p) >= 32 {
		a, b := binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint64(p[8:])
		c, d := binary.LittleEndian.Uint64(p[16:]), binary.LittleEndian.Uint64(p[24:])
		if (a|b|c|d)&highs != 0 { // ASCII has none
			n -= bits.OnesCount64(a&^(a<<1)&highs) + bits.OnesCount64(b&^(b<<1)&highs) +
				bits.OnesCount64(c&^(c<<1)&highs) + bits.OnesCount64(d&^(d<<1)&highs)
		}
		p = p[32:]
	}
	for len(p) >= 8 {
		w := binary.LittleEndian.Uint64(p)
		n -= bits.OnesCount64(w & ^(w << 1) & highs)
		p = p[8:]
	}
	for _, b := range p {
		if b&0xC0 == 0x80 {
			n--
		}
	}
	return n
}

// cut says that the log's file holds the output only up to at (why).
func (o *cellOutput) cut(at int64, why error) {
	if o.cutAt < 0 {
		o.cutAt, o.why = at, why
	}
}

// fileEnd is how much of the output its file holds.
func (o *cellOutput) fileEnd() int64 {
	if o.whole == "" || o.n <= holder.CellInMemory && o.cutAt < 0 {
		return 0 // still in memory (the holder's and this)
	}
	if o.cutAt >= 0 {
		return o.cutAt
	}
	return o.n
}

// readAt reads bytes [from, to): from the first bytes, the file, or the
// last bytes; a stretch none holds (its file failed) is a line saying how
// much is missing and why.
func (o *cellOutput) readAt(from, to int64) []byte {
	to = min(to, o.n)
	var b []byte
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	lastFrom := o.n - int64(o.last.size())
	for pos := from; pos < to; {
		switch end := o.fileEnd(); {
		case pos < int64(len(o.first)):
			k := min(to, int64(len(o.first)))
			b = append(b, o.first[pos:k]...)
			pos = k
		case pos >= lastFrom:
			// Held here as the file holds them: a reply of the last
			// bytes (a 100 KB cell's whole) opens no file.
			b = append(b, o.last.since(o.n, pos, to)...)
			pos = to
		case pos < end:
			k := min(to, end)
			var err error
			if f == nil {
				f, err = paths.OpenFile(o.whole, os.O_RDONLY)
			}
			if err == nil {
				buf := make([]byte, k-pos)
				var n int
				n, err = f.ReadAt(buf, pos)
				b = append(b, buf[:n]...)
				if err == nil || errors.Is(err, io.EOF) && int64(n) == k-pos {
					pos = k
					continue
				}
				pos += int64(n)
			}
			o.cut(pos, err)
		default:
			k := min(to, lastFrom)
			b = append(b, fmt.Sprintf("\n[polyrepl: %d bytes of this output were lost here: %v]\n", k-pos, o.why)...)
			pos = k
		}
	}
	return b
}

// charsAt is the number of characters before byte p.
func (o *cellOutput) charsAt(p int64) int64 {
	p = min(p, o.n)
	if p == o.n && o.counted == o.n {
		return o.chars
	}
	if o.counted < p {
		// Taken up from an earlier daemon: counted from its file now.
		for o.counted < p {
			to := min(p, o.counted+charBlock-o.counted%charBlock)
			b := o.readAt(o.counted, to)
			if int64(len(b)) != to-o.counted {
				// Not all of it can be read (its file failed): a byte
				// counts as a character.
				b = make([]byte, to-o.counted)
			}
			o.count(b)
		}
	}
	k := p / charBlock
	base := int64(0)
	if k > 0 {
		base = o.marks[k-1]
	}
	return base + int64(runeStarts(o.readAt(k*charBlock, p)))
}

// read is a reader's part of the output, from byte from on, bounded to
// limit characters, and the byte it ends at (a character the cell has
// not finished printing is left for the next read). A cut part points
// at the file holding the whole, and, unless it is all the output of a
// finished cell, at the bytes of it the part was made of; err says why
// there is no file.
func (o *cellOutput) read(from int64, limit int, finished bool) (text string, cut *bound.Cut, end int64, err error) {
	end = o.n
	if from >= end {
		return "", nil, from, nil
	}
	if end-from <= int64(4*limit) {
		b := o.readAt(from, end)
		if k := unfinished(b); k > 0 && end == o.n {
			b, end = b[:len(b)-k], end-int64(k)
		}
		text, cut = bound.HeadTailLines(string(b), limit)
	} else {
		h, t := limit/2, limit-limit/2
		head := o.readAt(from, from+int64(4*h+3))
		tail := o.readAt(end-int64(4*t+3), end)
		if k := unfinished(tail); k > 0 {
			tail, end = tail[:len(tail)-k], end-int64(k)
		}
		text, cut = bound.Ends(head, tail, int(o.charsAt(end)-o.charsAt(from)), limit)
	}
	if cut != nil {
		if o.fileEnd() >= end {
			cut.File = o.whole
			if from > 0 || !finished || end < o.n {
				cut.From, cut.To = from, end
			}
		} else if o.why != nil {
			err = fmt.Errorf("the whole output could not be kept: %v", o.why)
		}
	}
	return text, cut, end, err
}

// part says where a reply's text, read whole from bytes [from, end),
// already is: the cell's whole-output file, those bytes of it; nil if no
// file holds them (a short output, held in memory only).
func (o *cellOutput) part(from, end int64, text string) *bound.Cut {
	if o.whole == "" || end <= from || o.fileEnd() < end {
		return nil
	}
	return &bound.Cut{Total: utf8.RuneCountInString(text), File: o.whole, From: from, To: end}
}

// unfinished is the length of a character b's end began but did not
// finish, or 0.
func unfinished(b []byte) int {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if c := b[len(b)-i]; utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}

// lastBytes holds the last lastKept bytes written.
type lastBytes struct {
	buf  []byte
	pos  int
	full bool
}

func (l *lastBytes) write(p []byte) {
	if l.buf == nil {
		l.buf = make([]byte, 0, 4096)
	}
	if !l.full && len(l.buf)+len(p) <= lastKept {
		l.buf = append(l.buf, p...)
		return
	}
	if !l.full {
		old := l.buf
		l.buf = make([]byte, lastKept)
		copy(l.buf, old)
		l.pos, l.full = len(old), true
		if l.pos == lastKept {
			l.pos = 0
		}
	}
	if len(p) >= lastKept {
		copy(l.buf, p[len(p)-lastKept:])
		l.pos = 0
		return
	}
	n := copy(l.buf[l.pos:], p)
	copy(l.buf, p[n:])
	l.pos = (l.pos + len(p)) % lastKept
}

func (l *lastBytes) size() int {
	if l.full {
		return lastKept
	}
	return len(l.buf)
}

// since is bytes [from, to) of the output, which ends at n and whose
// last bytes these are.
func (l *lastBytes) since(n, from, to int64) []byte {
	var all []byte
	if l.full {
		all = append(append(all, l.buf[l.pos:]...), l.buf[:l.pos]...)
	} else {
		all = l.buf
	}
	start := n - int64(len(all))
	return append([]byte(nil), all[from-start:to-start]...)
}
