package proc

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// stat is what this package needs to know of one process: on Linux the
// part of /proc/PID/stat it reads, on macOS the same facts taken from the
// kernel's process table (kinfo_proc), with the state translated to the
// Linux letter (see bsdState) so that all decisions are made alike.
type stat struct {
	pid   int
	state byte
	ppid  int
	pgid  int
	start uint64
	// rss is the resident pages (field 24 on Linux) and rssOK whether
	// it was read: a scan's table gives every member's memory without
	// reading each process again. macOS reads memory per process.
	rss   uint64
	rssOK bool
}

// zombie reports whether the process has exited and waits to be reaped
// (Z) or is being torn down (X); such a process holds no resources worth
// measuring and can no longer act, so it is treated as gone.
func (s stat) zombie() bool { return s.state == 'Z' || s.state == 'X' }

// errStatFormat marks a /proc/PID/stat line this package cannot parse.
var errStatFormat = errors.New("malformed /proc stat line")

// parseStat parses one /proc/PID/stat line. The command name (field 2) is
// in parentheses and may itself contain spaces and ')', so the fields after
// it are located from the last ')' in the line.
func parseStat(line []byte) (stat, error) {
	var s stat
	open := bytes.IndexByte(line, '(')
	end := bytes.LastIndexByte(line, ')')
	if open <= 0 || end < open {
		return s, fmt.Errorf("find command name: %w", errStatFormat)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(line[:open])))
	if err != nil {
		return s, fmt.Errorf("parse pid: %w", errStatFormat)
	}
	s.pid = pid
	// Fields after the command name: field N (1-based, as in proc(5)) is
	// rest[N-3].
	rest := line[end+1:]
	for i := 3; i <= 24; i++ {
		rest = bytes.TrimLeft(rest, " ")
		n := bytes.IndexByte(rest, ' ')
		if n < 0 {
			n = len(rest)
		}
		f := bytes.TrimRight(rest[:n], "\n")
		rest = rest[n:]
		if len(f) == 0 && i > 22 {
			break // no resident pages: only memory is not known
		}
		if len(f) == 0 {
			return s, fmt.Errorf("field %d missing: %w", i, errStatFormat)
		}
		switch i {
		case 3:
			s.state = f[0]
		case 4:
			if s.ppid, err = atoi(f); err != nil {
				return s, fmt.Errorf("parse ppid: %w", err)
			}
		case 5:
			if s.pgid, err = atoi(f); err != nil {
				return s, fmt.Errorf("parse pgid: %w", err)
			}
		case 22:
			if s.start, err = strconv.ParseUint(string(f), 10, 64); err != nil {
				return s, fmt.Errorf("parse start time: %w", errStatFormat)
			}
		case 24:
			if n, err := atoi(f); err == nil && n >= 0 {
				s.rss, s.rssOK = uint64(n), true
			}
		}
	}
	return s, nil
}

// atoi parses a small decimal integer without allocating, because it runs
// for every process on every scan.
func atoi(b []byte) (int, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, errStatFormat
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errStatFormat
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}
