// Package client is the one typed Go client of the daemon's API. The CLI,
// the MCP server and attach all use it; nothing else speaks the wire
// protocol. It starts the daemon when none answers and checks that the
// daemon runs as the same user before sending anything (every exec carries
// the caller's environment).
package client

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

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
	daemonKeeps   bool    // the daemon can leave its sessions to their holders
	upgraded      bool    // this client replaced the daemon once already
	warned        string  // the daemon version this client was warned of, once
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

// VersionMismatch is a note saying that the daemon runs other code than
// this client, or nil.
func (c *Client) VersionMismatch() *api.Note {
	dv := c.DaemonVersion()
	if dv == "" || dv == version.Version {
		return nil
	}
	return &api.Note{Kind: api.NoteVersion, Version: dv, ClientVersion: version.Version, Next: []api.Action{{Do: api.DoStop}}}
}

// dial connects to the socket after checking its directory, and checks
// that the daemon is our own user.
func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	if err := paths.CheckPrivateDir(filepath.Dir(c.Socket)); err != nil {
		return nil, err
	}
	if err := paths.CheckSocketPath(c.Socket); err != nil {
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
