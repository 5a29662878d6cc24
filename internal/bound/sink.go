package bound

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// spoolBuffer is the size of the buffer in front of a spool file, so many
// small prints do not each cost a system call. Writes at least this large go
// straight to the file.
const spoolBuffer = 64 << 10

// Sink accumulates one stream of output (a cell's output not yet delivered
// to any reply) in bounded memory. While the stream fits in limit runes it is
// held whole in memory; once it exceeds that, Sink opens a spool file
// (created with os.CreateTemp(dir, pattern) mode 0600 via the create func),
// writes everything so far and every later byte to it, and keeps in memory
// only the head (first limit/2 runes) and a tail ring (last limit - limit/2
// runes, plus up to 3 bytes slack so a rune split across the ring start can
// be dropped cleanly). Memory stays O(limit) however much is written.
//
// Runes are counted incrementally, eight bytes at a time without decoding:
// exactly for valid UTF-8, and for invalid bytes never fewer than
// strings.ToValidUTF8 would produce, so the bound holds for any input (Total
// may then count a run of invalid bytes as more than one character).
//
// A Sink is not safe for concurrent use: the caller serializes Write, Len,
// Take and Close (the session holds a lock around its output).
type Sink struct {
	limit      int
	head, tail int // limit split as HeadTail splits it
	dir        string
	pattern    string
	create     func(dir, pattern string) (*os.File, error)

	// Current segment (everything since the last Take).
	n       int64   // bytes written
	chars   counter // characters written, counted up to counted bytes of buf while in memory
	counted int     // bytes of buf already fed to chars (only before spilling)
	buf     []byte  // the whole segment while it fits; the head once spilled
	spilled bool    // the segment outgrew limit: buf is the head, ring the tail

	ring     []byte // last len(ring) bytes after the head, circular; kept across segments
	ringPos  int    // where the next byte goes in ring
	ringSeen int64  // bytes pushed into ring this segment

	file *os.File      // open spool file of this segment, if any
	w    *bufio.Writer // buffer in front of file; kept across segments
	path string        // spool file of this segment, if one was created
	err  error         // why the segment could not be saved whole, if it could not
	shut bool          // Close was called: open no more spool files
}

// NewSink makes a sink, one per output stream that replies deliver; dir and
// pattern say where a spool file goes if one is needed (the directory is
// created 0700 by the caller, not by Sink). A limit below zero counts as zero.
func NewSink(limit int, dir, pattern string) *Sink {
	limit = max(limit, 0)
	h, t := split(limit)
	return &Sink{
		limit:   limit,
		head:    h,
		tail:    t,
		dir:     dir,
		pattern: pattern,
		create:  os.CreateTemp,
	}
}

// Write appends raw bytes (never fails for the caller: a spool file error is
// remembered and reported by Take; the in-memory head/tail keep working), so
// a runtime's output is never blocked or lost because of the disk.
func (s *Sink) Write(p []byte) (int, error) {
	if s.spilled {
		s.n += int64(len(p))
		s.chars.add(p)
		s.save(p)
		s.push(p)
		return len(p), nil
	}
	if len(s.buf)+len(p) <= s.limit {
		// At most limit bytes is at most limit characters: no need to
		// count yet. This is the common case.
		s.buf = append(s.buf, p...)
		s.n += int64(len(p))
		return len(p), nil
	}
	if s.counted < len(s.buf) {
		s.chars.add(s.buf[s.counted:])
		s.counted = len(s.buf)
	}
	s.chars.add(p)
	s.n += int64(len(p))
	if s.chars.n <= int64(s.limit) {
		// Still fits. The counter's rule bounds a character to at most
		// 4 bytes, so buf stays under 4*limit bytes.
		s.buf = append(s.buf, p...)
		s.counted = len(s.buf)
		return len(p), nil
	}
	s.spill(p)
	return len(p), nil
}

// spill moves the segment (buf, then p) from memory to a spool file, the
// head and the tail ring.
func (s *Sink) spill(p []byte) {
	s.spilled = true
	if s.shut {
		s.err = errors.New("save whole output: the sink was closed, so no spool file was created; " +
			"only the head and tail are kept (take output before closing the sink)")
	} else if f, err := s.create(s.dir, s.pattern); err != nil {
		s.err = fmt.Errorf("save whole output: create spool file in %s: %w; "+
			"only the head and tail are kept (check that the directory exists and is writable)", s.dir, err)
	} else {
		s.file, s.path = f, f.Name()
		if s.w == nil {
			s.w = bufio.NewWriterSize(f, spoolBuffer)
		} else {
			s.w.Reset(f)
		}
		s.save(s.buf)
		s.save(p)
	}

	end, _ := headEnd(s.buf, p, s.head)
	if s.ring == nil {
		s.ring = make([]byte, utf8.UTFMax*s.tail+utf8.UTFMax-1)
	}
	s.ringPos, s.ringSeen = 0, 0
	if end <= len(s.buf) {
		s.push(s.buf[end:])
		s.push(p)
		s.buf = s.buf[:end]
	} else {
		k := end - len(s.buf)
		s.buf = append(s.buf, p[:k]...)
		s.push(p[k:])
	}
	s.counted = 0
}

// save writes p to the spool file; on the first failure it gives the file up
// (closed and removed, since no reply will point at it) and remembers why.
func (s *Sink) save(p []byte) {
	if s.file == nil {
		if s.err == nil && s.path != "" {
			s.err = fmt.Errorf("save whole output: spool file %s was closed by Close before all output was written; "+
				"only the head and tail are complete (take output before closing the sink)", s.path)
		}
		return
	}
	if _, err := s.w.Write(p); err != nil {
		s.fail("write", err)
	}
}

// fail abandons the spool file after op failed with err.
func (s *Sink) fail(op string, err error) {
	s.err = fmt.Errorf("save whole output: %s spool file %s: %w; "+
		"only the head and tail are kept (check free space and permissions in %s)", op, s.path, err, s.dir)
	if s.file != nil {
		s.file.Close()
	}
	os.Remove(s.path)
	s.file, s.path = nil, ""
	s.w.Reset(nil)
}

// push appends p to the tail ring, overwriting the oldest bytes.
func (s *Sink) push(p []byte) {
	r := s.ring
	s.ringSeen += int64(len(p))
	if len(p) >= len(r) {
		copy(r, p[len(p)-len(r):])
		s.ringPos = 0
		return
	}
	n := copy(r[s.ringPos:], p)
	if n < len(p) {
		copy(r, p[n:])
	}
	s.ringPos += len(p)
	if s.ringPos >= len(r) {
		s.ringPos -= len(r)
	}
}

// ringBytes returns a copy of the bytes in the ring, oldest first, and
// whether older bytes were overwritten (so the first ones may be the end of
// a split rune).
func (s *Sink) ringBytes() ([]byte, bool) {
	r := s.ring
	if s.ringSeen <= int64(len(r)) {
		return append([]byte(nil), r[:s.ringSeen]...), false
	}
	out := make([]byte, 0, len(r))
	out = append(out, r[s.ringPos:]...)
	out = append(out, r[:s.ringPos]...)
	return out, true
}

// Len is the number of bytes written since the last Take, so the caller can
// tell whether there is anything to deliver without taking it.
func (s *Sink) Len() int64 {
	return s.n
}

// Take returns the text accumulated since the last Take, bounded: whole if it
// fits in limit runes, else head + marker + tail with a Cut whose File is the
// spool file path (closed, not fsynced: it is readable at once, and syncing
// 100 MB would stall the reply; the file has the
// complete raw bytes of this segment). It then resets the sink: the next
// segment starts empty in memory with no file. If the spool file could not be
// written, the Cut's File is "" and err says what could not be saved and why
// (the text returned is still valid and bounded). This is how a reply gets
// its output without ever growing past the bound or losing the rest.
func (s *Sink) Take() (text string, cut *Cut, err error) {
	defer s.reset()
	if !s.spilled {
		// The counter's count is never below the valid text's rune
		// count, so this fits too.
		if utf8.Valid(s.buf) {
			return string(s.buf), nil, nil
		}
		return strings.ToValidUTF8(string(s.buf), replacement), nil, nil
	}
	if s.file != nil {
		if ferr := s.w.Flush(); ferr != nil {
			s.fail("write", ferr)
		} else if ferr := s.file.Close(); ferr != nil {
			s.file = nil // already closed, whatever the error
			s.fail("close", ferr)
		} else {
			s.file = nil
			s.w.Reset(nil)
		}
	}

	head := clampHead(strings.ToValidUTF8(string(s.buf), replacement), s.head)
	rb, wrapped := s.ringBytes()
	if wrapped {
		// Drop the end of a rune whose start was overwritten.
		for i := 0; i < utf8.UTFMax-1 && len(rb) > 0 && rb[0]&0xC0 == 0x80; i++ {
			rb = rb[1:]
		}
	}
	tail := clampTail(strings.ToValidUTF8(string(rb), replacement), s.tail)

	text, c := LineCut(head, tail, int(s.chars.n))
	if s.err == nil {
		c.File = s.path
	}
	return text, c, s.err
}

// reset starts a new, empty segment, keeping buffers for reuse.
func (s *Sink) reset() {
	s.n = 0
	s.chars = counter{}
	s.counted = 0
	s.buf = s.buf[:0]
	s.spilled = false
	s.ringPos, s.ringSeen = 0, 0
	s.file, s.path, s.err = nil, "", nil
}

// Close removes nothing; it closes an open spool file (used when a session
// dies), after writing out what is buffered, so the file holds everything
// written so far and no descriptor leaks. The sink still bounds output in
// memory afterwards but opens no more spool files.
func (s *Sink) Close() error {
	s.shut = true
	if s.file == nil {
		return nil
	}
	f := s.file
	err := s.w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	s.file = nil
	s.w.Reset(nil)
	if err != nil {
		err = fmt.Errorf("close spool file %s: %w; it may miss the last output (check free space in %s)", s.path, err, s.dir)
		if s.err == nil {
			s.err = err
		}
	}
	return err
}
