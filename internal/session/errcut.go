package session

import (
	"strings"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
)

// typeLimit bounds an error's type name: a class can be given any name.
const typeLimit = 200

// boundError holds a cell's error to limit characters, message and
// traceback together, each cut to its head and tail with the cut said,
// and returns the whole error as text to save when it cut anything (""
// when it did not). It is done once, where the daemon makes the result,
// so the reply, the MCP server, the record and its exports all show the
// same bounded error whatever the runtime sent.
//
// Each text gets half the room, and one that needs less gives the rest
// to the other: a short message beside a long traceback is kept whole.
//
// totals are the message's and the traceback's lengths as the runtime
// counted them, where it cut them itself (0: not cut there): the cut and
// its marker then count from the whole.
func boundError(e *api.CellError, limit int, totals ...int) (*api.CellError, string) {
	if e == nil {
		return nil, ""
	}
	m, t := chars(e.Message), chars(e.Traceback)
	if m+t <= limit && chars(e.Type) <= typeLimit {
		return e, ""
	}
	mRoom, tRoom := limit/2, limit-limit/2
	if m < mRoom {
		tRoom += mRoom - m
	}
	if t < tRoom {
		mRoom += tRoom - t
	}
	b := &api.CellError{}
	b.Type, _ = bound.HeadTail(e.Type, typeLimit)
	b.Message, b.MessageCut = bound.HeadTailLines(e.Message, mRoom)
	b.Traceback, b.TracebackCut = bound.HeadTailLines(e.Traceback, tRoom)
	if len(totals) == 2 {
		b.Message, b.MessageCut = recount(b.Message, b.MessageCut, totals[0])
		b.Traceback, b.TracebackCut = recount(b.Traceback, b.TracebackCut, totals[1])
	}
	return b, wholeError(e)
}

// recount makes a cut of a text the runtime had cut already count from
// the whole it came from (total characters): the head kept is the
// whole's head and the tail its tail, so only the count between changes.
func recount(text string, c *bound.Cut, total int) (string, *bound.Cut) {
	if c == nil || total <= c.Total {
		return text, c
	}
	r := []rune(text)
	if c.Head+c.Tail > len(r) {
		return text, c
	}
	return bound.JoinCut(string(r[:c.Head]), string(r[len(r)-c.Tail:]), total)
}

// wholeError is the error as one text for its file: the traceback, which
// names the error itself in most runtimes, else the error's line first.
func wholeError(e *api.CellError) string {
	line := e.Message
	if e.Type != "" {
		line = e.Type + ": " + e.Message
	}
	switch {
	case e.Traceback == "":
		return line + "\n"
	case strings.Contains(e.Traceback, e.Message):
		return e.Traceback
	}
	return line + "\n\n" + e.Traceback
}

// chars counts characters as bound does, in a text that may not be valid
// UTF-8.
func chars(s string) int { return utf8.RuneCountInString(s) }
