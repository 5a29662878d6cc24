package client

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
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
// end), through the session's deaths and new lives, until ctx ends, fn
// returns an error, or the daemon goes away. Heartbeats are not passed
// on. It does not start a daemon: a record to follow needs one running.
func (c *Client) Follow(ctx context.Context, name string, since int, fn func(api.RecordEvent) error) error {
	path, err := request{path: api.PathRecord, session: name, query: "follow=1&since=" + strconv.Itoa(since)}.target()
	if err != nil {
		return err
	}
	cn, _, err := c.getConn(ctx)
	if err != nil {
		return &ConnError{err}
	}
	defer cn.Close() // a followed reply never ends: the conn is not reused
	resp, err := send(ctx, cn, http.MethodGet, path, nil)
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
	req, err := newRequest(ctx, http.MethodGet, path, nil)
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
