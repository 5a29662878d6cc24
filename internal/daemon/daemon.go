// Package daemon is the long-lived process that owns every session: it
// keeps the state directory (one daemon per state directory, enforced by
// a lock there, where it says where it listens) and holds the socket (a
// lock beside it), checks each peer's uid, serves the v1 API over HTTP on
// a unix socket, and on stop ends every session, says which, and removes
// what it wrote for the runtimes.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/limit"
	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/render"
	"github.com/polyrepl/polyrepl/internal/session"
	"github.com/polyrepl/polyrepl/internal/state"
)

// ErrRunning means another daemon keeps the state directory or holds
// the socket: this one must not run beside it (it would take up, list
// as unreachable and end the other's sessions). errors.Is tells it; a
// *RunningError says which daemon.
var ErrRunning = errors.New("a polyrepl daemon is already running")

// RunningError is the refusal to start beside another daemon: PID (0 if
// unknown) keeps StateDir and listens at Socket, or, when StateDir is
// "", holds the lock of Socket's directory.
type RunningError struct {
	PID      int
	Socket   string
	StateDir string
	// Unlocked: the other daemon answers at Socket, but its lock file
	// was removed.
	Unlocked bool
}

func (e *RunningError) Error() string {
	who := "another polyrepl daemon"
	if e.PID > 0 {
		who = fmt.Sprintf("another polyrepl daemon (pid %d)", e.PID)
	}
	if e.StateDir == "" {
		return fmt.Sprintf("%s listens at %s; not starting a second one there", who, e.Socket)
	}
	at := ""
	if e.Socket != "" {
		at = " and listens at " + e.Socket
	}
	if e.Unlocked {
		at += " (its lock file there was removed, but it runs)"
	}
	return fmt.Sprintf("%s keeps the state directory %s%s; not starting a second one on it (it would take its sessions from it): clients reach that one, and `polyrepl stop` ends it", who, e.StateDir, at)
}

func (e *RunningError) Is(target error) bool { return target == ErrRunning }

// Daemon is one running daemon.
type Daemon struct {
	socketDir string
	socket    string
	stateDir  string
	started   time.Time
	sessions  *session.Manager
	server    *http.Server
	lock      *os.File // the socket directory's
	stateLock *os.File // the state directory's, held from start to end
	runtimes  string   // the runtimes' files, removed on stop
	surveys   surveys  // the runtimes found, for each caller's environment

	stopOnce sync.Once
	stopped  chan struct{}
	// leaving is closed when Stop begins: from then on the daemon's
	// socket is going away on purpose, and is not bound again.
	leaving chan struct{}
}

// Run starts the daemon and serves until it is stopped by the API or a
// signal. The caller has set up logging.
func Run() error {
	// Whatever started the daemon may have left descriptors open for it
	// (the client marks its own, but a daemon can be started by hand);
	// no runtime may inherit them.
	if n, err := proc.CloseOnExecInherited(); err != nil {
		log.Printf("cannot keep inherited descriptors from the runtimes: %v", err)
	} else if n > 0 {
		log.Printf("%d descriptors the daemon inherited open are kept from the runtimes", n)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(procs(runtime.NumCPU()))
	}
	d, err := Listen()
	if err != nil {
		return err
	}
	return d.Serve()
}

// procs is how many processors the daemon runs Go code on, of cpus: half.
// The daemon's share of a cell's CPU is at most a third (the rest is the
// holder's, the runtime's and the client's: docs/benchmarks.md), so it
// has no use for more; and
// while processors sit idle, Go's scheduler wakes threads to look for
// work at every hand-off, which on 2 cores cost a trivial cell ~100 µs
// of the daemon's CPU and 7 of its 19 context switches (issue 21).
// $GOMAXPROCS, when set, is obeyed instead.
func procs(cpus int) int {
	return max(1, cpus/2)
}

// Listen takes the state directory's lock and the socket directory's,
// prepares the directories and binds the socket. It returns a
// *RunningError if another daemon holds either lock.
func Listen() (*Daemon, error) {
	stateDir, err := paths.StateDir()
	if err != nil {
		return nil, err
	}
	st, err := state.Open(stateDir)
	if err != nil {
		return nil, err
	}
	// One daemon per state directory, whatever socket its clients'
	// environments compute: a second one would find the first one's
	// sessions in the live notes, call them unreachable and end them.
	stateLock, err := paths.Lock(filepath.Join(stateDir, paths.StateLockName))
	if errors.Is(err, paths.ErrLocked) {
		re := &RunningError{StateDir: stateDir}
		if k, kerr := paths.ReadKeeper(stateDir); kerr == nil {
			re.PID, re.Socket = k.PID, k.Socket
		}
		return nil, re
	}
	if err != nil {
		return nil, err
	}
	// The lock file may have been removed under a daemon that still
	// runs (a cleaner, a person): then the lock taken here is a new
	// file's, and the daemon the state directory names still answers.
	if k, err := paths.ReadKeeper(stateDir); err == nil && k.Answers() {
		stateLock.Close()
		return nil, &RunningError{PID: k.PID, Socket: k.Socket, StateDir: stateDir, Unlocked: true}
	}
	d, err := listen(stateDir, st, stateLock)
	if err != nil {
		stateLock.Close()
		return nil, err
	}
	return d, nil
}

// lockPID is the pid the daemon holding the socket directory's lock
// wrote in it, or 0: read as every file of polyrepl's is (no link, no
// FIFO followed), and no more of it than a pid.
func lockPID(path string) int {
	f, err := paths.OpenFile(path, os.O_RDONLY)
	if err != nil {
		return 0
	}
	defer f.Close()
	b := make([]byte, 24)
	n, _ := io.ReadFull(f, b)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// listen takes the socket directory's lock, binds the socket, takes up
// the holders' sessions and serves, for the daemon that keeps stateDir
// (its lock held as stateLock).
func listen(stateDir string, st *state.Dir, stateLock *os.File) (*Daemon, error) {
	dir := paths.SocketDir()
	if err := paths.EnsurePrivateDir(dir); err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, paths.SocketName)
	// A daemon of another state directory may listen here: this socket
	// and the holders' directory beside it are its.
	lock, err := paths.Lock(filepath.Join(dir, paths.LockName))
	if errors.Is(err, paths.ErrLocked) {
		return nil, &RunningError{Socket: sock, PID: lockPID(filepath.Join(dir, paths.LockName))}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot open the daemon lock: %w", err)
	}
	// We hold the lock, so a socket file left here is stale.
	if err := os.Remove(sock); err != nil && !errors.Is(err, fs.ErrNotExist) {
		lock.Close()
		return nil, fmt.Errorf("cannot remove the stale socket %s: %w", sock, err)
	}
	// What the runtimes need on disk (worker programs, cell files) goes
	// in a directory of its own, so that stopping can remove all of it
	// and nothing else: one left here was a crashed daemon's.
	runtimes := filepath.Join(dir, paths.RuntimesName)
	if err := paths.EnsurePrivateDir(runtimes); err != nil {
		lock.Close()
		return nil, err
	}
	ln, err := paths.Listen(sock)
	if err != nil {
		lock.Close()
		return nil, err
	}
	// Clients whose environments name another socket find this one
	// through the state directory.
	started := time.Now()
	if err := paths.WriteKeeper(stateDir, paths.Keeper{PID: os.Getpid(), Socket: sock, Started: started}); err != nil {
		// It serves all the same: clients of its socket reach it, and
		// its lock keeps a second daemon off the state directory.
		log.Printf("cannot say in the state directory where the daemon listens (clients whose XDG_RUNTIME_DIR differs will not find it): %v", err)
	}
	cfg := managerConfig(st, runtimes)
	cfg.Log = filepath.Join(dir, paths.LogName)
	cfg.HoldersDir = paths.HoldersDir(dir)
	cfg.MemoryKey = stateDir
	d := &Daemon{
		socketDir: dir, socket: sock, stateDir: stateDir, started: started, runtimes: runtimes,
		sessions: session.NewManager(cfg), lock: lock, stateLock: stateLock, stopped: make(chan struct{}), leaving: make(chan struct{}),
	}
	keepLogSmall(dir)
	// The sessions the holders kept while no daemon ran are taken up,
	// those whose holders answer within session.StartWait before the
	// first call is served, the others when they answer (listed as being
	// taken up meanwhile); then what no holder kept is reported lost.
	t0 := time.Now()
	if adopted := d.sessions.AdoptAll(session.StartWait); len(adopted) > 0 {
		log.Printf("took up %d sessions from their holders in %s: %s", len(adopted), time.Since(t0).Round(time.Microsecond), strings.Join(adopted, ", "))
	}
	d.sessions.RecoverLost()
	d.sessions.SettleCap()
	if waiting := d.sessions.Adopting(); len(waiting) > 0 {
		log.Printf("%d sessions are taken up once their holders answer: %s", len(waiting), strings.Join(waiting, ", "))
	}
	pruneOutput(st.OutputDir(), outputKeep)
	d.server = &http.Server{Handler: d.routes(), ReadHeaderTimeout: 10 * time.Second, ConnContext: d.connContext}
	go func() {
		if err := d.server.Serve(&peerListener{ln}); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("serving: %v", err)
			d.Stop("the daemon's listener failed", true)
		}
	}()
	go d.keepSocket(ln)
	go d.keepOutputPruned(st.OutputDir())
	// The lock file says who holds it, for `polyrepl status` and people.
	lock.Truncate(0)
	fmt.Fprintf(lock, "%d\n", os.Getpid())
	memCap := ""
	if c := d.sessions.MemoryCap(); c != nil {
		// Said on the start line, enforced or not: a cap asked for is
		// never silently absent.
		memCap = "; memory cap " + render.MemoryCap(c)
	}
	log.Printf("polyrepl daemon pid %d listening on %s; state in %s%s", os.Getpid(), sock, stateDir, memCap)
	return d, nil
}

// socketCheck is how often the daemon checks that its socket file is
// still there.
const socketCheck = 2 * time.Second

// keepSocket binds the socket again if its file is deleted (a cleaner of
// /run/user, a person) or replaced, so clients keep finding this daemon
// instead of starting a second one that the lock would refuse. We still
// hold the lock, so whatever is at the path now is not another daemon's.
func (d *Daemon) keepSocket(ln *net.UnixListener) {
	fi, err := os.Stat(d.socket)
	if err != nil {
		return
	}
	d.every(socketCheck, func() bool {
		select {
		case <-d.leaving:
			// Stopping closed the listener and removed its file; a
			// stream still open (a follower, the view) may keep this
			// daemon a while, and clients must find the next one.
			return false
		default:
		}
		now, err := os.Lstat(d.socket)
		if err == nil && os.SameFile(fi, now) {
			return true
		}
		log.Printf("the socket %s was deleted or replaced under the daemon; binding it again", d.socket)
		// The old listener stays open (closing it would end its Serve, which
		// stops the daemon) but must not unlink the new socket when closed.
		ln.SetUnlinkOnClose(false)
		if err == nil {
			os.Remove(d.socket)
		}
		nl, err := paths.Listen(d.socket)
		if err != nil {
			log.Printf("cannot bind the socket again: %v; clients cannot reach this daemon", err)
			return false
		}
		if fi, err = os.Stat(d.socket); err != nil {
			return false
		}
		ln = nl
		go func() {
			if err := d.server.Serve(&peerListener{nl}); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Printf("serving on the rebound socket: %v", err)
			}
		}()
		return true
	})
}

// every calls f every period until the daemon stops or f says to stop.
func (d *Daemon) every(period time.Duration, f func() bool) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-d.stopped:
			return
		case <-t.C:
		}
		if !f() {
			return
		}
	}
}

// Serve waits until the daemon is stopped, by the API or by SIGTERM,
// SIGINT or SIGHUP, and then ends every session.
func (d *Daemon) Serve() error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	select {
	case sig := <-sigs:
		// A signal ends the daemon, not the sessions: a logout's cleanup
		// or a service manager stopping the daemon leaves them to their
		// holders, and the next daemon takes them up. `polyrepl stop`
		// ends them.
		d.Stop(fmt.Sprintf("the daemon received %s", sig), true)
	case <-d.stopped:
	}
	<-d.stopped
	return nil
}

// Stop ends the daemon, once: with keep, its sessions go on in their
// holders for the next daemon to take up (it returns them as kept);
// otherwise every session ends, each with a death note (returned as
// ended).
func (d *Daemon) Stop(cause string, keep bool) (ended, kept []api.SessionInfo) {
	d.stopOnce.Do(func() {
		close(d.leaving)
		if keep {
			log.Printf("leaving: %s; the sessions go on in their holders", cause)
			kept = d.sessions.Leave()
			if len(kept) > 0 {
				log.Printf("left %d sessions to their holders for the next daemon", len(kept))
			}
		} else {
			log.Printf("stopping: %s", cause)
			ended = d.sessions.StopAll(cause)
		}
		// Shutdown waits for in-flight replies, the stop reply our caller
		// writes among them.
		go func() {
			d.shutdown()
			if !keep {
				// The sessions' groups go as their last processes do.
				d.sessions.ReleaseCap(3 * time.Second)
			}
			// No call is served: the runtimes' files go, before the lock
			// lets a next daemon in, unless holders still use them.
			if len(kept) == 0 {
				if err := os.RemoveAll(d.runtimes); err != nil {
					log.Printf("cannot remove the runtimes' files: %v", err)
				}
			}
			// Then the locks, the state directory's last: a client
			// that waits for it to be free (Gone) may start a daemon
			// on this socket at once.
			os.Remove(filepath.Join(d.stateDir, paths.KeeperName))
			d.lock.Close()
			d.stateLock.Close()
			close(d.stopped)
		}()
	})
	return ended, kept
}

// shutdown stops serving, once in-flight replies are written (the stop
// reply our caller writes among them).
func (d *Daemon) shutdown() {
	// A client's connection that never sent a request counts as busy
	// for a while; it must not keep the daemon alive.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if d.server.Shutdown(ctx) != nil {
		d.server.Close()
	}
}

// peerListener accepts only connections from our own uid.
type peerListener struct{ *net.UnixListener }

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			return nil, err
		}
		uid, err := paths.PeerUID(c)
		if err != nil {
			log.Printf("refused a connection: %v", err)
			c.Close()
			continue
		}
		if uid != os.Getuid() {
			log.Printf("refused a connection from uid %d: only uid %d may use this daemon", uid, os.Getuid())
			c.Close()
			continue
		}
		return c, nil
	}
}

// outputKeep is how long the whole output a reply points at (a spool file
// in the state's output directory) is kept: long enough to come back to,
// not for ever.
const outputKeep = 7 * 24 * time.Hour

// pruneEvery is how often a running daemon removes output older than
// outputKeep, as it does when it starts: a daemon left running for weeks
// must not fill the disk with it either. A variable, for a test.
var pruneEvery = time.Hour

// keepOutputPruned prunes dir every pruneEvery until the daemon stops.
func (d *Daemon) keepOutputPruned(dir string) {
	d.every(pruneEvery, func() bool {
		pruneOutput(dir, outputKeep)
		return true
	})
}

// pruneOutput removes saved output older than age, so long-running use
// does not fill the disk with old spool files.
func pruneOutput(dir string, age time.Duration) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	cutoff := time.Now().Add(-age)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// MemoryTotalVar caps all sessions together: `polyrepl daemon
// --memory-total SIZE` and `polyrepl start --memory-total SIZE` set it
// for the daemon, and a daemon a client starts by itself inherits it from
// the client's environment.
const MemoryTotalVar = "POLYREPL_MEMORY_TOTAL"

// managerConfig is the sessions' configuration: their files in st and
// the runtimes' in dir, and the memory limits the daemon's environment asks for
// ($POLYREPL_MEMORY, $POLYREPL_MEMORY_BY); a bad value is logged and
// ignored, so the daemon still starts.
func managerConfig(st *state.Dir, dir string) session.Config {
	c := session.Config{State: st, RuntimeDir: dir}
	if v := os.Getenv("POLYREPL_MEMORY"); v != "" {
		if n, err := limit.Parse(v); err != nil {
			log.Printf("ignoring $POLYREPL_MEMORY: %v", err)
		} else {
			c.DefaultMemory = n
			log.Printf("sessions are limited to %s of memory unless they ask otherwise ($POLYREPL_MEMORY)", limit.Size(n))
		}
	}
	if v := os.Getenv(MemoryTotalVar); v != "" {
		if n, err := limit.Parse(v); err != nil {
			log.Printf("ignoring $%s: %v", MemoryTotalVar, err)
		} else {
			c.MemoryTotal = n
		}
	}
	if v := os.Getenv("POLYREPL_MEMORY_BY"); v != "" {
		if err := limit.CheckWant(v); err != nil {
			log.Printf("ignoring $POLYREPL_MEMORY_BY: %v", err)
		} else {
			c.MemoryBy = v
		}
	}
	return c
}
