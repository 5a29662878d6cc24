// Package plain turns what a program wrote for a terminal into plain text
// for a reply: escape sequences (colours, cursor moves, window titles,
// hyperlinks) are removed, a line a progress bar rewrote with carriage
// returns keeps only what the terminal would finally show, backspaces
// erase, and other control characters are dropped. A model reading the
// reply sees what a person would have seen, and no escape sequence
// reaches the terminal of whoever prints the reply. Spool files keep the
// raw bytes.
package plain

import (
	"encoding/binary"
	"strings"
	"unicode/utf8"
)

const esc = 0x1b

// Text returns s made plain. s should be valid UTF-8 (invalid bytes pass
// through untouched); the result is never longer than s.
func Text(s string) string {
	if !needs(s) {
		return s
	}
	var out strings.Builder
	out.Grow(len(s))
	var line []byte // the current line, as the terminal would show it
	col := 0        // where the next character lands in line
	put := func(b []byte) {
		// Overwrite from col, as a terminal does after a carriage return.
		if col >= len(line) {
			line = append(line, b...)
		} else {
			// Replace whole characters: find the end of the overwritten ones.
			end := col
			for n := 0; n < utf8.RuneCount(b) && end < len(line); n++ {
				_, w := utf8.DecodeRune(line[end:])
				end += w
			}
			line = append(line[:col], append(append([]byte(nil), b...), line[end:]...)...)
		}
		col += len(b)
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			out.Write(line)
			out.WriteByte('\n')
			line, col = line[:0], 0
			i++
		case c == '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++ // CRLF ends the line as LF does
				continue
			}
			col = 0
			i++
		case c == '\b':
			if col > 0 {
				_, w := utf8.DecodeLastRune(line[:col])
				col -= w
			}
			i++
		case c == '\t':
			put([]byte{'\t'})
			i++
		case c == esc:
			i = skipEscape(s, i)
		case c < 0x20 || c == 0x7f:
			i++ // other C0 controls and DEL show nothing
		case c < utf8.RuneSelf:
			put([]byte{c})
			i++
		default:
			r, w := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == 0x9b: // CSI in its 8-bit form
				i = skipCSI(s, i+w)
			case r >= 0x80 && r <= 0x9f: // other C1 controls
				i += w
			default:
				put([]byte(s[i : i+w]))
				i += w
			}
		}
	}
	out.Write(line)
	return out.String()
}

// Simple reports whether p is printable ASCII, tabs and newlines only:
// text that Text and strings.ToValidUTF8 leave as it is, a character a
// byte. Most output is, and a caller handling a large output checks this
// in one pass instead of validating, making plain and counting it in
// three.
func Simple(p []byte) bool {
	// Thirty-two bytes at a time while none is unusual (not printable
	// ASCII: set high bit, DEL, or below 0x20); a stretch with one is
	// looked at a word at a time (it may be a newline or a tab).
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	unusual := func(w uint64) uint64 {
		del := w ^ (0x7f * ones)
		return (w | (del-ones)&^del | (w-0x20*ones)&^w) & highs
	}
	for len(p) >= 32 {
		if unusual(binary.LittleEndian.Uint64(p))|unusual(binary.LittleEndian.Uint64(p[8:]))|
			unusual(binary.LittleEndian.Uint64(p[16:]))|unusual(binary.LittleEndian.Uint64(p[24:])) != 0 && !simpleWords(p[:32]) {
			return false
		}
		p = p[32:]
	}
	return simpleWords(p)
}

// simpleWords is Simple eight bytes at a time: a word with no high bit,
// no DEL and no byte below 0x20 is simple; one with a control character
// is looked at byte by byte (it may be a newline or a tab).
func simpleWords(p []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(p) >= 8 {
		w := binary.LittleEndian.Uint64(p)
		del := w ^ (0x7f * ones)
		switch {
		case w&highs != 0, (del-ones)&^del&highs != 0:
			return false
		case (w-0x20*ones)&^w&highs != 0 && !simpleBytes(p[:8]):
			return false
		}
		p = p[8:]
	}
	return simpleBytes(p)
}

func simpleBytes(p []byte) bool {
	for _, c := range p {
		if (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// needs reports whether s holds anything Text changes.
func needs(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c == 0xc2 {
			return true // 0xc2 leads U+0080..U+00BF, among them the C1 controls
		}
	}
	return false
}

// skipEscape returns the index after the escape sequence at s[i].
func skipEscape(s string, i int) int {
	i++ // ESC
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		// OSC, DCS, SOS, PM, APC: a string ended by BEL or ST (ESC \).
		for j := i + 1; j < len(s); j++ {
			switch {
			case s[j] == 0x07:
				return j + 1
			case s[j] == esc && j+1 < len(s) && s[j+1] == '\\':
				return j + 2
			case s[j] == '\n' && s[i] != ']':
				return j // an unterminated string ends at the line
			}
		}
		return len(s)
	}
	// ESC, intermediates (0x20-0x2f), a final byte (0x30-0x7e).
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipCSI returns the index after a control sequence whose parameters
// start at s[i]: parameter bytes, intermediates, one final byte.
func skipCSI(s string, i int) int {
	for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f {
		i++
	}
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}

// RuneCount is utf8.RuneCount, eight bytes at a time while they are
// ASCII: a large output is counted at memory speed, and text that is
// not ASCII is counted exactly as utf8.RuneCount counts it (an invalid
// byte is one character).
func RuneCount(p []byte) int {
	const highs = 0x8080808080808080
	n := 0
	for len(p) >= 8 {
		if len(p) >= 32 && (binary.LittleEndian.Uint64(p)|binary.LittleEndian.Uint64(p[8:])|
			binary.LittleEndian.Uint64(p[16:])|binary.LittleEndian.Uint64(p[24:]))&highs == 0 {
			n, p = n+32, p[32:]
			continue
		}
		if binary.LittleEndian.Uint64(p)&highs == 0 {
			n, p = n+8, p[8:]
			continue
		}
		_, w := utf8.DecodeRune(p)
		n, p = n+1, p[w:]
	}
	return n + utf8.RuneCount(p)
}
