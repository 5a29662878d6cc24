package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
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
