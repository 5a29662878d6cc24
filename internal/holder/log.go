package holder

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/paths"
)

// memKept is how much of one stretch of output a holder keeps in
// memory; past it the rest goes to a spool file, so that a cell printing
// gigabytes while no daemon listens costs the holder disk, not memory,
// and loses nothing.
const memKept = 1 << 20

// segment is one stretch of output a holder keeps: a cell's, from its
// start, or what was printed between cells.
//
// A cell's segment is the cell's output log, and its only copy: the
// first CellInMemory bytes are held in memory; past them the whole of it,
// from its first byte, goes to the file the daemon named (whole: the
// cell's whole-output file in the record), where the daemon reads any
// position of it, a reply's cut and the record's entry point, and which
// stays the record's once the cell ends. The stretch between cells holds
// its first memKept bytes in memory and spools the rest to a file of its
// own until a daemon has them.
//
// Should the disk refuse (full, or gone), what follows is not turned
// into memory: the last memKept bytes are kept in a ring, those before
// them are dropped and counted, and the replay says, where they were,
// how many were lost and why.
type segment struct {
	dir, pattern string // where a spool file is made, and its name
	// whole is the file a cell's log goes to ("": a spool file in dir),
	// and memMax how many bytes are held in memory before the file
	// begins.
	whole  string
	memMax int

	mem   []byte   // the first bytes; for a cell's log, dropped once in its file
	f     *os.File // then these, spooled (a cell's log: all of them)
	fileN int64    // bytes in f
	after ring     // then the last of these, if the spool file failed
	lost  int64    // bytes dropped between the spool and the ring
	n     int64    // bytes in all
	err   error    // why the spool failed, once it has
}

// CellInMemory is how much of a cell's output its holder holds in memory
// before the cell's whole-output file begins (the daemon holds the same
// bytes, and reads the file past them). It is the record's bound on an
// entry's output: the file exists whenever the entry is cut.
const CellInMemory = api.EntryOutputLimit

// cellLog is a new cell's segment, written to the file whole (or, for a
// daemon that names none, a spool file in dir).
func cellLog(dir, pattern, whole string) segment {
	return segment{dir: dir, pattern: pattern, whole: whole, memMax: CellInMemory}
}

// idleLog is the segment of output printed between cells.
func idleLog(dir, pattern string) segment {
	return segment{dir: dir, pattern: pattern, memMax: memKept}
}

// readable is how much of a cell's log can be read whole: from its
// file, or, if that was never made, from the first bytes everyone holds.
func (s *segment) readable() int64 {
	if s.f == nil {
		return int64(len(s.mem))
	}
	return s.fileN
}

// spilled reports whether the daemon reads the cell's log from its file
// (up to fileN, if it failed).
func (s *segment) spilled() bool { return s.whole != "" && s.f != nil }

func (s *segment) write(p []byte) {
	s.n += int64(len(p))
	switch {
	case s.err != nil:
		s.keep(p)
		return
	case s.f == nil && len(s.mem)+len(p) <= s.memMax:
		s.mem = append(s.mem, p...)
		return
	case s.f == nil && s.whole != "":
		// A cell's log: the whole of it goes to its file, and memory
		// holds none of it from now on.
		f, err := openWhole(s.whole)
		if err != nil {
			s.fail(fmt.Errorf("cannot write the cell's output to %s: %w", s.whole, err), p)
			return
		}
		s.f = f
		if len(s.mem) > 0 {
			n, err := f.Write(s.mem)
			s.fileN += int64(n)
			if err != nil {
				rest := append(s.mem[n:len(s.mem):len(s.mem)], p...)
				s.mem = nil // what of it the file has, it keeps; the rest is in the ring
				s.fail(fmt.Errorf("cannot write the cell's output to %s: %w", s.whole, err), rest)
				return
			}
			s.mem = nil
		}
	case s.f == nil:
		room := s.memMax - len(s.mem)
		s.mem = append(s.mem, p[:room]...)
		p = p[room:]
		f, err := os.CreateTemp(s.dir, s.pattern) // 0600
		if err != nil {
			s.fail(fmt.Errorf("cannot spool output: %w", err), p)
			return
		}
		s.f = f
	}
	n, err := s.f.Write(p)
	s.fileN += int64(n)
	if err != nil {
		s.fail(fmt.Errorf("cannot spool output to %s: %w", s.f.Name(), err), p[n:])
	}
}

// openWhole makes a cell's whole-output file, private to the user.
func openWhole(path string) (*os.File, error) {
	if err := paths.EnsurePrivateDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return paths.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
}

// fail keeps the last of p, and of all that follows, in the ring: the
// spool is not written to again.
func (s *segment) fail(err error, p []byte) {
	s.err = err
	log.Printf("%v; keeping the last %d bytes of what follows in memory, and counting the rest as lost", err, memKept)
	s.keep(p)
}

// keep puts p in the ring, counting what it pushes out as lost.
func (s *segment) keep(p []byte) {
	s.lost += s.after.write(p)
}

// lostNote is the line the replay puts where output was lost.
func (s *segment) lostNote() string {
	return fmt.Sprintf("\n[polyrepl: %d bytes of output were lost here: the session's holder could not keep them on disk (%v), and keeps at most %d bytes in memory]\n",
		s.lost, s.err, memKept)
}

// lostSaid says, for the cell's result, what was lost.
func (s *segment) lostSaid() string {
	return fmt.Sprintf("polyrepl lost %d bytes of this cell's output while no daemon was connected: the session's holder could not keep them on disk (%v); its output says where", s.lost, s.err)
}

// replay passes the whole segment to send, in order, in pieces of at
// most outputChunk; where output was lost, a line says so.
//
// A cell's log in its file is not sent: the daemon reads it there (up to
// fileN); what its file does not hold is.
func (s *segment) replay(send func([]byte) error) error {
	if err := sendChunks(s.mem, send); err != nil {
		return err
	}
	if s.f != nil && s.fileN > 0 && s.whole == "" {
		buf := make([]byte, min(outputChunk, s.fileN))
		r := io.NewSectionReader(s.f, 0, s.fileN)
		for {
			n, err := io.ReadFull(r, buf)
			if n > 0 {
				if err := send(buf[:n]); err != nil {
					return err
				}
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				break
			}
			if err != nil {
				return fmt.Errorf("cannot read back the spooled output: %w", err)
			}
		}
	}
	if s.lost > 0 {
		if err := send([]byte(s.lostNote())); err != nil {
			return err
		}
	}
	head, tail := s.after.parts()
	if err := sendChunks(head, send); err != nil {
		return err
	}
	return sendChunks(tail, send)
}

// ring keeps the last memKept bytes written to it.
type ring struct {
	buf  []byte // allocated on first use
	pos  int    // where the next byte goes
	full bool   // buf has wrapped: its bytes from pos on are the oldest
}

// write adds p, returning how many bytes it pushed out.
func (r *ring) write(p []byte) int64 {
	if r.buf == nil {
		r.buf = make([]byte, memKept)
	}
	var dropped int64
	if len(p) >= len(r.buf) {
		dropped = int64(len(p)-len(r.buf)) + int64(r.size())
		copy(r.buf, p[len(p)-len(r.buf):])
		r.pos, r.full = 0, true
		return dropped
	}
	if over := r.size() + len(p) - len(r.buf); over > 0 {
		dropped = int64(over)
	}
	n := copy(r.buf[r.pos:], p)
	if n < len(p) {
		copy(r.buf, p[n:])
		r.full = true
	}
	r.pos = (r.pos + len(p)) % len(r.buf)
	if r.pos == 0 && len(p) > 0 {
		r.full = true
	}
	return dropped
}

func (r *ring) size() int {
	if r.full {
		return len(r.buf)
	}
	return r.pos
}

// parts are the ring's bytes, oldest first, in two slices.
func (r *ring) parts() ([]byte, []byte) {
	if !r.full {
		return r.buf[:r.pos], nil
	}
	return r.buf[r.pos:], r.buf[:r.pos]
}

func sendChunks(b []byte, send func([]byte) error) error {
	for len(b) > 0 {
		n := min(len(b), outputChunk)
		if err := send(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// free lets go of the segment's output, removing its spool file; a
// cell's log file is the record's, and stays.
func (s *segment) free() {
	if s.f != nil {
		s.f.Close()
		if s.whole == "" {
			os.Remove(s.f.Name())
		}
	}
	*s = segment{dir: s.dir, pattern: s.pattern, whole: s.whole, memMax: s.memMax}
}
