package jupyter

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// streamText reads a stream message's content — a JSON object — from r
// and passes the text of its "text" member to emit, unescaped, in pieces
// of at most streamPiece bytes as it reads them, so that a message of
// any size costs one piece of memory. Other members are skipped. emit's
// argument is valid only during the call.
func streamText(r io.Reader, emit func([]byte)) error {
	s := &textScanner{r: bufio.NewReaderSize(r, 64<<10), emit: emit}
	return s.object()
}

type textScanner struct {
	r    *bufio.Reader
	emit func([]byte)
	buf  []byte
}

var errNotStream = errors.New("a stream message's content is not a JSON object")

func (s *textScanner) next() (byte, error) {
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			return 0, fmt.Errorf("%w: %v", errNotStream, err)
		}
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return b, nil
	}
}

func (s *textScanner) object() error {
	b, err := s.next()
	if err != nil {
		return err
	}
	if b != '{' {
		return errNotStream
	}
	for first := true; ; first = false {
		b, err := s.next()
		if err != nil {
			return err
		}
		if b == '}' && first {
			return nil
		}
		if b != '"' {
			return errNotStream
		}
		key, err := s.key()
		if err != nil {
			return err
		}
		if b, err = s.next(); err != nil || b != ':' {
			return errNotStream
		}
		if b, err = s.next(); err != nil {
			return err
		}
		if key == "text" && b == '"' {
			err = s.str(true)
		} else {
			err = s.skip(b)
		}
		if err != nil {
			return err
		}
		switch b, err = s.next(); {
		case err != nil:
			return err
		case b == '}':
			return nil
		case b != ',':
			return errNotStream
		}
	}
}

// key reads a member's name after its opening quote; a long one is read
// to its end and kept only in part (it is not "text").
func (s *textScanner) key() (string, error) {
	s.buf = s.buf[:0]
	if err := s.str(false); err != nil {
		return "", err
	}
	return string(s.buf), nil
}

// str reads a string after its opening quote: passed to emit in pieces
// if out, else kept in s.buf up to 64 bytes.
func (s *textScanner) str(out bool) error {
	s.buf = s.buf[:0]
	add := func(p ...byte) {
		if out || len(s.buf) < 64 {
			s.buf = append(s.buf, p...)
		}
		if out && len(s.buf) >= streamPiece {
			s.emit(s.buf)
			s.buf = s.buf[:0]
		}
	}
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			return fmt.Errorf("%w: %v", errNotStream, err)
		}
		switch b {
		case '"':
			if out && len(s.buf) > 0 {
				s.emit(s.buf)
				s.buf = s.buf[:0]
			}
			return nil
		case '\\':
		default:
			add(b)
			continue
		}
		e, err := s.r.ReadByte()
		if err != nil {
			return fmt.Errorf("%w: %v", errNotStream, err)
		}
		switch e {
		case '"', '\\', '/':
			add(e)
		case 'b':
			add('\b')
		case 'f':
			add('\f')
		case 'n':
			add('\n')
		case 'r':
			add('\r')
		case 't':
			add('\t')
		case 'u':
			r, err := s.hex4()
			if err != nil {
				return err
			}
			if utf16.IsSurrogate(r) {
				// A pair is two escapes; a lone half is U+FFFD, as
				// encoding/json makes it.
				if p, _ := s.r.Peek(2); len(p) == 2 && p[0] == '\\' && p[1] == 'u' {
					if q, _ := s.r.Peek(6); len(q) == 6 {
						if r2, ok := hex4(q[2:]); ok {
							if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
								s.r.Discard(6)
								r = d
							}
						}
					}
				}
				if utf16.IsSurrogate(r) {
					r = utf8.RuneError
				}
			}
			add(utf8.AppendRune(nil, r)...)
		default:
			return errNotStream
		}
	}
}

func (s *textScanner) hex4() (rune, error) {
	var q [4]byte
	if _, err := io.ReadFull(s.r, q[:]); err != nil {
		return 0, fmt.Errorf("%w: %v", errNotStream, err)
	}
	r, ok := hex4(q[:])
	if !ok {
		return 0, errNotStream
	}
	return r, nil
}

func hex4(q []byte) (rune, bool) {
	var r rune
	for _, c := range q {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// skip reads past a value that starts with b.
func (s *textScanner) skip(b byte) error {
	switch b {
	case '"':
		return s.str(false)
	case '{', '[':
		depth := 1
		for depth > 0 {
			c, err := s.r.ReadByte()
			if err != nil {
				return fmt.Errorf("%w: %v", errNotStream, err)
			}
			switch c {
			case '"':
				if err := s.str(false); err != nil {
					return err
				}
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
		}
		return nil
	}
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return fmt.Errorf("%w: %v", errNotStream, err)
		}
		switch c {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			s.r.UnreadByte()
			return nil
		}
	}
}
