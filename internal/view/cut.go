package view

import (
	"bytes"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
)

// A cell that prints 10 MB sends a follower all of it, in chunks, as it
// prints (the record holds back only what a follower fell behind on).
// A page has no use for that much, and would stop answering under it: of
// each entry's output a page gets the first cutHead bytes whole, then a
// cut event, then at most every cutEvery the latest cutWindow bytes of
// what came since, the characters between them counted as the chunk's
// Skipped. The whole is a click away (GET …/entries/{seq}/output).
const (
	cutHead   = 64 << 10
	cutWindow = 64 << 10
	cutEvery  = 500 * time.Millisecond
)

// cutEvent tells the page that entry Seq's output is cut from character
// Offset on: what follows comes as the latest part of it now and then,
// each chunk's Skipped counting what was left out before it.
type cutEvent struct {
	Event  string `json:"event"` // "cut"
	ID     string `json:"id"`
	Seq    int    `json:"seq"`
	Offset int    `json:"offset"`
}

// cutter bounds what of each entry's output a page is sent.
type cutter struct {
	head, window int
	every        time.Duration
	entries      map[int]*cutState
}

// cutState is one entry's output as sent to the page.
type cutState struct {
	id     string
	seq    int
	passed int  // bytes of text sent whole
	next   int  // the character after the last one sent
	cut    bool // past the head: held back, let out every so often
	// held is the latest text not yet sent, at most window bytes, from
	// character heldAt; pending the unfinished line as it stands.
	held    []byte
	heldAt  int
	pending string
	dirty   bool // held or pending is news to the page
	file    string
	last    time.Time // when held text was last let out
}

func newCutter() *cutter {
	return &cutter{head: cutHead, window: cutWindow, every: cutEvery, entries: map[int]*cutState{}}
}

// pass returns what the page is sent for ev, at now: ev itself, or what
// the cut leaves of it (a chunk, a cut event, nothing yet).
func (c *cutter) pass(ev api.RecordEvent, now time.Time) []any {
	switch {
	case ev.Event == api.EventReconnected:
		// Entries come again from their start.
		c.entries = map[int]*cutState{}
	case ev.Output != nil:
		return c.output(*ev.Output, ev, now)
	case ev.Entry != nil && ev.Event == api.EventEntry:
		delete(c.entries, ev.Entry.Seq)
	case ev.Entry != nil && ev.Event == api.EventEnd:
		st := c.entries[ev.Entry.Seq]
		delete(c.entries, ev.Entry.Seq)
		if st != nil && st.dirty {
			return []any{st.flush(now), ev}
		}
	}
	return []any{ev}
}

func (c *cutter) output(ch api.OutputChunk, ev api.RecordEvent, now time.Time) []any {
	st := c.entries[ch.Seq]
	if st == nil {
		st = &cutState{id: ch.ID, seq: ch.Seq, next: ch.Offset - ch.Skipped}
		c.entries[ch.Seq] = st
	}
	if ch.File != "" {
		st.file = ch.File
	}
	if !st.cut {
		room := c.head - st.passed
		if len(ch.Text) <= room {
			st.passed += len(ch.Text)
			st.next = ch.Offset + utf8.RuneCountInString(ch.Text)
			return []any{ev}
		}
		k := cutPoint(ch.Text, room)
		first := api.OutputChunk{ID: ch.ID, Seq: ch.Seq, Offset: ch.Offset, Text: ch.Text[:k], Skipped: ch.Skipped, File: ch.File}
		st.cut, st.passed = true, c.head
		st.next = ch.Offset + utf8.RuneCountInString(first.Text)
		st.heldAt, st.last = st.next, now
		st.hold(ch.Text[k:], st.next, ch.Pending, c.window)
		return []any{api.RecordEvent{Event: api.EventOutput, Output: &first}, cutEvent{Event: "cut", ID: ch.ID, Seq: ch.Seq, Offset: st.next}}
	}
	st.hold(ch.Text, ch.Offset, ch.Pending, c.window)
	if now.Sub(st.last) >= c.every {
		return []any{st.flush(now)}
	}
	return nil
}

// due returns the held output whose time has come, at now.
func (c *cutter) due(now time.Time) []any {
	var out []any
	for _, st := range c.entries {
		if st.dirty && now.Sub(st.last) >= c.every {
			out = append(out, st.flush(now))
		}
	}
	return out
}

// hold keeps text, which starts at character at, as the latest output
// not yet sent, with at most window bytes of it; pending replaces the
// unfinished line.
func (st *cutState) hold(text string, at int, pending string, window int) {
	if text != "" {
		if len(st.held) > 0 && at != st.heldAt+utf8.RuneCount(st.held) {
			st.held = st.held[:0] // a gap the record left: counted as skipped
		}
		if len(st.held) == 0 {
			st.heldAt = at
		}
		st.held = append(st.held, text...)
		if over := len(st.held) - window; over > 0 {
			k := over
			if i := bytes.IndexByte(st.held[k:], '\n'); i >= 0 && k+i+1 < len(st.held) {
				k += i + 1
			}
			for k < len(st.held) && !utf8.RuneStart(st.held[k]) {
				k++
			}
			st.heldAt += utf8.RuneCount(st.held[:k])
			st.held = append([]byte(nil), st.held[k:]...)
		}
	}
	st.pending = pending
	st.dirty = true
}

// flush lets out the held output as one chunk.
func (st *cutState) flush(now time.Time) api.RecordEvent {
	ch := api.OutputChunk{ID: st.id, Seq: st.seq, Offset: st.next, File: st.file, Pending: st.pending}
	if len(st.held) > 0 {
		ch.Offset, ch.Text, ch.Skipped = st.heldAt, string(st.held), st.heldAt-st.next
		st.next = st.heldAt + utf8.RuneCount(st.held)
		st.held, st.heldAt = st.held[:0], st.next
	}
	st.dirty, st.last = false, now
	return api.RecordEvent{Event: api.EventOutput, Output: &ch}
}

// cutPoint is where to cut text to at most n bytes: after its last
// newline within them, else at a character's start.
func cutPoint(text string, n int) int {
	n = max(min(n, len(text)), 0)
	if i := strings.LastIndexByte(text[:n], '\n'); i >= 0 {
		return i + 1
	}
	for n > 0 && n < len(text) && !utf8.RuneStart(text[n]) {
		n--
	}
	return n
}
