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
// of its own; should the disk refuse, they are held in memory after all,
// in order.
type segment struct {
	dir, pattern string // where its spool file is made, and its name

	mem   []byte   // the first bytes
	f     *os.File // then these, spooled
	fileN int64    // bytes in f
	after []byte   // then these, if the spool file failed
	n     int64    // bytes in all
	err   error    // why the spool failed, once it has
}

func (s *segment) write(p []byte) {
	s.n += int64(len(p))
	switch {
	case s.err != nil:
		s.after = append(s.after, p...)
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

// fail keeps p, and all that follows, in memory: the spool is not
// written to again.
func (s *segment) fail(err error, p []byte) {
	s.err = err
	log.Printf("%v; keeping it in memory instead", err)
	s.after = append(s.after, p...)
}

// replay passes the whole segment to send, in order, in pieces of at
// most outputChunk.
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
	return sendChunks(s.after, send)
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
