package mcp

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/bound"
)

// Bounds of what a reply repeats of a client's own input: a tool's
// name, an argument's name or value, a method, the client's name. A
// client that sends megabytes is told so in a line, not sent them back.
const (
	quoted    = 200  // characters of an input a reply quotes
	labelMax  = 100  // characters of a client's name its cells are labelled with
	errorText = 4000 // characters of a tool error's or a JSON-RPC error's text
	argMax    = 4096 // characters of an argument other than code and text (PATH_MAX)
)

// quoteCut quotes s as %q does, at most n of its characters, saying how
// long it was when it was longer: "yyy…" (50,000 characters).
func quoteCut(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return strconv.Quote(s)
	}
	return strconv.Quote(headRunes(s, n)+"…") + " (" + characters(total) + ")"
}

// labelCut bounds a name from outside used as a label: at most n
// characters, and the cut said in it.
func labelCut(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s
	}
	return headRunes(s, n) + fmt.Sprintf("… (%d of %s)", n, characters(total))
}

// cutText keeps the head and tail of a long text, the cut said in it.
func cutText(s string, n int) string {
	short, _ := bound.HeadTail(s, n)
	return short
}

// headRunes is the first n characters of s (invalid UTF-8 replaced).
func headRunes(s string, n int) string {
	short, _ := bound.HeadTail(s, 2*n)
	i, k := 0, 0
	for i < len(short) && k < n {
		_, w := utf8.DecodeRuneInString(short[i:])
		i += w
		k++
	}
	return short[:i]
}

// characters says "1 character" or "N characters", N with commas.
func characters(n int) string {
	if n == 1 {
		return "1 character"
	}
	return commas(n) + " characters"
}

// commas writes n with a comma every three digits.
func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
