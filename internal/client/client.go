// Package client is the one typed Go client of the daemon's API. The CLI,
// the MCP server and attach all use it; nothing else speaks the wire
// protocol. It starts the daemon when none answers and checks that the
// daemon runs as the same user before sending anything (every exec carries
// the caller's environment).
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/version"
)

// Client talks to the daemon of the current user.
type Client struct {
	Socket string
	// AutoStart starts the daemon when none answers.
	AutoStart bool

	mu            sync.Mutex
	daemonVersion string
	idle          []*conn // connections kept open for the next request
}

// conn is one connection to the daemon. Requests on it are written and
// their replies read by the calling goroutine itself: no transport
// goroutines to wake, which is most of a round trip's latency here.
type conn struct {
	net.Conn
	br *bufio.Reader
}

// maxIdle bounds the connections kept open between requests.
const maxIdle = 16

// New makes a client for the default socket that starts the daemon on
// first use.
func New() *Client {
	return &Client{Socket: paths.Socket(), AutoStart: true}
}

// APIError is a refusal from the daemon: bad input, no such session, busy.
type APIError struct {
	Status int
	api.ErrorReply
}

func (e *APIError) Error() string { return e.ErrorReply.Error }

// ConnError means the daemon could not be reached or trusted.
type ConnError struct{ Err error }

func (e *ConnError) Error() string { return e.Err.Error() }
func (e *ConnError) Unwrap() error { return e.Err }

// DaemonVersion is the version the daemon stated in its last reply.
func (c *Client) DaemonVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.daemonVersion
}

// VersionMismatch says, in words, that the daemon runs other code than
// this client, or returns "".
func (c *Client) VersionMismatch() string {
	dv := c.DaemonVersion()
	if dv == "" || dv == version.Version {
		return ""
	}
	return fmt.Sprintf("the running daemon is polyrepl %s but this client is %s; run `polyrepl stop` (it ends every session) so the next call starts %s", dv, version.Version, version.Version)
}

// dial connects to the socket after checking its directory, and checks
// that the daemon is our own user.
func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	if err := paths.CheckPrivateDir(filepath.Dir(c.Socket)); err != nil {
		return nil, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.Socket)
	if err != nil {
		return nil, err
	}
	uid, err := paths.PeerUID(conn.(*net.UnixConn))
	if err != nil {
		conn.Close()
		return nil, err
	}
	if uid != os.Getuid() {
		conn.Close()
		return nil, fmt.Errorf("refusing the daemon at %s: it runs as uid %d, not as you (uid %d); do not send it your environment", c.Socket, uid, os.Getuid())
	}
	return conn, nil
}

// do sends one request and decodes the reply into out.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	return c.doStream(ctx, method, path, in, out, nil)
}

// doStream is do for calls that may answer with a stream of progress
// events before their result.
func (c *Client) doStream(ctx context.Context, method, path string, in, out any, prog func(api.Progress)) error {
	err := c.roundTrip(ctx, method, path, in, out, prog)
	var ce *ConnError
	if errors.As(err, &ce) && c.AutoStart && ctx.Err() == nil && isNotRunning(ce.Err) {
		if serr := c.startDaemon(ctx); serr != nil {
			return &ConnError{serr}
		}
		err = c.roundTrip(ctx, method, path, in, out, prog)
	}
	return err
}

func (c *Client) roundTrip(ctx context.Context, method, path string, in, out any, prog func(api.Progress)) error {
	var body []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("cannot encode the request: %w", err)
		}
		body = b
	}
	cn, reused, err := c.getConn(ctx)
	if err != nil {
		return &ConnError{err}
	}
	resp, err := send(ctx, cn, method, path, body)
	if err != nil && reused && ctx.Err() == nil {
		// A kept connection may have been closed by a daemon that has
		// since stopped: try once more on a fresh one.
		cn.Close()
		if cn, _, err = c.getConn(ctx); err != nil {
			return &ConnError{err}
		}
		resp, err = send(ctx, cn, method, path, body)
	}
	if err != nil {
		cn.Close()
		if ctx.Err() != nil {
			return ctx.Err()
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
	return err
}

// send writes one request and reads the head of its reply.
func send(ctx context.Context, cn *conn, method, path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://polyrepl"+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("cannot make the request: %w", err)
	}
	req.Header.Set(api.VersionHeader, version.Version)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	stop := context.AfterFunc(ctx, func() { cn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := req.Write(cn); err != nil {
		return nil, err
	}
	return http.ReadResponse(cn.br, req)
}

func (c *Client) getConn(ctx context.Context) (*conn, bool, error) {
	c.mu.Lock()
	if n := len(c.idle); n > 0 {
		cn := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return cn, true, nil
	}
	c.mu.Unlock()
	nc, err := c.dial(ctx)
	if err != nil {
		return nil, false, err
	}
	return &conn{Conn: nc, br: bufio.NewReader(nc)}, false, nil
}

func (c *Client) putConn(cn *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.idle) >= maxIdle {
		cn.Close()
		return
	}
	c.idle = append(c.idle, cn)
}

// readReply decodes a reply: an error body, a stream, or out.
func (c *Client) readReply(resp *http.Response, out any, prog func(api.Progress)) error {
	c.mu.Lock()
	c.daemonVersion = resp.Header.Get(api.VersionHeader)
	c.mu.Unlock()
	dec := json.NewDecoder(resp.Body)
	if resp.StatusCode/100 != 2 {
		e := &APIError{Status: resp.StatusCode}
		if err := dec.Decode(&e.ErrorReply); err != nil || e.ErrorReply.Error == "" {
			e.ErrorReply.Error = fmt.Sprintf("the daemon answered %s", resp.Status)
			if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
				e.Hint = "the daemon does not know this request; it may be another version: run `polyrepl stop` and retry"
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

// readStream reads progress events until the result or the error.
func readStream(dec *json.Decoder, out any, prog func(api.Progress)) error {
	for {
		var ev api.StreamEvent
		if err := dec.Decode(&ev); err != nil {
			return &ConnError{fmt.Errorf("the daemon's reply stream broke off: %w", err)}
		}
		switch {
		case ev.Progress != nil:
			if prog != nil {
				prog(*ev.Progress)
			}
		case ev.Error != nil:
			return &APIError{Status: http.StatusOK, ErrorReply: *ev.Error}
		case ev.Result != nil:
			if r, ok := out.(*api.CellResult); ok {
				*r = *ev.Result
			}
			return nil
		}
	}
}

func sessionPath(pattern, name string) string {
	return strings.Replace(pattern, "{name}", url.PathEscape(name), 1)
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

// Exec runs a cell, creating the session on first use.
func (c *Client) Exec(ctx context.Context, name string, req api.ExecRequest) (api.CellResult, error) {
	return c.ExecProgress(ctx, name, req, nil)
}

// ExecProgress is Exec with progress events every req.Progress seconds
// while the cell runs.
func (c *Client) ExecProgress(ctx context.Context, name string, req api.ExecRequest, prog func(api.Progress)) (api.CellResult, error) {
	var r api.CellResult
	if err := checkName(name); err != nil {
		return r, err
	}
	err := c.doStream(ctx, http.MethodPost, sessionPath(api.PathExec, name), req, &r, prog)
	return r, err
}

// Wait collects a running or uncollected cell.
func (c *Client) Wait(ctx context.Context, name string, req api.WaitRequest) (api.CellResult, error) {
	return c.WaitProgress(ctx, name, req, nil)
}

// WaitProgress is Wait with progress events, as ExecProgress.
func (c *Client) WaitProgress(ctx context.Context, name string, req api.WaitRequest, prog func(api.Progress)) (api.CellResult, error) {
	var r api.CellResult
	if err := checkName(name); err != nil {
		return r, err
	}
	err := c.doStream(ctx, http.MethodPost, sessionPath(api.PathWait, name), req, &r, prog)
	return r, err
}

// Interrupt stops the running cell and returns its result.
func (c *Client) Interrupt(ctx context.Context, name string, req api.ControlRequest) (api.CellResult, error) {
	var r api.CellResult
	if err := checkName(name); err != nil {
		return r, err
	}
	err := c.do(ctx, http.MethodPost, sessionPath(api.PathInterrupt, name), req, &r)
	return r, err
}

// Restart replaces the session's process with a fresh one.
func (c *Client) Restart(ctx context.Context, name string, req api.ControlRequest) (api.KillReply, error) {
	var r api.KillReply
	if err := checkName(name); err != nil {
		return r, err
	}
	err := c.do(ctx, http.MethodPost, sessionPath(api.PathRestart, name), req, &r)
	return r, err
}

// Kill ends the session and its whole process tree.
func (c *Client) Kill(ctx context.Context, name string, req api.ControlRequest) (api.KillReply, error) {
	var r api.KillReply
	if err := checkName(name); err != nil {
		return r, err
	}
	err := c.do(ctx, http.MethodPost, sessionPath(api.PathKill, name), req, &r)
	return r, err
}

// Sessions lists every session, or the named one.
func (c *Client) Sessions(ctx context.Context, name string) ([]api.SessionInfo, error) {
	var r api.SessionsReply
	path := api.PathSessions
	if name != "" {
		if err := checkName(name); err != nil {
			return nil, err
		}
		path = sessionPath(api.PathSession, name)
	}
	err := c.do(ctx, http.MethodGet, path, nil, &r)
	return r.Sessions, err
}

// Status describes the running daemon. It never starts one.
func (c *Client) Status(ctx context.Context) (api.StatusReply, error) {
	var r api.StatusReply
	err := c.roundTrip(ctx, http.MethodGet, api.PathStatus, nil, &r, nil)
	return r, err
}

// Stop ends the daemon and every session. It never starts one.
func (c *Client) Stop(ctx context.Context) (api.StopReply, error) {
	var r api.StopReply
	err := c.roundTrip(ctx, http.MethodPost, api.PathStop, nil, &r, nil)
	return r, err
}

// Start makes sure a daemon is running, starting one if needed.
func (c *Client) Start(ctx context.Context) (api.StatusReply, bool, error) {
	if st, err := c.Status(ctx); err == nil {
		return st, false, nil
	} else if !IsNotRunning(err) {
		return st, false, err
	}
	if err := c.startDaemon(ctx); err != nil {
		return api.StatusReply{}, false, &ConnError{err}
	}
	st, err := c.Status(ctx)
	return st, true, err
}
