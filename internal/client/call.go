package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/version"
)

// request is one call to the daemon, as every method of Client describes
// it to call.
type request struct {
	method string
	// path is one of api's Path patterns; a {name} in it is filled with
	// session, which is checked first.
	path    string
	session string
	query   string // appended after "?" when set
	body    any    // sent as JSON when not nil
	// prog receives the progress events of a streamed reply.
	prog func(api.Progress)
	// noStart leaves a daemon that is not running alone (status, stop).
	noStart bool
}

// call is the one request path: it sends r, starting the daemon first if
// none answers, and decodes the reply as T — a refusal as an *APIError, a
// daemon out of reach as a *ConnError, a stream's progress to r.prog.
func call[T any](ctx context.Context, c *Client, r request) (T, error) {
	var out T
	path, err := r.target()
	if err != nil {
		return out, err
	}
	var body []byte
	if r.body != nil {
		if body, err = json.Marshal(r.body); err != nil {
			return out, fmt.Errorf("cannot encode the request: %w", err)
		}
	}
	op := r.changes()
	err = c.roundTrip(ctx, r.method, path, body, &out, r.prog, op != "")
	var ce *ConnError
	if errors.As(err, &ce) && !r.noStart && c.AutoStart && ctx.Err() == nil && isNotRunning(ce.Err) {
		if serr := c.startDaemon(ctx); serr != nil {
			return out, &ConnError{serr}
		}
		err = c.roundTrip(ctx, r.method, path, body, &out, r.prog, op != "")
	}
	var lost *lostError
	if errors.As(err, &lost) {
		if op != "" {
			return out, &InFlightError{Op: op, Session: r.session, Err: lost.err}
		}
		return out, &ConnError{lost.err}
	}
	return out, err
}

// changes names the call if it changes a session, so that a reply lost
// after the daemon took it leaves its effect unknown (InFlightError);
// "" for calls that only read.
func (r request) changes() string {
	if r.method != http.MethodPost {
		return ""
	}
	switch r.path {
	case api.PathExec:
		return api.DoExec
	case api.PathInput:
		return api.DoInput
	case api.PathInterrupt:
		return api.DoInterrupt
	case api.PathKill:
		return api.DoKill
	case api.PathRestart:
		return api.DoRestart
	case api.PathFork:
		return api.DoFork
	case api.PathCheckpoint:
		return api.DoCheckpoint
	case api.PathRollback:
		return api.DoRollback
	}
	return ""
}

// lostError is a reply lost after the request was written whole: the
// daemon may have acted on it.
type lostError struct{ err error }

func (e *lostError) Error() string { return e.err.Error() }

// target is the request's path with its session filled in.
func (r request) target() (string, error) {
	path := r.path
	if strings.Contains(path, "{name}") {
		if err := checkName(r.session); err != nil {
			return "", err
		}
		path = strings.Replace(path, "{name}", url.PathEscape(r.session), 1)
	}
	if r.query != "" {
		path += "?" + r.query
	}
	return path, nil
}

// checkName refuses a bad session name before it is put in a URL, where
// "..", say, would be cleaned away into another path.
func checkName(name string) error {
	if err := api.ValidateName(name); err != nil {
		return &APIError{Status: http.StatusBadRequest, ErrorReply: api.ErrorReply{
			Error: err.Error(), Code: api.CodeBadRequest,
			Hint: "session names use " + api.NameChars + ", at most 64 of them",
		}}
	}
	return nil
}

// roundTrip sends one request on a kept or new connection and reads its
// reply into out. A reply lost after the request was written is a
// *lostError; one that changes a session (changes) is then never sent
// again, for the daemon may have acted on it.
func (c *Client) roundTrip(ctx context.Context, method, path string, body []byte, out any, prog func(api.Progress), changes bool) error {
	cn, reused, err := c.getConn(ctx)
	if err != nil {
		return &ConnError{err}
	}
	resp, wrote, err := c.send(ctx, cn, method, path, body)
	if err != nil && reused && ctx.Err() == nil && (!wrote || !changes) {
		// A kept connection may have been closed by a daemon that has
		// since stopped (a unix socket refuses the write then): try once
		// more on a fresh one.
		cn.Close()
		if cn, _, err = c.getConn(ctx); err != nil {
			return &ConnError{err}
		}
		resp, wrote, err = c.send(ctx, cn, method, path, body)
	}
	if err != nil {
		cn.Close()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if wrote {
			return &lostError{err}
		}
		return &ConnError{err}
	}
	// The reply is read by this goroutine; a cancelled ctx unblocks it by
	// expiring the connection's deadline, which also retires the conn.
	stop := context.AfterFunc(ctx, func() { cn.SetDeadline(time.Unix(1, 0)) })
	defer func() {
		_, drainErr := io.Copy(io.Discard, resp.Body)
		if stop() && drainErr == nil && !resp.Close {
			c.putConn(cn)
		} else {
			cn.Close()
		}
	}()
	err = c.readReply(resp, out, prog)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	var ce *ConnError
	if errors.As(err, &ce) {
		return &lostError{ce.Err} // the reply broke off
	}
	return err
}

// newRequest makes a request to the daemon, stating this client's version.
func newRequest(ctx context.Context, method, path string, body []byte, ceiling string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://polyrepl"+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("cannot make the request: %w", err)
	}
	req.Header.Set(api.VersionHeader, version.Version)
	if ceiling != "" {
		req.Header.Set(api.HeaderCeiling, ceiling)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// send writes one request and reads the head of its reply; wrote says
// the request went out whole.
func (c *Client) send(ctx context.Context, cn *conn, method, path string, body []byte) (resp *http.Response, wrote bool, err error) {
	req, err := newRequest(ctx, method, path, body, c.ceilingHeader())
	if err != nil {
		return nil, false, err
	}
	stop := context.AfterFunc(ctx, func() { cn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := req.Write(cn); err != nil {
		return nil, false, err
	}
	resp, err = http.ReadResponse(cn.br, req)
	return resp, true, err
}

// readReply decodes a reply — an error body, a stream, or out — and notes
// the daemon's version, which every reply states.
func (c *Client) readReply(resp *http.Response, out any, prog func(api.Progress)) error {
	c.mu.Lock()
	c.daemonVersion = resp.Header.Get(api.VersionHeader)
	c.daemonKeeps = resp.Header.Get(api.KeepsHeader) != ""
	c.mu.Unlock()
	dec := json.NewDecoder(resp.Body)
	if resp.StatusCode/100 != 2 {
		e := &APIError{Status: resp.StatusCode}
		if err := dec.Decode(&e.ErrorReply); err != nil || e.ErrorReply.Error == "" {
			e.ErrorReply.Error = fmt.Sprintf("the daemon answered %s", resp.Status)
			if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
				e.Hint = "the daemon does not know this request; it may be another version"
				e.Next = []api.Action{{Do: api.DoStop}}
			}
		}
		return e
	}
	if resp.Header.Get("Content-Type") == api.StreamType {
		return readStream(dec, out, prog)
	}
	if out == nil {
		return nil
	}
	if err := dec.Decode(out); err != nil {
		return &ConnError{fmt.Errorf("cannot read the daemon's reply: %w", err)}
	}
	return nil
}

// readStream reads a call's progress events until its result or its
// error.
func readStream(dec *json.Decoder, out any, prog func(api.Progress)) error {
	return readEvents(dec, "reply", func(ev *api.StreamEvent) (bool, error) {
		switch {
		case ev.Progress != nil:
			if prog != nil {
				prog(*ev.Progress)
			}
		case ev.Error != nil:
			return true, &APIError{Status: http.StatusOK, ErrorReply: *ev.Error}
		case ev.Result != nil:
			if ev.Result.Status == "" {
				// Not a result: JSON's keys match in any case, so a stray
				// "Result" would otherwise pass for an empty one.
				return true, &ConnError{fmt.Errorf("the daemon's reply stream carried a result without a status")}
			}
			if r, ok := out.(*api.CellResult); ok {
				*r = *ev.Result
			}
			return true, nil
		}
		return false, nil
	})
}

// readEvents decodes a stream of NDJSON events of type E, the daemon's
// what stream, handing each to fn until fn says it is done or fails.
func readEvents[E any](dec *json.Decoder, what string, fn func(*E) (done bool, err error)) error {
	for {
		var ev E
		if err := dec.Decode(&ev); err != nil {
			return &ConnError{fmt.Errorf("the daemon's %s stream broke off: %w", what, err)}
		}
		if done, err := fn(&ev); done || err != nil {
			return err
		}
	}
}
