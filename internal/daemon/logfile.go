package daemon

import (
	"log"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/paths"
)

// logMax is the size at which daemon.log is moved to daemon.log.1 (one
// old log is kept), so that a daemon left running for months, or many
// daemons in turn, never fill the disk with it.
const logMax = 4 << 20

// keepLogSmall rotates the daemon log as the daemon writes to it, when
// its standard error is that log (as a client starts it); a daemon run in
// the foreground logs to whatever its standard error is, untouched.
func keepLogSmall(socketDir string) {
	path := filepath.Join(socketDir, paths.LogName)
	var errSt, logSt unix.Stat_t
	if unix.Fstat(2, &errSt) != nil || unix.Stat(path, &logSt) != nil || errSt.Dev != logSt.Dev || errSt.Ino != logSt.Ino {
		return
	}
	log.SetOutput(&logFile{path: path, fd: 2, size: logSt.Size})
}

// logFile writes log lines to fd, the open log at path, and starts a new
// log when it would grow past logMax. The new file takes fd's number, so
// that what the Go runtime writes to standard error (a panic) lands there
// too.
type logFile struct {
	mu   sync.Mutex
	path string
	fd   int
	size int64
}

func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size+int64(len(p)) > logMax {
		l.rotate()
	}
	n, err := unix.Write(l.fd, p)
	l.size += int64(max(n, 0))
	return n, err
}

// rotate moves the log aside and opens a new one in its place. On failure
// the log goes on growing: losing log lines would be worse.
func (l *logFile) rotate() {
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		return
	}
	f, err := paths.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return
	}
	defer f.Close()
	if unix.Dup2(int(f.Fd()), l.fd) == nil {
		l.size = 0
	}
}
