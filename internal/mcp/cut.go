package mcp

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/bound"
)

// Bounds of what a reply repeats of a client's own input: a tool's
// name, an argument's name or value, a method, the client's name. A
// client that sends megabytes is told so in a line, not sent them back.
const (
	quoted    = 200  // characters of an input a reply quotes
	errorText = 4000 // characters of a tool error's or a JSON-RPC error's text
)

// quoteCut quotes s as %q does, at most n of its characters, saying how
// long it was when it was longer: "yyy…" (50,000 characters).
func quoteCut(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return strconv.Quote(s)
	}
	return strconv.Quote(headRunes(s, n)+"…") + " (" + bound.Characters(total) + ")"
}

// cutRuns replaces each run of text longer than quoted characters that
// is the start of v — v whole, or as much of it as a cut made upstream
// (the daemon's refusals are bounded too) left — with v's head and its
// length.
func cutRuns(text, v string) string {
	start := v[:len(headRunes(v, quoted+1))]
	short := headRunes(v, quoted) + "… (" + bound.Characters(utf8.RuneCountInString(v)) + ")"
	var b strings.Builder
	for {
		i := strings.Index(text, start)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		n := len(start)
		for n < len(v) && i+n < len(text) && text[i+n] == v[n] {
			n++
		}
		for n < len(v) && n > len(start) && !utf8.RuneStart(v[n]) {
			n-- // end the run on a whole character
		}
		b.WriteString(text[:i])
		b.WriteString(short)
		text = text[i+n:]
	}
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

// echoCut bounds what an error text repeats of a call's arguments: each
// argument's name and each string value over quoted characters, as the
// text has it (plain or quoted), becomes its head and its length; then
// the text as a whole is cut to errorText. Refusals are written in many
// places (the client's checks, the daemon's, the runtimes'); this is the
// one door they all leave the MCP server by.
func echoCut(text string, args json.RawMessage) string {
	var long []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if len(v) > quoted {
				long = append(long, v)
			}
		case map[string]any:
			for k, x := range v {
				walk(k)
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	if len(text) > quoted {
		var v any
		if json.Unmarshal(args, &v) == nil {
			walk(v)
		}
	}
	// The longest first: a value that holds another is cut whole.
	slices.SortFunc(long, func(a, b string) int { return len(b) - len(a) })
	for _, v := range long {
		q := strconv.Quote(v)
		if strings.Contains(text, q) {
			text = strings.ReplaceAll(text, q, quoteCut(v, quoted))
		}
		text = cutRuns(text, v)
	}
	if utf8.RuneCountInString(text) > errorText {
		text = cutText(text, errorText)
	}
	return text
}
