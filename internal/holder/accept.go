package holder

// The holder's socket: where later daemons connect, and who is let in.

import (
	"errors"
	"log"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/polyrepl/polyrepl/internal/paths"
)

// listen makes the holder's socket, private to the user: 0600 in the
// 0700 directory of holders.
func listen(path string) (*net.UnixListener, error) {
	if err := paths.EnsurePrivateDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	os.Remove(path) // a socket of a holder that died, under this generation: none other
	return paths.Listen(path)
}

// accept serves each daemon that connects, one at a time, until the
// holder ends.
func (s *server) accept() {
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			select {
			case <-s.end:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			log.Printf("session %s: accepting a daemon: %v", s.sp.Name, err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if uid, err := paths.PeerUID(c); err != nil || uid != os.Getuid() {
			log.Printf("session %s: refused a connection from uid %d (%v): only uid %d may hold it", s.sp.Name, uid, err, os.Getuid())
			c.Close()
			continue
		}
		if why := refusePeer(c, s.runtime().Tree().Leader, s.sp.Cookie); why != "" {
			log.Printf("session %s: refused a connection to its holder: %s; only a daemon may hold it", s.sp.Name, why)
			c.Close()
			continue
		}
		w := newHolderWire(c)
		s.mu.Lock()
		if s.w != nil && peerAlive(s.w.c) {
			s.mu.Unlock()
			w.sendJSON(frameRefused, failure{Err: "another daemon holds this session now"})
			c.Close()
			continue
		}
		if s.w != nil {
			s.dropLocked(errors.New("its connection ended"), true)
		}
		err = s.attachLocked(w)
		s.mu.Unlock()
		if err != nil {
			log.Printf("session %s: a daemon went away while taking it up: %v", s.sp.Name, err)
		}
	}
}

// peerAlive reports whether the other end of c is still open.
func peerAlive(c *net.UnixConn) bool {
	sc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	alive := true
	sc.Control(func(fd uintptr) { alive = !peerClosed(int(fd)) })
	return alive
}
