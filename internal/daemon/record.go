package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/session"
)

// followBeat is how often a follower gets a heartbeat line while nothing
// happens, so a dead connection is noticed and clients know it is alive.
const followBeat = 15 * time.Second

// history answers GET /v1/sessions/{name}/record?since=SEQ[&follow=1].
// Followed, the reply is NDJSON: every entry after since as it is added
// and again each time it changes, until the client goes away.
func (d *Daemon) history(w http.ResponseWriter, r *http.Request) {
	since := 0
	if s := r.URL.Query().Get("since"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			fail(w, &session.Error{Code: api.CodeBadRequest, Msg: fmt.Sprintf("invalid position %q", s), Hint: "give a record seq, 0 for the start", Field: api.FieldSince})
			return
		}
		since = n
	}
	rec, err := d.sessions.Record(r.PathValue("name"), api.Client{})
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
	enc := json.NewEncoder(w)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	sent := map[int]int{} // seq → rev sent
	beat := time.NewTicker(followBeat)
	defer beat.Stop()
	for {
		changed := rec.Changed()
		entries, _, _ := rec.Since(since)
		for _, e := range entries {
			if sent[e.Seq] == e.Rev {
				continue
			}
			sent[e.Seq] = e.Rev
			if enc.Encode(api.RecordEvent{Entry: &e}) != nil {
				return
			}
		}
		flush()
		select {
		case <-changed:
		case <-beat.C:
			if enc.Encode(api.RecordEvent{}) != nil {
				return
			}
			flush()
		case <-r.Context().Done():
			return
		}
	}
}

// entry answers GET /v1/sessions/{name}/record/{seq}: one entry, whole.
func (d *Daemon) entry(w http.ResponseWriter, r *http.Request) {
	rec, err := d.sessions.Record(r.PathValue("name"), api.Client{})
	if err != nil {
		fail(w, err)
		return
	}
	seq, err := strconv.Atoi(r.PathValue("seq"))
	if err != nil {
		fail(w, &session.Error{Code: api.CodeBadRequest, Msg: fmt.Sprintf("invalid entry %q", r.PathValue("seq")), Hint: "name an entry by its seq (12) or id (NAME#12)"})
		return
	}
	e, ok := rec.Get(seq)
	if !ok {
		_, dropped, next := rec.Since(next0)
		msg := fmt.Sprintf("session %q has no entry %d: its record holds entries %d to %d", r.PathValue("name"), seq, dropped+1, next-1)
		if seq <= dropped {
			msg = fmt.Sprintf("entry %d of session %q was dropped: the record keeps its last %d entries (%d to %d)", seq, r.PathValue("name"), api.RecordKeep, dropped+1, next-1)
		}
		fail(w, &session.Error{Code: api.CodeNoEntry, Msg: msg, Next: []api.Action{{Do: api.DoHistory, Session: r.PathValue("name")}}})
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
		fail(w, &session.Error{Code: api.CodeBadRequest, Msg: "a raw attach must ask to upgrade to " + api.RawProtocol, Hint: "use `polyrepl attach --raw`"})
		return
	}
	q := r.URL.Query()
	who := api.Client{Who: q.Get("who"), How: "attach", Conn: q.Get("conn")}
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
