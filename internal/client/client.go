// Package client is the one typed Go client of the daemon's API. The CLI,
// the MCP server and attach all use it; nothing else speaks the wire
// protocol. It starts the daemon when none answers and checks that the
// daemon runs as the same user before sending anything (every exec carries
// the caller's environment).
package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"sync"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/version"
)

// Client talks to the daemon of the current user.
type Client struct {
	// Socket is where this client's environment says the daemon
	// listens, and where a daemon it starts listens.
	Socket string
	// StateDir is the state directory whose daemon this client reaches:
	// the daemon that keeps it is reached where it says it listens
	// (paths.Keeper), which is not Socket when the client's
	// XDG_RUNTIME_DIR differs from the daemon's; Socket only when it
	// names none that answers. "" looks nowhere but Socket.
	StateDir string
	// AutoStart starts the daemon when none answers.
	AutoStart bool
	// Elsewhere is told, once, that this client reached the daemon at
	// another socket than Socket (a note of kind api.NoteElsewhere).
	Elsewhere func(api.Note)
	// Ceiling, if set, is the most this client may reach (an MCP server
	// started with --sandbox): every request carries it
	// (api.HeaderCeiling), and the daemon shows and lets it use only the
	// sessions within it, and create only such sessions. A caller inside
	// a sandboxed session is held to its session's policy whatever this
	// says.
	Ceiling *api.Ceiling

	mu            sync.Mutex
	daemonVersion string
	daemonKeeps   bool    // the daemon can leave its sessions to their holders
	upgraded      bool    // this client replaced the daemon once already
	warned        string  // the daemon version this client was warned of, once
	idle          []*conn // connections kept open for the next request
	at            string  // the socket the daemon was reached at, if not Socket
	toldAt        bool    // Elsewhere was told
}

// ceilingHeader is Ceiling as its header carries it ("" for none).
func (c *Client) ceilingHeader() string {
	if c.Ceiling == nil {
		return ""
	}
	b, err := json.Marshal(c.Ceiling)
	if err != nil {
		return ""
	}
	return string(b)
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

// New makes a client for the default socket and state directory that
// starts the daemon on first use.
func New() *Client {
	stateDir, _ := paths.StateDir() // "": the daemon says why it cannot start
	return &Client{Socket: paths.Socket(), StateDir: stateDir, AutoStart: true}
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

// InFlightError means the daemon took a call that changes a session
// (exec, input, interrupt, kill, restart) and its connection ended
// before it answered: the daemon ended, most likely, and whether the call
// did its work is not known here. The call is not sent again (a cell
// would run twice); render.InFlight words the steps that find out.
type InFlightError struct {
	Op      string // the call: one of the api.Do constants
	Session string
	Err     error
}

func (e *InFlightError) Error() string {
	return fmt.Sprintf("the connection to the daemon ended while the %s was in flight: %v", e.Op, e.Err)
}
func (e *InFlightError) Unwrap() error { return e.Err }

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

// dial connects to the daemon that keeps StateDir, where that one says
// it listens; else to the one at Socket. The state directory comes
// first: it is what a client's sessions are, and a daemon at Socket
// may keep another one (its clients' XDG_STATE_HOME differs).
func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	if k, ok := c.keeper(); ok {
		if conn, err := dialAt(ctx, k.Socket, k.PID); err == nil {
			c.setAt(k)
			return conn, nil
		}
	}
	conn, err := dialAt(ctx, c.Socket, 0)
	if err == nil {
		c.setAt(paths.Keeper{})
	}
	return conn, err
}

// keeper is the daemon the state directory says keeps it, when it says
// it listens at a socket of the user's other than Socket. It is
// believed only if a daemon of ours with its pid answers there (a file
// a dead daemon left names a socket nobody listens at, or another
// process now); else the client goes on as if it named none.
func (c *Client) keeper() (paths.Keeper, bool) {
	if c.StateDir == "" {
		return paths.Keeper{}, false
	}
	k, err := paths.ReadKeeper(c.StateDir)
	if err != nil || k.Socket == c.Socket || paths.CheckSocket(k.Socket) != nil {
		return paths.Keeper{}, false
	}
	return k, true
}

// dialAt connects to the socket at path after checking its directory,
// and checks that the daemon is our own user, and, if pid is not 0, the
// process pid.
func dialAt(ctx context.Context, path string, pid int) (net.Conn, error) {
	if err := paths.CheckPrivateDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if err := paths.CheckSocketPath(path); err != nil {
		return nil, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	uid, peer, err := paths.Peer(conn.(*net.UnixConn))
	if err != nil {
		conn.Close()
		return nil, err
	}
	if uid != os.Getuid() {
		conn.Close()
		return nil, fmt.Errorf("refusing the daemon at %s: it runs as uid %d, not as you (uid %d); do not send it your environment", path, uid, os.Getuid())
	}
	if pid != 0 && peer != pid {
		conn.Close()
		return nil, fmt.Errorf("the process at %s is pid %d, not the daemon (pid %d) the state directory names", path, peer, pid)
	}
	return conn, nil
}

// setAt notes where the daemon was reached: k.Socket, or Socket when k
// is zero; and tells Elsewhere the first time it is not Socket.
func (c *Client) setAt(k paths.Keeper) {
	c.mu.Lock()
	c.at = k.Socket
	tell := k.Socket != "" && !c.toldAt && c.Elsewhere != nil
	if tell {
		c.toldAt = true
	}
	c.mu.Unlock()
	if tell {
		c.Elsewhere(api.Note{Kind: api.NoteElsewhere, PID: k.PID, Socket: k.Socket, OwnSocket: c.Socket, StateDir: c.StateDir})
	}
}

// Reached is the socket at which this client last reached the daemon:
// Socket, or the one the state directory named.
func (c *Client) Reached() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at != "" {
		return c.at
	}
	return c.Socket
}

// LogPath is the daemon's log: beside the socket it was reached at.
func (c *Client) LogPath() string { return filepath.Join(filepath.Dir(c.Reached()), paths.LogName) }

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

// Label names the person behind a client from its environment (getenv):
// $POLYREPL_LABEL, else the user's name — for busy messages and the
// shared record. The CLI labels its commands by it, and the MCP server
// the person acting in its app.
func Label(getenv func(string) string) string {
	if l := getenv("POLYREPL_LABEL"); l != "" {
		return l
	}
	if u := getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return fmt.Sprintf("uid %d", os.Getuid())
}
