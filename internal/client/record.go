package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/version"
)

// History returns the entries of session name's record after seq since.
func (c *Client) History(ctx context.Context, name string, since int) (api.RecordReply, error) {
	var r api.RecordReply
	if err := checkName(name); err != nil {
		return r, err
	}
	err := c.do(ctx, http.MethodGet, sessionPath(api.PathRecord, name)+"?since="+strconv.Itoa(since), nil, &r)
	return r, err
}

// Entry returns one entry of session name's record, whole.
func (c *Client) Entry(ctx context.Context, name string, seq int) (api.Entry, error) {
	var e api.Entry
	if err := checkName(name); err != nil {
		return e, err
	}
	path := strings.Replace(sessionPath(api.PathRecordEntry, name), "{seq}", strconv.Itoa(seq), 1)
	err := c.do(ctx, http.MethodGet, path, nil, &e)
	return e, err
}

// Follow calls fn with every entry of session name's record after since,
// and again with each entry every time it changes, until ctx ends, fn
// returns an error, or the daemon goes away. It does not start a daemon:
// a record to follow needs one running.
func (c *Client) Follow(ctx context.Context, name string, since int, fn func(api.Entry) error) error {
	if err := checkName(name); err != nil {
		return err
	}
	cn, _, err := c.getConn(ctx)
	if err != nil {
		return &ConnError{err}
	}
	defer cn.Close() // a followed reply never ends: the conn is not reused
	resp, err := send(ctx, cn, http.MethodGet, sessionPath(api.PathRecord, name)+"?follow=1&since="+strconv.Itoa(since), nil)
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
	dec := json.NewDecoder(resp.Body)
	for {
		var ev api.RecordEvent
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &ConnError{fmt.Errorf("the daemon's record stream broke off: %w", err)}
		}
		if ev.Entry != nil {
			if err := fn(*ev.Entry); err != nil {
				return err
			}
		}
	}
}

// Raw attaches to the terminal of session name's runtime: what is written
// to the returned connection is typed there, and what the runtime prints
// is read from it, until it is closed or the runtime ends.
func (c *Client) Raw(ctx context.Context, name string, who api.Client) (io.ReadWriteCloser, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	cn, _, err := c.getConn(ctx)
	if err != nil {
		return nil, &ConnError{err}
	}
	q := url.Values{"who": {who.Who}, "conn": {who.Conn}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://polyrepl"+sessionPath(api.PathRaw, name)+"?"+q.Encode(), nil)
	if err != nil {
		cn.Close()
		return nil, err
	}
	req.Header.Set(api.VersionHeader, version.Version)
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
