package sandbox

import (
	"errors"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// Recognising a sandboxed peer. Landlock (up to ABI 7) does not govern
// connecting to a unix socket by its path, so a cell of a sandboxed
// session can reach the daemon's socket and a holder's: polyrepl must
// tell who connected and give it no more than its session's policy. The
// kernel says which process connected (SO_PEERCRED); /proc says what
// that process is: its ancestors, its process group and process session,
// its environment (a session's cookie), and whether it runs with
// no_new_privs, which every sandboxed runtime does and nothing can undo.

// Peer is what the system says of the process at the other end of a unix
// socket, read when it connected.
type Peer struct {
	PID int
	// NoNewPrivs: the process runs with no_new_privs, as every process
	// in a sandbox does (Landlock asks for it, and it is inherited and
	// irrevocable).
	NoNewPrivs bool
	// Cookie is the session cookie in its environment, the whole
	// "KEY=VALUE" entry ("" if it has none).
	Cookie string
	// Cwd is its working directory ("" if unreadable).
	Cwd string
	// Chain is the process and its ancestors, nearest first, up to the
	// first that is gone or unreadable, at most MaxChain.
	Chain []Link
}

// Link is one process of a peer's ancestry, as its stat said.
type Link struct {
	Proc proc.Proc
	PPID int
	PGID int // its process group
	SID  int // its process session
}

// MaxChain bounds how many ancestors of a peer are read.
const MaxChain = 64

// ErrCannotTell means this system does not let polyrepl tell which
// session a peer belongs to (macOS: no /proc; see peer_other.go).
var ErrCannotTell = errors.New("cannot tell whether the peer belongs to a sandboxed session on this system")

// Mark is what names a session's processes: its runtime (the leader of
// its process group), the holder that started it (the leader of its
// process session, for runtimes that do not start one of their own), and
// the cookie in every member's environment. A zero field matches nothing.
type Mark struct {
	Leader proc.Proc
	Holder proc.Proc
	Cookie string // "KEY=VALUE"
}

// Place says which of marks the peer belongs to (its index, or -1) and
// how it was told: the peer or an ancestor is the session's runtime or
// its holder, or is in the runtime's process group or the session's
// process session (a double fork and a cleared environment keep both),
// or the peer carries the session's cookie (a double fork and setsid
// keep it). A false match only narrows what the peer may do (it is
// given a session's policy, or the read-only of a confined peer), so
// every sign counts.
func (p Peer) Place(marks []Mark) (int, string) {
	for _, l := range p.Chain {
		for i, m := range marks {
			switch {
			case m.Leader.PID > 1 && l.Proc == m.Leader:
				if l.Proc.PID == p.PID {
					return i, "it is the session's runtime"
				}
				return i, "it descends from the session's runtime"
			case m.Holder.PID > 1 && l.Proc == m.Holder:
				return i, "it descends from the session's holder"
			case m.Leader.PID > 1 && l.PGID == m.Leader.PID:
				return i, "it is in the process group of the session's runtime"
			case m.Holder.PID > 1 && l.SID == m.Holder.PID, m.Leader.PID > 1 && l.SID == m.Leader.PID:
				return i, "it is in the session's process session"
			}
		}
	}
	if p.Cookie != "" {
		for i, m := range marks {
			if m.Cookie == p.Cookie {
				return i, "it carries the session's cookie"
			}
		}
	}
	return -1, ""
}

// Confined is the ceiling of a peer that runs with no_new_privs where
// the daemon does not, and belongs to no sandboxed session: it may be in
// a sandbox of a session polyrepl cannot place, or of another program
// (an agent's own shell sandbox). It gets no more than read-only, with
// the network off and no extra directories: never wider than what it
// could be.
func Confined(cwd string) api.Ceiling {
	return api.Ceiling{Sandbox: api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}, Cwd: cwd}
}
