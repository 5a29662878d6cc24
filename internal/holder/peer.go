package holder

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/sandbox"
)

// A holder's only rightful peer is a daemon. Its socket is the user's
// (0600, uid checked), but a cell of a sandboxed session runs as the
// user too, and Landlock does not govern connecting to a unix socket by
// its path: the holder refuses a peer that is confined, or is inside a
// session, before it says anything.

// selfNoNewPrivs is the holder's own no_new_privs.
var selfNoNewPrivs = sync.OnceValue(sandbox.SelfNoNewPrivs)

// refusePeer says why the process at the other end of c may not speak
// to this holder, or "": it runs with no_new_privs where the holder does
// not (as every sandboxed process does), it carries a session's cookie
// (it runs in some session), or, unless it leads a process session of
// its own as a daemon does, it descends from this holder or its runtime
// or shares their process group or process session. leader is the
// holder's runtime; cookie its "KEY=VALUE" cookie.
func refusePeer(c *net.UnixConn, leader proc.Proc, cookie string) string {
	_, pid, err := paths.Peer(c)
	if err != nil {
		return err.Error()
	}
	if pid == os.Getpid() {
		return "" // a holder in the daemon's own process (holder.InProcess)
	}
	key, _, _ := strings.Cut(cookie, "=")
	if key == "" {
		key = "POLYREPL_SESSION"
	}
	self, _ := proc.StartTime(os.Getpid())
	// Its runtime started after it: an ancestor older than the holder
	// is no process of this session.
	p, err := sandbox.ReadPeer(pid, key, self)
	if errors.Is(err, sandbox.ErrCannotTell) {
		return ""
	}
	if err != nil {
		return fmt.Sprintf("the process that connected (pid %d) cannot be read: %v", pid, err)
	}
	if p.NoNewPrivs && !selfNoNewPrivs() {
		return fmt.Sprintf("pid %d runs with no_new_privs, as a sandboxed process does", pid)
	}
	if p.Cookie != "" {
		return fmt.Sprintf("pid %d carries a session's cookie: it runs inside a session", pid)
	}
	if l := p.Chain[0]; l.SID == l.Proc.PID {
		// A leader of its own process session, as every daemon a client
		// starts is: while the client that started it runs, its
		// ancestry may pass through a session (a person's polyrepl typed
		// in a terminal session after the daemon died), and refusing it
		// would leave that session to no daemon. A process of a
		// sandboxed session is refused above all the same: no_new_privs
		// is inherited and irrevocable.
		return ""
	}
	mark := sandbox.Mark{Leader: leader}
	if sid, err := unix.Getsid(0); err == nil && sid == os.Getpid() && self != 0 {
		mark.Holder = proc.Proc{PID: os.Getpid(), Start: self}
	}
	if i, how := p.Place([]sandbox.Mark{mark}); i >= 0 {
		return fmt.Sprintf("pid %d belongs to this session: %s", pid, how)
	}
	return ""
}
