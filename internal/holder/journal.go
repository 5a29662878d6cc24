package holder

import (
	"fmt"
	"io"
	"log"
	"os"
)

// memKept is how much of one stretch of output a holder keeps in
// memory; past it the rest goes to a spool file, so that a cell printing
// gigabytes while no daemon listens costs the holder disk, not memory,
// and loses nothing.
const memKept = 1 << 20

// segment is one stretch of output a holder keeps until a daemon has it
// for good: a cell's, from its start, or what was printed between cells.
// The first memKept bytes are held in memory, the rest in a spool file
// of its own. Should the disk refuse (full, or gone), what follows is
// not turned into memory: the last memKept bytes are kept in a ring,
// those before them are dropped and counted, and the replay says, where
// they were, how many were lost and why.
type segment struct {
	dir, pattern string // where its spool file is made, and its name

	mem   []byte   // the first bytes
	f     *os.File // then these, spooled
	fileN int64    // bytes in f
	after ring     // then the last of these, if the spool file failed
	lost  int64    // bytes dropped between the spool and the ring
	n     int64    // bytes in all
	err   error    // why the spool failed, once it has
}

func (s *segment) write(p []byte) {
	s.n += int64(len(p))
	switch {
	case s.err != nil:
		s.keep(p)
		return
	case s.f == nil && len(s.mem)+len(p) <= memKept:
		s.mem = append(s.mem, p...)
		return
	case s.f == nil:
		room := memKept - len(s.mem)
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
func (s *segment) replay(send func([]byte) error) error {
	if err := sendChunks(s.mem, send); err != nil {
		return err
	}
	if s.f != nil && s.fileN > 0 {
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

// free lets go of the segment's output, removing its spool file.
func (s *segment) free() {
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
	}
	*s = segment{dir: s.dir, pattern: s.pattern}
}
