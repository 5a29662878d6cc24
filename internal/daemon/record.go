package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/record"
)

// followBeat is how often a follower gets a heartbeat line while nothing
// happens, so a dead connection is noticed and clients know it is alive.
const followBeat = 15 * time.Second

// history answers GET /v1/sessions/{name}/record?since=SEQ[&follow=1].
// Followed, the reply is NDJSON (api.RecordEvent): every entry after
// since as it is added, a live one's output as it grows (only what is
// new), and its end, until the client goes away. It follows the name
// through the session's deaths and new lives.
func (d *Daemon) history(w http.ResponseWriter, r *http.Request) {
	since := 0
	if s := r.URL.Query().Get("since"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			refuse(w, api.ErrorReply{Code: api.CodeBadRequest, Error: fmt.Sprintf("invalid position %q", s), Hint: "give a record seq, 0 for the start", Field: api.FieldSince})
			return
		}
		since = n
	}
	rec, err := d.sessions.Record(r.PathValue("name"), asker(r))
	if err != nil {
		fail(w, err)
		return
	}
	if r.URL.Query().Get("follow") == "" {
		entries, dropped, next := rec.Since(since)
		if entries == nil {
			entries = []api.Entry{}
		}
		reply(w, api.RecordReply{Session: r.PathValue("name"), Entries: entries, Dropped: dropped, Next: next, Since: since})
		return
	}
	w.Header().Set("Content-Type", api.StreamType)
	w.WriteHeader(http.StatusOK)
	f := &follower{enc: json.NewEncoder(w), sent: map[int]*followed{}, since: since}
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	beat := time.NewTicker(followBeat)
	defer beat.Stop()
	var sent time.Time
	for {
		if rec.Closed() {
			// The session died and its record was let go; the next life
			// writes to the name's record afresh, read from disk.
			if rec, err = d.sessions.Record(r.PathValue("name"), asker(r)); err != nil {
				return
			}
		}
		changed := rec.Changed()
		if !f.send(rec) {
			return
		}
		flush()
		sent = time.Now()
		select {
		case <-changed:
			// A running cell changes at every print. A change after a
			// quiet spell goes out at once (a person watching sees a
			// line as it is printed); changes coming faster gather, so
			// that a flood costs one event per followGather.
			if wait := followGather - time.Since(sent); wait > 0 {
				time.Sleep(wait)
			}
		case <-beat.C:
			if f.enc.Encode(api.RecordEvent{}) != nil {
				return
			}
			flush()
		case <-r.Context().Done():
			return
		}
	}
}

// followGather is how long a follower lets changes gather before it
// sends them, counted from what it sent last.
const followGather = 20 * time.Millisecond

// follower is one client following a record: what it was sent of each
// entry, so that it gets only what is new.
type follower struct {
	enc   *json.Encoder
	sent  map[int]*followed
	since int // entries up to this seq are sent and will not change
}

type followed struct {
	rev     int
	stream  bool   // its output goes out as output events
	offset  int    // characters of output sent
	pending string // the unfinished line last sent
	ended   bool
}

// send sends what changed in rec since the last call; false if the
// follower went away.
func (f *follower) send(rec *record.Record) bool {
	entries, _, _ := rec.Since(f.since)
	low, settled := f.since, true
	for i, e := range entries {
		if settled && !live(entries, i) {
			low = e.Seq
		} else {
			settled = false
		}
		st := f.sent[e.Seq]
		if st != nil && st.rev == e.Rev {
			continue
		}
		if st == nil {
			st = &followed{}
			f.sent[e.Seq] = st
			if _, _, ok := rec.Stream(e.Seq, 0); ok && live(entries, i) {
				st.stream = true
				head := e
				head.Output, head.OutputCut = "", nil
				if !f.event(api.RecordEvent{Event: api.EventEntry, Entry: &head}) {
					return false
				}
			} else {
				st.rev = e.Rev
				if !f.event(api.RecordEvent{Event: api.EventEntry, Entry: &e}) {
					return false
				}
				continue
			}
		}
		st.rev = e.Rev
		if !st.stream {
			if !f.event(api.RecordEvent{Event: api.EventUpdate, Entry: &e}) {
				return false
			}
			continue
		}
		lost := false
		for {
			c, _, ok := rec.Stream(e.Seq, st.offset)
			if !ok {
				lost = true
				break
			}
			if c.Text == "" && c.Skipped == 0 && c.Pending == st.pending {
				break
			}
			st.offset = c.Offset + utf8.RuneCountInString(c.Text)
			st.pending = c.Pending
			if !f.event(api.RecordEvent{Event: api.EventOutput, Output: &c}) {
				return false
			}
			if c.Text == "" {
				break
			}
		}
		if e.Kind == api.EntryCell && e.Status != api.StatusRunning && !st.ended {
			st.ended = true
			end := e
			if !lost {
				end.Output = "" // the output events carried it
			}
			if !f.event(api.RecordEvent{Event: api.EventEnd, Entry: &end}) {
				return false
			}
		}
	}
	for seq := range f.sent {
		if seq <= low {
			delete(f.sent, seq)
		}
	}
	f.since = low
	return true
}

func (f *follower) event(ev api.RecordEvent) bool { return f.enc.Encode(ev) == nil }

// live says whether entries[i] may still change: a running cell, or
// output while idle that no later cell has ended.
func live(entries []api.Entry, i int) bool {
	switch e := entries[i]; e.Kind {
	case api.EntryCell:
		return e.Status == api.StatusRunning
	case api.EntryIdle:
		for _, l := range entries[i+1:] {
			if l.Kind == api.EntryCell {
				return false
			}
		}
		return true
	}
	return false
}

// entry answers GET /v1/sessions/{name}/record/{seq}: one entry, whole.
func (d *Daemon) entry(w http.ResponseWriter, r *http.Request) {
	rec, err := d.sessions.Record(r.PathValue("name"), asker(r))
	if err != nil {
		fail(w, err)
		return
	}
	seq, err := strconv.Atoi(r.PathValue("seq"))
	if err != nil {
		refuse(w, api.ErrorReply{Code: api.CodeBadRequest, Error: fmt.Sprintf("invalid entry %q", r.PathValue("seq")), Hint: "name an entry by its seq (12) or id (NAME#12)"})
		return
	}
	e, ok := rec.Get(seq)
	if !ok {
		_, dropped, next := rec.Since(next0)
		msg := fmt.Sprintf("session %q has no entry %d: its record holds entries %d to %d", r.PathValue("name"), seq, dropped+1, next-1)
		if seq <= dropped {
			msg = fmt.Sprintf("entry %d of session %q was dropped: the record keeps its last %d entries (%d to %d)", seq, r.PathValue("name"), api.RecordKeep, dropped+1, next-1)
		}
		refuse(w, api.ErrorReply{Code: api.CodeNoEntry, Error: msg, Next: []api.Action{{Do: api.DoHistory, Session: r.PathValue("name")}}})
		return
	}
	reply(w, e)
}

// next0 asks Since for no entries, only the bounds.
const next0 = 1 << 62

// raw answers GET /v1/sessions/{name}/raw with Upgrade: polyrepl-raw: the
// connection then carries a person's typing to the runtime's terminal and
// what the runtime prints back, until either side hangs up.
func (d *Daemon) raw(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") != api.RawProtocol {
		refuse(w, api.ErrorReply{Code: api.CodeBadRequest, Error: "a raw attach must ask to upgrade to " + api.RawProtocol, Hint: "ask for the upgrade, as polyrepl's own client does"})
		return
	}
	q := r.URL.Query()
	who := api.Client{Who: q.Get("who"), How: "attach", Conn: q.Get("conn")}.Bounded()
	who.Reach = reachOf(r)
	in, out, detach, err := d.sessions.Raw(r.PathValue("name"), who)
	if err != nil {
		fail(w, err)
		return
	}
	defer detach()
	hj, ok := w.(http.Hijacker)
	if !ok {
		fail(w, fmt.Errorf("this connection cannot be upgraded"))
		return
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: " + api.RawProtocol + "\r\nConnection: Upgrade\r\n\r\n")
	if brw.Flush() != nil {
		return
	}
	go func() {
		io.Copy(in, brw) // the person's typing, until they hang up
		detach()
	}()
	for b := range out {
		if _, err := conn.Write(b); err != nil {
			return
		}
	}
}
