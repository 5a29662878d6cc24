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
func boundError(e *api.CellError, limit int) (*api.CellError, string) {
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
	return b, wholeError(e)
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
