package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
)

// The app follows a session through view_events, a long poll: an MCP
// App reaches its server only by tool calls through the host, so the
// record's stream (client.Follow) is read here, by one follower per
// app and session, into a bounded queue the app's calls take from.
// Each call names how many of the follower's events the app has
// (next), so a reply the host lost is sent again; the follower is let
// go when the app stops asking.

// Bounds of the app's follow.
const (
	followWaitMax   = 25.0             // seconds a call waits for a first event, at most
	followIdle      = 60 * time.Second // a follower nobody asked for this long is let go
	followPerConn   = 4                // followers one connection keeps; the oldest goes
	followQueue     = 1 << 20          // characters of output queued, past which it is skipped (and said)
	followReplySize = 256 << 10        // bytes of events one reply carries; the rest come next
	followEvents    = 5000             // events queued, past which the follow ends (the app fell behind)
)

type viewEventsIn struct {
	Session string   `json:"session" jsonschema:"session name"`
	Since   int      `json:"since,omitempty" jsonschema:"a new follow: the events after this seq"`
	Follow  string   `json:"follow,omitempty" jsonschema:"the follow a previous reply named; none for a new one"`
	Next    int      `json:"next,omitempty" jsonschema:"how many of the follow's events the app has"`
	Wait    *float64 `json:"wait,omitempty" jsonschema:"seconds to wait for a first new event (default and at most 25)"`
}

// viewEvents is view_events' reply: data for the app.
type viewEvents struct {
	Session string            `json:"session"`
	Follow  string            `json:"follow,omitempty"` // name it in the next call
	Next    int               `json:"next"`             // and this, the events had so far
	Events  []api.RecordEvent `json:"events"`
	More    bool              `json:"more,omitempty"` // more are queued: ask again now
	// Ended says why the follow ended (the session is gone, the daemon
	// stopped), once its events are all given; a new follow from the
	// last seq the app has whole goes on.
	Ended string `json:"ended,omitempty"`
	// Lost says the follow named is not kept (let go when nobody asked,
	// or this server is a new one): follow again from the last seq the
	// app has whole.
	Lost string `json:"lost,omitempty"`
}

// follower is one app's follow of one session.
type follower struct {
	id, session string
	cancel      context.CancelFunc

	mu     sync.Mutex
	events []api.RecordEvent // from event number base on
	sizes  []int             // each one's size in the reply, in bytes
	base   int
	queued int                  // characters of output text in events
	skip   map[int]*skipped     // output dropped from the queue, by seq
	ended  string               // why the follow ended, once it has
	wake   chan struct{}        // closed when events come or the follow ends
	asked  time.Time            // the last call
	conn   *mcp.ServerSession   // whose follower it is
	all    map[string]*follower // the server's, to leave when let go
}

// skipped is output a follower dropped for one entry while its queue
// was full: given as the next chunk's Skipped, as the record says what
// a slow follower missed.
type skipped struct {
	chars int    // characters dropped since the last chunk queued
	at    int    // the offset after the last one dropped
	id    string // the entry's id
	file  string // where its whole output is, if the record said
}

// add queues one event of the record, bounding what it queues.
func (f *follower) add(ev api.RecordEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended != "" {
		return
	}
	if len(f.events) >= followEvents {
		// Entries cannot be skipped as output is: the app, far behind,
		// begins again from what it has whole.
		f.ended = fmt.Sprintf("the app fell %d events behind the record; follow again", followEvents)
		f.cancel()
		f.signal()
		return
	}
	if o := ev.Output; o != nil {
		c := *o
		n := utf8.RuneCountInString(c.Text)
		if sk := f.skip[c.Seq]; sk != nil {
			c.Skipped += sk.chars
			if c.File == "" {
				c.File = sk.file
			}
		}
		if f.queued+len(c.Text) > followQueue && n > 0 {
			sk := f.skip[c.Seq]
			if sk == nil {
				sk = &skipped{id: c.ID}
				f.skip[c.Seq] = sk
			}
			sk.chars, sk.at = c.Skipped+n, c.Offset+n
			if c.File != "" {
				sk.file = c.File
			}
			if c.Pending == "" {
				return
			}
			// The line being redrawn still shows.
			c.Text, c.Offset, c.Skipped = "", sk.at, 0
		} else {
			delete(f.skip, c.Seq)
		}
		f.queued += len(c.Text)
		ev.Output = &c
	}
	if en := ev.Entry; en != nil && ev.Event == api.EventEnd {
		if sk := f.skip[en.Seq]; sk != nil {
			// What was dropped last is said before the end.
			f.push(api.RecordEvent{Event: api.EventOutput, Output: &api.OutputChunk{ID: sk.id, Seq: en.Seq, Offset: sk.at, Skipped: sk.chars, File: sk.file}})
			delete(f.skip, en.Seq)
		}
	}
	f.push(ev)
}

// push appends ev and wakes a waiting call; f.mu is held.
func (f *follower) push(ev api.RecordEvent) {
	b, _ := json.Marshal(ev)
	f.events = append(f.events, ev)
	f.sizes = append(f.sizes, len(b))
	f.signal()
}

func (f *follower) signal() {
	close(f.wake)
	f.wake = make(chan struct{})
}

// end records why the follow ended.
func (f *follower) end(why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended == "" {
		f.ended = why
	}
	f.signal()
}

// idle says whether nobody asked for the follower's events for a while.
func (f *follower) idle() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return time.Since(f.asked) > followIdle
}

func (f *follower) lastAsked() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked
}

// take forgets the events before number next (the app has them) and
// returns those after, from number start, at most followReplySize bytes
// of them (at least one), and whether more are queued; with none queued
// and the follow going on, it returns a channel closed when there are.
func (f *follower) take(next int) (start int, evs []api.RecordEvent, more bool, ended string, wake chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = time.Now()
	if drop := min(max(next-f.base, 0), len(f.events)); drop > 0 {
		for _, ev := range f.events[:drop] {
			if ev.Output != nil {
				f.queued -= len(ev.Output.Text)
			}
		}
		f.events = append([]api.RecordEvent(nil), f.events[drop:]...)
		f.sizes = append([]int(nil), f.sizes[drop:]...)
		f.base += drop
	}
	size := 0
	for i, ev := range f.events {
		if i > 0 && size+f.sizes[i] > followReplySize {
			return f.base, evs, true, "", nil
		}
		size += f.sizes[i]
		evs = append(evs, ev)
	}
	if len(evs) == 0 && f.ended == "" {
		return f.base, nil, false, "", f.wake
	}
	return f.base, evs, false, f.ended, nil
}

func (s *Server) viewEvents(ctx context.Context, req *mcp.CallToolRequest, in viewEventsIn) (viewEvents, string, error) {
	if in.Since < 0 || in.Next < 0 {
		return viewEvents{}, "", fmt.Errorf("since and next must be 0 or more")
	}
	wait := followWaitMax
	if in.Wait != nil {
		wait = min(max(*in.Wait, 0), followWaitMax)
	}
	reply := viewEvents{Session: in.Session, Events: []api.RecordEvent{}}
	f := s.follower(req.Session, in.Session, in.Follow, in.Since)
	if f == nil {
		reply.Lost = "this follow is not kept (nobody asked for a while, or the server is a new one)"
		return reply, "The follow is gone: follow again.", nil
	}
	reply.Follow = f.id
	timer := time.NewTimer(time.Duration(wait * float64(time.Second)))
	defer timer.Stop()
	for {
		start, evs, more, ended, wake := f.take(in.Next)
		if wake == nil || wait == 0 {
			reply.Events = append(reply.Events, evs...)
			reply.Next, reply.More, reply.Ended = start+len(evs), more, ended
			return reply, fmt.Sprintf("%d events of session %s's record, for the view.", len(evs), in.Session), nil
		}
		select {
		case <-wake:
		case <-timer.C:
			wait = 0
		case <-ctx.Done():
			return reply, "", ctx.Err()
		}
	}
}

// follower returns the connection's follower named id, or, with no id, a
// new one of session from since; nil when id names none kept. It lets
// go of the connection's followers nobody asked for a while, and of its
// oldest past followPerConn.
func (s *Server) follower(conn *mcp.ServerSession, session, id string, since int) *follower {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.follows == nil {
		s.follows = map[string]*follower{}
	}
	var mine []*follower
	for _, f := range s.follows {
		if f.conn != conn {
			continue
		}
		if f.id != id && f.idle() {
			f.leave()
			continue
		}
		mine = append(mine, f)
	}
	if id != "" {
		if f := s.follows[id]; f != nil && f.conn == conn && f.session == session {
			return f
		}
		return nil
	}
	for len(mine) >= followPerConn {
		oldest := mine[0]
		for _, f := range mine {
			if f.lastAsked().Before(oldest.lastAsked()) {
				oldest = f
			}
		}
		oldest.leave()
		mine = slices.DeleteFunc(mine, func(f *follower) bool { return f == oldest })
	}
	var b [6]byte
	rand.Read(b[:])
	ctx, cancel := context.WithCancel(context.Background())
	f := &follower{id: "f-" + hex.EncodeToString(b[:]), session: session, cancel: cancel, skip: map[int]*skipped{},
		wake: make(chan struct{}), asked: time.Now(), conn: conn, all: s.follows}
	s.follows[f.id] = f
	go func() {
		err := s.client.Follow(ctx, session, since, func(ev api.RecordEvent) error {
			f.add(ev)
			return nil
		})
		why := "the record's stream ended"
		if err != nil {
			why = s.errorText(err)
		}
		f.end(why)
	}()
	go func() {
		// A follower nobody asks for is let go, even while its
		// connection lives on (the app's frame was closed).
		tick := time.NewTicker(followIdle / 4)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if f.idle() {
					s.mu.Lock()
					f.leave()
					s.mu.Unlock()
					return
				}
			}
		}
	}()
	if conn != nil && len(mine) == 0 {
		// The connection's followers go with it.
		go func() {
			conn.Wait()
			s.mu.Lock()
			defer s.mu.Unlock()
			for _, f := range s.follows {
				if f.conn == conn {
					f.leave()
				}
			}
		}()
	}
	return f
}

// leave stops the follow and forgets it; s.mu is held.
func (f *follower) leave() {
	f.cancel()
	delete(f.all, f.id)
}
