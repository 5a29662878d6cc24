package terminal

import (
	"bytes"
	"strings"

	"github.com/polyrepl/polyrepl/internal/driver"
)

// maxKind bounds what may follow a mark's prefix on its line; longer, it
// is not a mark but the nonce printed by a cell.
const maxKind = 32

// splitter splits a REPL's stream at marks across reads: what lies between
// marks goes to take, each mark's kind to mark, in order, whatever the
// reads' boundaries. Where the REPL prints a prompt it cannot be made to
// drop, one prompt right before a mark and one right after are removed;
// a prompt at the end of a read is held back only while hold says a mark
// may follow.
type splitter struct {
	prefix, prompt []byte
	hold           func() bool

	carry, work []byte
	afterMark   bool // a prompt here follows a mark: drop it
}

// feed passes on one read's data; eof says it is the last.
func (s *splitter) feed(data []byte, eof bool, take func([]byte), mark func(kind string)) {
	if len(s.carry) > 0 {
		s.work = append(append(s.work[:0], s.carry...), data...)
		data, s.carry = s.work, s.carry[:0]
	}
	for len(data) > 0 {
		if len(s.prompt) > 0 && s.afterMark {
			if bytes.HasPrefix(data, s.prompt) {
				data = data[len(s.prompt):]
			} else if len(data) < len(s.prompt) && bytes.HasPrefix(s.prompt, data) && !eof {
				s.carry = append(s.carry[:0], data...)
				break
			}
			s.afterMark = false
		}
		i := bytes.Index(data, s.prefix)
		if i < 0 {
			k := s.held(data)
			if eof {
				k = 0
			}
			give(take, data[:len(data)-k])
			s.carry = append(s.carry[:0], data[len(data)-k:]...)
			break
		}
		rest := data[i+len(s.prefix):]
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 && len(rest) <= maxKind && !eof {
			// Maybe a mark: wait for its line, with the prompt before it.
			j := i
			if len(s.prompt) > 0 && bytes.HasSuffix(data[:i], s.prompt) {
				j -= len(s.prompt)
			}
			give(take, data[:j])
			s.carry = append(s.carry[:0], data[j:]...)
			break
		}
		if nl < 0 || nl > maxKind {
			give(take, data[:i+len(s.prefix)])
			data = rest
			continue
		}
		before := data[:i]
		if len(s.prompt) > 0 {
			before = bytes.TrimSuffix(before, s.prompt)
		}
		give(take, before)
		mark(string(bytes.TrimSuffix(rest[:nl], []byte("\r"))))
		data = rest[nl+1:]
		s.afterMark = true
	}
	if eof && len(s.carry) > 0 {
		give(take, s.carry)
		s.carry = s.carry[:0]
	}
}

func give(take func([]byte), b []byte) {
	if len(b) > 0 {
		take(b)
	}
}

// held is how many bytes at the end of data to hold back for the next
// read: the start of a mark's prefix, and before it a prompt, or the start
// of a prompt, that a mark could follow.
func (s *splitter) held(data []byte) int {
	k := driver.HeldBack(data, s.prefix)
	if len(s.prompt) == 0 || s.hold == nil || !s.hold() {
		return k
	}
	if bytes.HasSuffix(data[:len(data)-k], s.prompt) {
		return k + len(s.prompt)
	}
	if k == 0 {
		return driver.HeldBack(data, s.prompt)
	}
	return k
}

// SingleQuoted makes s a single-quoted string in the languages that double
// a quote inside one (Octave, MATLAB, gnuplot).
func SingleQuoted(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
