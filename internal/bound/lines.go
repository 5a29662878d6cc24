package bound

import (
	"strings"
	"unicode/utf8"
)

// HeadTailLines bounds a text made of lines, such as captured output, as
// HeadTail does, but moves each end of the cut to a line end when one is
// near (within a fifth of what that end keeps): a cut through the middle
// of a line leaves both halves unreadable. A text of very long lines is
// still cut near its bound. The Cut counts what is kept.
func HeadTailLines(s string, limit int) (string, *Cut) {
	limit = max(limit, 0)
	v := s
	if !utf8.ValidString(s) {
		v = strings.ToValidUTF8(s, replacement)
	}
	total := runeCount(v)
	if total <= limit {
		return v, nil
	}
	h, t := split(limit)
	return LineCut(v[:runeOffset(v, h)], v[lastRunesOffset(v, t):], total)
}

// LineCut joins the head and the tail kept of a text of total characters
// (valid UTF-8), first moving the cut to line ends where one is near, with
// the marker between them. It is how every cut of lines is shown, whoever
// kept the head and the tail (a reply's Sink, the shared record).
func LineCut(head, tail string, total int) (string, *Cut) {
	head, tail = atLines(head, tail)
	return JoinCut(head, tail, total)
}

// JoinCut joins a head and a tail kept of a text of total characters, as
// they are, the marker between them saying how many were cut. A head that
// ends its line does not add a blank line before the marker.
func JoinCut(head, tail string, total int) (string, *Cut) {
	c := &Cut{Total: total, Head: utf8.RuneCountInString(head), Tail: utf8.RuneCountInString(tail)}
	c.Total = max(c.Total, c.Head+c.Tail)
	return strings.TrimSuffix(head, "\n") + Marker(c.Total-c.Head-c.Tail) + tail, c
}

// atLines drops the partial line at the end of head and at the start of
// tail, each only when the line end is near.
func atLines(head, tail string) (string, string) {
	if i := strings.LastIndexByte(head, '\n'); i >= 0 && utf8.RuneCountInString(head[i+1:]) <= nearLine(head) {
		head = head[:i+1]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 && utf8.RuneCountInString(tail[:i]) <= nearLine(tail) {
		tail = tail[i+1:]
	}
	return head, tail
}

// nearLine is how far a cut looks for a line end: a fifth of what that end
// keeps, at least one character.
func nearLine(kept string) int { return max(utf8.RuneCountInString(kept)/5, 1) }

// Ends bounds a text of total characters known by its ends only: head,
// its first bytes, and tail, its last (each at least four bytes a
// character kept, and three more, so that a character cut at either end
// is dropped cleanly). It is how a text too long to read whole (a cell's
// output in its file) is shown as the others are.
func Ends(head, tail []byte, total, limit int) (string, *Cut) {
	h, t := split(max(limit, 0))
	for i := 0; i < utf8.UTFMax-1 && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	for i := 0; i < utf8.UTFMax-1 && len(head) > 0; i++ {
		// A character the head's end cut is not counted as a broken one.
		k := len(head) - 1 - i
		if utf8.RuneStart(head[k]) {
			if !utf8.FullRune(head[k:]) {
				head = head[:k]
			}
			break
		}
	}
	hs := clampHead(strings.ToValidUTF8(string(head), replacement), h)
	ts := clampTail(strings.ToValidUTF8(string(tail), replacement), t)
	return LineCut(hs, ts, total)
}
