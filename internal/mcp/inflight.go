package mcp

import (
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
)

// A client may call exec on five sessions at once (Promise.all). The
// daemon's note about other sessions lists each one running; but a
// session this connection has a call waiting on is no news to it, and
// telling it to collect that cell with wait would have it wait on itself
// (issue 35 item 10). The server knows its connections' calls in
// flight, and leaves those sessions out of the replies to the same
// connection; the call in flight brings their results. A call that ended
// while this one waited brought its result too, though the daemon may
// have counted it uncollected a moment before: it is left out as well.

// calls is one connection's calls waiting on each session, and when its
// last call on each ended.
type calls struct {
	waiting map[string]int
	ended   map[string]time.Time
}

// enter marks a call of this connection waiting on session; the func it
// returns marks it ended.
func (s *Server) enter(req *mcp.CallToolRequest, session string) func() {
	if req.Session == nil {
		return func() {}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight == nil {
		s.inflight = map[*mcp.ServerSession]*calls{}
	}
	c := s.inflight[req.Session]
	if c == nil {
		c = &calls{waiting: map[string]int{}, ended: map[string]time.Time{}}
		s.inflight[req.Session] = c
	}
	c.waiting[session]++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		now := time.Now()
		if c.waiting[session]--; c.waiting[session] <= 0 {
			delete(c.waiting, session)
		}
		c.ended[session] = now
		for name, at := range c.ended {
			if now.Sub(at) > forgetEnded {
				delete(c.ended, name)
			}
		}
		if len(c.waiting) == 0 && len(c.ended) == 0 {
			delete(s.inflight, req.Session)
		}
	}
}

// forgetEnded is how long a connection's ended call is remembered: longer
// than any call that began before it can still be waiting.
const forgetEnded = 2 * api.MaxTimeout

// withoutOwnCalls drops from notes about other sessions those this
// connection has a call waiting on, or had one end on since start (when
// this call began); a note left naming none goes.
func (s *Server) withoutOwnCalls(req *mcp.CallToolRequest, start time.Time, notes []api.Note) []api.Note {
	if req.Session == nil {
		return notes
	}
	waiting := map[string]bool{}
	s.mu.Lock()
	if c := s.inflight[req.Session]; c != nil {
		for name := range c.waiting {
			waiting[name] = true
		}
		for name, at := range c.ended {
			if !at.Before(start) {
				waiting[name] = true
			}
		}
	}
	s.mu.Unlock()
	if len(waiting) == 0 {
		return notes
	}
	out := notes[:0:0]
	for _, n := range notes {
		if n.Kind != api.NoteOthers {
			out = append(out, n)
			continue
		}
		var others []api.Other
		var next []api.Action
		for _, o := range n.Others {
			if !waiting[o.Session] {
				others = append(others, o)
			}
		}
		for _, a := range n.Next {
			if !waiting[a.Session] {
				next = append(next, a)
			}
		}
		if len(others) == 0 { // the rest, if any, later replies tell
			continue
		}
		n.Others, n.Next = others, next
		out = append(out, n)
	}
	return out
}
