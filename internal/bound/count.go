package bound

import (
	"encoding/binary"
	"math/bits"
)

// counter counts the characters of a byte stream fed to it in arbitrary
// pieces, eight bytes at a time and without decoding runes.
//
// A character starts at every byte that is not a UTF-8 continuation byte
// (b&0xC0 != 0x80), and at every continuation byte that no lead byte is
// waiting for (a stray one): a lead byte C0–DF waits for 1 continuation
// byte, E0–EF for 2, F0–F7 for 3, and any other byte for none. For valid
// UTF-8 this is exactly the rune count. For invalid input it is never less
// than the rune count of strings.ToValidUTF8 of the same bytes: every valid
// rune starts with a counted byte, and every maximal run of invalid bytes
// contains a counted byte (a non-continuation byte, or a first continuation
// byte after a valid rune or the start). So a stream the counter says fits in
// a limit still fits once made valid. It also bounds bytes: a character is at
// most 4 bytes, so n characters are at most 4n bytes.
//
// Whether a continuation byte is stray depends only on the 3 bytes before
// it, so the counter carries those bytes' class flags from piece to piece,
// and the count is the same however the stream is split.
type counter struct {
	n int64 // characters counted so far
	// Class flags (see classify) of the last 8 bytes counted, the most
	// recent in the top byte; all zero at the start of a stream.
	cont, l2, l3, l4 uint64
}

// hi has the top bit of every byte of a word set.
const hi = 0x8080808080808080

// classify returns, in bit 7 of each byte of w, whether that byte is a
// continuation byte, and whether it is a lead byte waiting for at least 1, 2
// or 3 continuation bytes.
func classify(w uint64) (cont, l2, l3, l4 uint64) {
	b6, b5, b4, b3 := w<<1, w<<2, w<<3, w<<4 // bit k moved to bit 7
	geC0 := w & b6
	geE0 := geC0 & b5
	geF0 := geE0 & b4
	geF8 := geF0 & b3
	return w &^ b6 & hi, geC0 &^ geF8 & hi, geE0 &^ geF8 & hi, geF0 &^ geF8 & hi
}

// strays returns, in bit 7 of each byte, which continuation bytes of a word
// with flags cont, l2, l3 no lead byte waits for, given the flags pc, p2, p3,
// p4 of the word before it.
func strays(cont, l2, l3, l4, pc, p2, p3, p4 uint64) uint64 {
	c1 := cont<<8 | pc>>56  // byte before is a continuation byte
	c2 := cont<<16 | pc>>48 // two bytes before is one
	w2 := l2<<8 | p2>>56    // byte before waits for at least 1
	w3 := l3<<16 | p3>>48   // two bytes before waits for at least 2
	w4 := l4<<24 | p4>>40   // three bytes before waits for 3
	return cont &^ (w2 | c1&w3 | c1&c2&w4)
}

// add counts p, continuing from the bytes counted before.
func (c *counter) add(p []byte) {
	n := c.n
	pc, p2, p3, p4 := c.cont, c.l2, c.l3, c.l4
	for len(p) >= 32 && (binary.LittleEndian.Uint64(p)|binary.LittleEndian.Uint64(p[8:])|
		binary.LittleEndian.Uint64(p[16:])|binary.LittleEndian.Uint64(p[24:]))&hi == 0 {
		// ASCII: every byte is a character, and none waits for more.
		n += 32
		p = p[32:]
		pc, p2, p3, p4 = 0, 0, 0, 0
	}
	for len(p) >= 8 {
		w := binary.LittleEndian.Uint64(p)
		p = p[8:]
		if w&hi == 0 {
			n += 8
			pc, p2, p3, p4 = 0, 0, 0, 0
			continue
		}
		cont, l2, l3, l4 := classify(w)
		n += int64(8 - bits.OnesCount64(cont) + bits.OnesCount64(strays(cont, l2, l3, l4, pc, p2, p3, p4)))
		pc, p2, p3, p4 = cont, l2, l3, l4
	}
	if k := len(p); k > 0 {
		// The last 1–7 bytes, padded with zero bytes, which are ASCII
		// and so neither continuation nor lead bytes.
		var buf [8]byte
		copy(buf[:], p)
		cont, l2, l3, l4 := classify(binary.LittleEndian.Uint64(buf[:]))
		n += int64(k - bits.OnesCount64(cont) + bits.OnesCount64(strays(cont, l2, l3, l4, pc, p2, p3, p4)))
		// Move the k real bytes to the top, under them the last bytes
		// counted before.
		up, down := uint(8*(8-k)), uint(8*k)
		pc, p2, p3, p4 = cont<<up|pc>>down, l2<<up|p2>>down, l3<<up|p3>>down, l4<<up|p4>>down
	}
	c.n = n
	c.cont, c.l2, c.l3, c.l4 = pc, p2, p3, p4
}

// headEnd returns how many leading bytes of a then b (one stream, split in
// two) make up its first k characters as counter counts them, and whether
// the stream has more than k characters. It is used once per segment, when
// the sink spills.
func headEnd(a, b []byte, k int) (int, bool) {
	need := 0
	seen := 0 // characters started so far
	pos := 0
	for _, part := range [2][]byte{a, b} {
		for _, c := range part {
			start := c&0xC0 != 0x80 || need == 0
			if start {
				if seen == k {
					return pos, true
				}
				seen++
			}
			switch {
			case c < 0x80:
				need = 0
			case c < 0xC0:
				if need > 0 {
					need--
				}
			case c < 0xE0:
				need = 1
			case c < 0xF0:
				need = 2
			case c < 0xF8:
				need = 3
			default:
				need = 0
			}
			pos++
		}
	}
	return pos, false
}
