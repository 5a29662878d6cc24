package bound

import "strings"

// Recut bounds again, to limit characters, a text whose cut says what an
// earlier bound kept of a whole (cut nil: the text is whole). The head
// is kept from the text's head and the tail from its tail, and the one
// marker between them counts from the whole (cut.Total), never from the
// text it was given: a 148,890-character output held to 30,000 and then
// to 8,000 says 140,966 characters cut, not 22,037. The Cut keeps the
// earlier one's total, file and byte range.
func Recut(text string, cut *Cut, limit int) (string, *Cut) {
	limit = max(limit, 0)
	if cut == nil {
		return HeadTailLines(text, limit)
	}
	if runeCount(text) <= limit {
		return text, cut
	}
	var head, tail string
	if m := Marker(cut.Total - cut.Head - cut.Tail); cut.Head+cut.Tail > 0 && strings.Contains(text, m) {
		head, tail, _ = strings.Cut(text, m)
		head += "\n" // the marker took the head's line end
	} else {
		// No marker: the text is one piece of the whole.
		h, t := split(limit)
		head, tail = text[:runeOffset(text, h)], text[lastRunesOffset(text, t):]
	}
	h, t := split(limit)
	if n := runeCount(tail); n < t {
		h = limit - n
	} else if n := runeCount(head); n < h {
		t = limit - n
	}
	short, c := LineCut(clampHead(head, h), clampTail(tail, t), cut.Total)
	c.File, c.From, c.To = cut.File, cut.From, cut.To
	return short, c
}
