package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/paths"
)

// History returns the entries of session name's record after seq since.
func (c *Client) History(ctx context.Context, name string, since int) (api.RecordReply, error) {
	return call[api.RecordReply](ctx, c, request{method: http.MethodGet, path: api.PathRecord, session: name, query: "since=" + strconv.Itoa(since)})
}

// Entry returns one entry of session name's record, whole.
func (c *Client) Entry(ctx context.Context, name string, seq int) (api.Entry, error) {
	path := strings.Replace(api.PathRecordEntry, "{seq}", strconv.Itoa(seq), 1)
	return call[api.Entry](ctx, c, request{method: http.MethodGet, path: path, session: name})
}

// Follow calls fn with every event of session name's record after since
// (see api.RecordEvent: each entry, a live one's output as it grows, its
// end), through the session's deaths and new lives, until ctx ends or fn
// returns an error. Heartbeats are not passed on. It does not start a
// daemon to begin with: a record to follow needs one running. When the
// daemon goes away while the session lives on in its holder (the daemon
// was killed, or left its sessions for an upgrade), Follow starts one,
// which takes the session up, tells fn (EventReconnected) and goes on
// from the first entry it had not seen end, which comes again whole;
// otherwise the daemon's end ends it.
func (c *Client) Follow(ctx context.Context, name string, since int, fn func(api.RecordEvent) error) error {
	var (
		gen  string
		last = since
		open = map[int]bool{} // entries seen that may still grow
		idle int              // the last idle entry, which grows until a cell starts
	)
	track := func(ev api.RecordEvent) error {
		if en := ev.Entry; en != nil {
			if en.Generation != "" {
				gen = en.Generation
			}
			last = max(last, en.Seq)
			switch {
			case en.Kind == api.EntryIdle:
				idle = en.Seq
			case en.Kind == api.EntryCell && en.Status == api.StatusRunning:
				open[en.Seq] = true
				idle = 0
			default:
				delete(open, en.Seq)
				if en.Seq > idle {
					idle = 0
				}
			}
		}
		return fn(ev)
	}
	for tries := 0; ; tries++ {
		err := c.followOnce(ctx, name, since, track)
		var ce *ConnError
		if ctx.Err() != nil || !errors.As(err, &ce) || !c.AutoStart || gen == "" || tries >= 3 || !c.heldElsewhere(gen) {
			return err
		}
		since = last
		for seq := range open {
			since = min(since, seq-1)
		}
		if idle > 0 {
			since = min(since, idle-1)
		}
		open, idle = map[int]bool{}, 0
		if err := c.startAgain(ctx); err != nil {
			return err
		}
		if err := fn(api.RecordEvent{Event: api.EventReconnected}); err != nil {
			return err
		}
	}
}

// startAgain starts a daemon after the last went away: while that one is
// still closing its socket, a connection may be taken and then reset, so
// it tries again for a while.
func (c *Client) startAgain(ctx context.Context) error {
	var err error
	for deadline := time.Now().Add(startWait); time.Now().Before(deadline); {
		c.closeIdle()
		if _, _, err = c.Start(ctx); err == nil || ctx.Err() != nil {
			return err
		}
		var ce *ConnError
		if !errors.As(err, &ce) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return err
}

// heldElsewhere reports whether the session of generation gen lives on
// in its holder: its socket is there.
func (c *Client) heldElsewhere(gen string) bool {
	_, err := os.Stat(filepath.Join(paths.HoldersDir(filepath.Dir(c.Reached())), gen+".sock"))
	return err == nil
}

func (c *Client) followOnce(ctx context.Context, name string, since int, fn func(api.RecordEvent) error) error {
	path, err := request{path: api.PathRecord, session: name, query: "follow=1&since=" + strconv.Itoa(since)}.target()
	if err != nil {
		return err
	}
	cn, _, err := c.getConn(ctx)
	if err != nil {
		return &ConnError{err}
	}
	defer cn.Close() // a followed reply never ends: the conn is not reused
	resp, _, err := c.send(ctx, cn, http.MethodGet, path, nil)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &ConnError{err}
	}
	defer resp.Body.Close()
	stop := context.AfterFunc(ctx, func() { cn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if resp.StatusCode/100 != 2 || resp.Header.Get("Content-Type") != api.StreamType {
		return c.readReply(resp, nil, nil)
	}
	var fnErr error
	err = readEvents(json.NewDecoder(resp.Body), "record", func(ev *api.RecordEvent) (bool, error) {
		if ev.Event != "" {
			fnErr = fn(*ev)
		}
		return false, fnErr
	})
	if fnErr == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Raw attaches to the terminal of session name's runtime: what is written
// to the returned connection is typed there, and what the runtime prints
// is read from it, until it is closed or the runtime ends.
func (c *Client) Raw(ctx context.Context, name string, who api.Client) (io.ReadWriteCloser, error) {
	q := url.Values{"who": {who.Who}, "conn": {who.Conn}}
	path, err := request{path: api.PathRaw, session: name, query: q.Encode()}.target()
	if err != nil {
		return nil, err
	}
	cn, _, err := c.getConn(ctx)
	if err != nil {
		return nil, &ConnError{err}
	}
	req, err := newRequest(ctx, http.MethodGet, path, nil, c.ceilingHeader())
	if err != nil {
		cn.Close()
		return nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", api.RawProtocol)
	if err := req.Write(cn); err != nil {
		cn.Close()
		return nil, &ConnError{err}
	}
	resp, err := http.ReadResponse(cn.br, req)
	if err != nil {
		cn.Close()
		return nil, &ConnError{err}
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer cn.Close()
		return nil, c.readReply(resp, nil, nil)
	}
	return rawConn{cn}, nil
}

// rawConn reads through the connection's buffer, which may already hold
// the runtime's first output.
type rawConn struct{ cn *conn }

func (r rawConn) Read(p []byte) (int, error)  { return r.cn.br.Read(p) }
func (r rawConn) Write(p []byte) (int, error) { return r.cn.Conn.Write(p) }
func (r rawConn) Close() error                { return r.cn.Close() }
