package view

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
	"github.com/polyrepl/polyrepl/internal/render"
)

// A page follows one session's record as server-sent events: each
// api.RecordEvent as a message of its own (`data: {…}`), the stream's
// own state as `event: conn` messages, and a comment now and then so
// that a connection nobody writes to is not taken for dead.

const (
	pingEvery  = 15 * time.Second
	awaitEvery = 500 * time.Millisecond // how often a session not yet there is looked for
)

// connEvent is the stream's state: "live" (following the record),
// "waiting" (no such session yet, or no daemon: Error says which; it
// is looked for until it comes), "down" (the daemon cannot be reached:
// Error says why; the stream ends after it).
type connEvent struct {
	State string `json:"state"`
	Error string `json:"error,omitempty"`
}

// sse writes a stream of server-sent events, each flushed as it is
// written.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (s sse) send(event string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if event != "" {
		if _, err := fmt.Fprintf(s.w, "event: %s\n", event); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", b); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s sse) conn(state, why string) error {
	return s.send("conn", connEvent{State: state, Error: why})
}

func (s sse) ping() error {
	if _, err := fmt.Fprint(s.w, ": ping\n\n"); err != nil {
		return err
	}
	return s.rc.Flush()
}

// events answers GET …/events?since=SEQ: session name's record after
// seq SEQ (default 0, all it keeps), then as it grows, until the page
// goes away, the view ends, or the daemon cannot be reached.
func (s *Server) events(w http.ResponseWriter, r *http.Request, name string) {
	since := 0
	if q := r.URL.Query().Get("since"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 0 {
			refuse(w, r, refusal{http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("invalid since %s: give a seq, a number from 0", strconv.Quote(q)), ""})
			return
		}
		since = n
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	out := sse{w: w, rc: http.NewResponseController(w)}
	if err := out.ping(); err != nil {
		return
	}
	ctx := r.Context()
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	if !s.await(ctx, out, ping, name) {
		return
	}
	if out.conn("live", "") != nil {
		return
	}

	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	evs := make(chan api.RecordEvent, 256)
	done := make(chan error, 1)
	go func() {
		// s.c, which may start a daemon: Follow starts one only to take
		// up this session from its holder after its daemon went away.
		done <- s.c.Follow(fctx, name, since, func(ev api.RecordEvent) error {
			select {
			case evs <- ev:
				return nil
			case <-fctx.Done():
				return fctx.Err()
			}
		})
	}()
	cut := newCutter()
	tick := time.NewTicker(cut.every)
	defer tick.Stop()
	write := func(ev api.RecordEvent) error {
		if ev.Entry != nil {
			en := render.WordedEntry(*ev.Entry)
			ev.Entry = &en
		}
		for _, m := range cut.pass(ev, time.Now()) {
			if err := out.send("", m); err != nil {
				return err
			}
		}
		if ev.Event == api.EventReconnected {
			return out.conn("live", "")
		}
		return nil
	}
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case ev := <-evs:
			err = write(ev)
		case <-ping.C:
			err = out.ping()
		case <-tick.C:
			for _, m := range cut.due(time.Now()) {
				if err = out.send("", m); err != nil {
					break
				}
			}
		case ferr := <-done:
			for len(evs) > 0 && err == nil {
				err = write(<-evs)
			}
			if err == nil && ctx.Err() == nil {
				out.conn("down", words(ferr))
			}
			return
		}
		if err != nil {
			return
		}
	}
}

// await waits until session name has a record to follow, saying so on
// out while it waits; false if the stream ended first (the page went
// away, or the daemon answered with something other than "not yet").
func (s *Server) await(ctx context.Context, out sse, ping *time.Ticker, name string) bool {
	told := ""
	for {
		// s.look: a page left open never starts a daemon by itself.
		_, err := s.look.History(ctx, name, 1<<62)
		var why string
		switch {
		case err == nil:
			return true
		case ctx.Err() != nil:
			return false
		case noSession(err):
			why = fmt.Sprintf("no session '%s' yet: it shows here once it is created", name)
		case client.IsNotRunning(err):
			why = "the polyrepl daemon is not running: the session shows here once it runs"
		default:
			out.conn("down", words(err))
			return false
		}
		if why != told {
			if out.conn("waiting", why) != nil {
				return false
			}
			told = why
		}
		select {
		case <-ctx.Done():
			return false
		case <-ping.C:
			if out.ping() != nil {
				return false
			}
		case <-time.After(awaitEvery):
		}
	}
}

// noSession says whether err is the daemon's word that no session (and
// no record) has the name asked for.
func noSession(err error) bool {
	var ae *client.APIError
	return errors.As(err, &ae) && ae.Code == api.CodeNoSession
}

// words says err for a person: the daemon's refusal, or why it could not
// be reached.
func words(err error) string {
	var (
		ae *client.APIError
		ce *client.ConnError
	)
	switch {
	case err == nil:
		return "the daemon ended the stream"
	case errors.As(err, &ae):
		return render.Refusal(ae.ErrorReply)
	case client.IsNotRunning(err):
		return "the polyrepl daemon is not running"
	case errors.As(err, &ce):
		return "cannot reach the polyrepl daemon: " + ce.Err.Error()
	}
	return err.Error()
}
