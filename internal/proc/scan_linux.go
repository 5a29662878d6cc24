package proc

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// scan reads stat for every process in /proc, in one pass. When key is a
// cookie's key ("KEY=", see cookieKey) it also reads the environment of
// every live process owned by our effective uid and keeps its entries
// under key as the process's tags. Processes that vanish during the scan
// are skipped.
func scan(key string) ([]entry, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("open /proc: %w (is procfs mounted?)", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list /proc: %w (is procfs mounted?)", err)
	}
	s := scanner{euid: uint32(os.Geteuid()), key: []byte(key)}
	es := make([]entry, 0, len(names))
	for _, name := range names {
		if name == "" || name[0] < '1' || name[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		e, ok := s.read(pid, name)
		if ok {
			es = append(es, e)
		}
	}
	return es, nil
}

// scanner holds the buffers reused across the processes of one scan.
type scanner struct {
	euid uint32
	key  []byte
	buf  []byte
	env  []byte
}

// read reads one process; ok is false when it vanished or is unreadable.
func (s *scanner) read(pid int, name string) (e entry, ok bool) {
	var err error
	if len(s.key) == 0 {
		e.stat, s.buf, err = readStat(unix.AT_FDCWD, "/proc/"+name+"/stat", s.buf)
		return e, err == nil && e.pid == pid
	}
	// Read stat and environ through one directory fd, which stays bound to
	// the process it was opened for: if the pid is reused meanwhile, reads
	// fail instead of mixing two processes.
	dfd, err := unix.Open("/proc/"+name, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return e, false
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstat(dfd, &st); err != nil {
		return e, false
	}
	e.stat, s.buf, err = readStat(dfd, "stat", s.buf)
	if err != nil || e.pid != pid {
		return e, false
	}
	if st.Uid == s.euid && !e.zombie() {
		s.env, err = readFileAt(dfd, "environ", s.env)
		if err == nil {
			e.tags = entriesUnder(s.env, s.key)
		}
	}
	return e, true
}
