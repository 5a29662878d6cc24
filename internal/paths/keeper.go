package paths

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/bound"
	"golang.org/x/sys/unix"
)

// One daemon keeps a state directory: its sessions' live notes, records
// and transcripts are written by one process. Clients whose environments
// differ (an MCP client that starts its server without XDG_RUNTIME_DIR, a
// terminal that points it elsewhere) compute different socket paths but
// the same state directory, so the state directory is where the daemon
// says it is there and where it listens: it holds StateLockName locked
// for its whole life, and writes KeeperName.

// Files in the state directory.
const (
	// StateLockName is the lock the daemon that keeps the state
	// directory holds (flock, exclusive) from its start to its end.
	StateLockName = "daemon.lock"
	// KeeperName says which daemon keeps the state directory and where
	// it listens (Keeper, as JSON); it is believed only while its lock
	// is held and the daemon answers at the socket it names.
	KeeperName = "daemon.json"
)

// KeeperMax bounds the file KeeperName: what the daemon writes is a
// hundred bytes or so; anything longer is not its.
const KeeperMax = 4096

// Keeper is the daemon that keeps a state directory, as it says in the
// file KeeperName.
type Keeper struct {
	PID     int       `json:"pid"`
	Socket  string    `json:"socket"`
	Started time.Time `json:"started"`
}

// ErrLocked means another process holds a lock.
var ErrLocked = errors.New("the lock is held by another process")

// Lock opens the lock file at path (created 0600, refused if planted, as
// OpenFile does) and takes it, exclusively, without waiting: ErrLocked if
// another process holds it. The lock lasts until the file is closed or
// the process ends; the descriptor is close-on-exec, so no process the
// holder starts keeps it. On a read-only file system an existing lock
// is taken all the same (opened for reading: flock needs no more).
func Lock(path string) (*os.File, error) {
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE)
	if errors.Is(err, unix.EROFS) {
		f, err = OpenFile(path, os.O_RDONLY)
	}
	if errors.Is(err, ErrUnsafe) {
		return nil, err // it names the path and says what to do
	}
	if err != nil {
		return nil, fmt.Errorf("cannot open the lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	return f, nil
}

// ParseKeeper reads the content of a KeeperName file: at most KeeperMax
// bytes of JSON, a pid, and an absolute, clean socket path short enough
// for a unix socket and named as the daemon names its socket. Anything
// else is refused with what is wrong: the file is on disk, where a cell
// running as the user could have written it.
func ParseKeeper(b []byte) (Keeper, error) {
	var k Keeper
	if len(b) > KeeperMax {
		return k, fmt.Errorf("it is %d bytes, more than the %d a daemon writes", len(b), KeeperMax)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&k); err != nil {
		return Keeper{}, fmt.Errorf("it is not the JSON a daemon writes: %w", err)
	}
	if dec.More() {
		return Keeper{}, fmt.Errorf("it holds more than one JSON value")
	}
	switch s := k.Socket; {
	case k.PID <= 0 || k.PID > 1<<30:
		return Keeper{}, fmt.Errorf("its pid %d is not a process's", k.PID)
	case s == "":
		return Keeper{}, fmt.Errorf("it names no socket")
	case strings.IndexByte(s, 0) >= 0 || !filepath.IsAbs(s) || filepath.Clean(s) != s:
		return Keeper{}, fmt.Errorf("its socket %q is not a clean absolute path", shown(s))
	case filepath.Base(s) != SocketName:
		return Keeper{}, fmt.Errorf("its socket %q is not named %s", shown(s), SocketName)
	case len(s) > socketPathMax(runtime.GOOS):
		return Keeper{}, fmt.Errorf("its socket path is %d bytes, more than a unix socket's %d", len(s), socketPathMax(runtime.GOOS))
	}
	return k, nil
}

// shown bounds a path read from a file for an error message: the path
// polyrepl writes is at most a socket's 108 bytes.
func shown(s string) string {
	v, _ := bound.HeadTail(s, 120)
	return v
}

// ReadKeeper reads the file KeeperName in stateDir, refused (as OpenFile
// refuses) if it is not a private file of the user's, and parsed by
// ParseKeeper. It does not say whether that daemon still runs: its lock
// says, or its socket.
func ReadKeeper(stateDir string) (Keeper, error) {
	path := filepath.Join(stateDir, KeeperName)
	f, err := OpenFile(path, os.O_RDONLY)
	if err != nil {
		return Keeper{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, KeeperMax+1))
	if err != nil {
		return Keeper{}, fmt.Errorf("cannot read %s: %w", path, err)
	}
	k, err := ParseKeeper(b)
	if err != nil {
		return Keeper{}, fmt.Errorf("refusing %s: %w; remove it (the daemon that keeps the state directory writes it again when it starts)", path, err)
	}
	return k, nil
}

// WriteKeeper writes the file KeeperName in stateDir as a whole (see
// WriteFile): what a daemon that holds the state directory's lock says
// of itself.
func WriteKeeper(stateDir string, k Keeper) error {
	b, err := json.Marshal(k)
	if err != nil {
		return err
	}
	return WriteFile(filepath.Join(stateDir, KeeperName), append(b, '\n'))
}

// Answers reports whether the daemon k names listens at its socket: a
// process of the user's with k's pid (not this one) accepts a connection
// there. It is what tells a live daemon from a file a dead one left.
func (k Keeper) Answers() bool {
	if k.PID == os.Getpid() || CheckSocket(k.Socket) != nil {
		return false
	}
	c, err := net.DialTimeout("unix", k.Socket, 2*time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	uid, pid, err := Peer(c.(*net.UnixConn))
	return err == nil && uid == os.Getuid() && pid == k.PID
}

// CheckSocket checks, without following a symlink, that path is a unix
// socket owned by the user in a private directory: the checks a client
// makes before it connects where a file on disk told it to.
func CheckSocket(path string) error {
	if err := CheckPrivateDir(filepath.Dir(path)); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return unsafe("refusing %s: it is not a socket", path)
	}
	if int(st.Uid) != os.Getuid() {
		return unsafe("refusing %s: it is owned by uid %d, not by you (uid %d)", path, st.Uid, os.Getuid())
	}
	return nil
}
