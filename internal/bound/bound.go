// Package bound owns the limits on how much output and repr text a reply
// carries, and makes sure a limit never drops data silently: a bounded text
// keeps its head and tail, says in words what was cut (Cut.Describe), and,
// for captured output, points at a spool file holding the complete raw bytes
// (Sink).
//
// Characters are Unicode code points. Cutting never splits a UTF-8 sequence,
// and text handed back for a reply is always valid UTF-8 (invalid bytes are
// replaced with U+FFFD as strings.ToValidUTF8 does), while spool files keep
// the raw bytes exactly as the runtime printed them.
package bound

import (
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"
)

// replacement is what invalid UTF-8 turns into in text returned for a reply.
const replacement = "\uFFFD"

// Cut describes what a bound left out, so a reply can say it in words.
type Cut struct {
	Total int    `json:"total"`          // characters in the whole text
	Head  int    `json:"head"`           // characters kept from the start
	Tail  int    `json:"tail"`           // characters kept from the end
	File  string `json:"file,omitempty"` // where the whole text is, if saved
	// From and To are the bytes of File this text was made of, when it
	// is a part of what File holds (a reader's part of a cell's output,
	// or of one still running): To is 0 when it is the whole.
	From int64 `json:"from,omitempty"`
	To   int64 `json:"to,omitempty"`
}

// Describe renders the cut for a person or a model, so that nobody mistakes a
// bounded text for the whole one and everybody knows where the rest is, e.g.
// "[output cut: 1,234,567 characters in all; showing the first 15,000 and the last 15,000; the whole output is in /path/file.txt]".
// what is the noun ("output", "value"); without File the last clause is omitted.
func (c Cut) Describe(what string) string {
	var b strings.Builder
	b.WriteString("[")
	b.WriteString(what)
	b.WriteString(" cut: ")
	b.WriteString(Characters(c.Total))
	b.WriteString(" in all; ")
	switch {
	case c.Head > 0 && c.Tail > 0:
		b.WriteString("showing the first ")
		b.WriteString(commas(c.Head))
		b.WriteString(" and the last ")
		b.WriteString(commas(c.Tail))
	case c.Head > 0:
		b.WriteString("showing the first ")
		b.WriteString(commas(c.Head))
	case c.Tail > 0:
		b.WriteString("showing the last ")
		b.WriteString(commas(c.Tail))
	default:
		b.WriteString("showing none of it")
	}
	if c.File != "" {
		b.WriteString("; the whole ")
		b.WriteString(what)
		b.WriteString(" is in ")
		b.WriteString(c.File)
		if c.To > 0 {
			b.WriteString(" (this part: bytes ")
			b.WriteString(commas(int(c.From)))
			b.WriteString(" to ")
			b.WriteString(commas(int(c.To)))
			b.WriteString(")")
		}
	}
	b.WriteString("]")
	return b.String()
}

// HeadTail returns s unchanged (and nil) if it has at most limit runes;
// otherwise the first limit/2 runes, a marker line "\n[… N characters cut …]\n",
// and the last limit-limit/2 runes, plus the Cut (File empty). s may be invalid
// UTF-8: output is valid (invalid bytes become U+FFFD first, and runes are
// counted after that). It exists so a repr or any other in-memory text can be
// bounded with the same shape and marker as captured output.
func HeadTail(s string, limit int) (string, *Cut) {
	limit = max(limit, 0)
	v := s
	if !utf8.ValidString(s) {
		v = strings.ToValidUTF8(s, replacement)
	}
	if len(s) <= limit {
		// At most limit bytes means at most limit runes, valid or not.
		return v, nil
	}
	total := runeCount(v)
	if total <= limit {
		return v, nil
	}
	h, t := split(limit)
	headEnd := runeOffset(v, h)
	tailStart := lastRunesOffset(v, t)
	cut := &Cut{Total: total, Head: h, Tail: t}
	return v[:headEnd] + Marker(total-h-t) + v[tailStart:], cut
}

// split divides limit between head and tail.
func split(limit int) (head, tail int) {
	return limit / 2, limit - limit/2
}

// Marker is the line put where n characters of a text were cut.
func Marker(n int) string {
	return "\n[… " + Characters(n) + " cut …]\n"
}

// Characters says "1 character" or "N characters" with thousands separators.
func Characters(n int) string {
	if n == 1 {
		return "1 character"
	}
	return commas(n) + " characters"
}

// commas formats n in decimal with a comma every three digits.
func commas(n int) string {
	s := strconv.Itoa(n)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	if len(s) <= 3 {
		return sign + s
	}
	var b strings.Builder
	b.Grow(len(sign) + len(s) + len(s)/3)
	b.WriteString(sign)
	first := len(s) % 3
	if first == 0 {
		first = 3
	}
	b.WriteString(s[:first])
	for i := first; i < len(s); i += 3 {
		b.WriteByte(',')
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// runeOffset returns the byte offset just after the first k runes of the
// valid UTF-8 string v (len(v) if v has fewer).
func runeOffset(v string, k int) int {
	if k <= 0 {
		return 0
	}
	for i := 0; i < len(v); i++ {
		if v[i]&0xC0 != 0x80 {
			if k == 0 {
				return i
			}
			k--
		}
	}
	return len(v)
}

// lastRunesOffset returns the byte offset where the last k runes of the valid
// UTF-8 string v begin (0 if v has fewer).
func lastRunesOffset(v string, k int) int {
	i := len(v)
	for k > 0 && i > 0 {
		i--
		if v[i]&0xC0 != 0x80 {
			k--
		}
	}
	return i
}

// clampHead returns the longest prefix of the valid string v with at most k
// runes.
func clampHead(v string, k int) string {
	if len(v) <= k {
		return v
	}
	return v[:runeOffset(v, k)]
}

// clampTail returns the longest suffix of the valid string v with at most k
// runes.
func clampTail(v string, k int) string {
	if len(v) <= k {
		return v
	}
	return v[lastRunesOffset(v, k):]
}

// runeCount returns the number of runes in the valid UTF-8 string v: its
// length less its continuation bytes, counted eight bytes at a time.
func runeCount(v string) int {
	cont := 0
	i := 0
	for ; i+8 <= len(v); i += 8 {
		w := uint64(v[i]) | uint64(v[i+1])<<8 | uint64(v[i+2])<<16 | uint64(v[i+3])<<24 |
			uint64(v[i+4])<<32 | uint64(v[i+5])<<40 | uint64(v[i+6])<<48 | uint64(v[i+7])<<56
		cont += bits.OnesCount64(w &^ (w << 1) & hi)
	}
	for ; i < len(v); i++ {
		if v[i]&0xC0 == 0x80 {
			cont++
		}
	}
	return len(v) - cont
}
