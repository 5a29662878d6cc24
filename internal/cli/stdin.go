package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Reading code and answers from standard input ("-"): what was given
// reaches the cell exactly, or nothing does and the refusal names the
// limit and the real size. Never a prefix cut at the limit.

// maxCounted bounds how much of an over-long standard input is read
// through to say its size: past it, the size is "more than" that (a
// never-ending pipe is not waited for forever).
const maxCounted = 1 << 30

// tooLong is standard input over its limit: Size bytes, or more than
// that if Over.
type tooLong struct {
	What  string // "the code", "the answer"
	Size  int64
	Over  bool
	Limit int
}

func (t *tooLong) Error() string {
	size := fmt.Sprintf("%d bytes", t.Size)
	if t.Over {
		size = fmt.Sprintf("more than %d bytes", t.Size)
	}
	return fmt.Sprintf("%s on standard input is %s; the limit is %d bytes (2 MiB); nothing was sent", t.What, size, t.Limit)
}

// readAll reads r to its end, refusing more than limit bytes with the
// real size (counted up to maxCounted).
func readAll(r io.Reader, limit int, what string) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return "", err
	}
	if len(b) <= limit {
		return string(b), nil
	}
	rest, err := io.Copy(io.Discard, io.LimitReader(r, maxCounted-int64(len(b))+1))
	if err != nil {
		return "", err
	}
	t := &tooLong{What: what, Size: int64(len(b)) + rest, Limit: limit}
	if t.Size > maxCounted {
		t.Size, t.Over = maxCounted, true
	}
	return "", t
}

// readLine reads the first line of r, without its line end, refusing a
// line of more than limit bytes with its real length (counted up to
// maxCounted). What follows the line is left unread.
func readLine(r io.Reader, limit int, what string) (string, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	var n int64
	for {
		chunk, err := br.ReadSlice('\n')
		end := err == nil
		if end {
			chunk = chunk[:len(chunk)-1]
		}
		n += int64(len(chunk))
		if room := limit + 1 - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		switch {
		case end, errors.Is(err, io.EOF):
		case errors.Is(err, bufio.ErrBufferFull):
			if n <= maxCounted {
				continue
			}
		default:
			return "", err
		}
		if n > int64(limit) {
			t := &tooLong{What: what, Size: n, Limit: limit}
			if !end && !errors.Is(err, io.EOF) {
				t.Size, t.Over = maxCounted, true
			}
			return "", t
		}
		return string(line), nil
	}
}

// readStdin reads code (whole) or an answer (its first line) from
// standard input, or says why not; the int is the exit status when it
// failed.
func (e *env) readStdin(line bool, what string) (string, int) {
	var s string
	var err error
	if line {
		s, err = readLine(e.stdin, api.MaxAnswerBytes, what)
	} else {
		s, err = readAll(e.stdin, api.MaxCodeBytes, what)
	}
	if err == nil {
		return s, 0
	}
	var t *tooLong
	if !errors.As(err, &t) {
		e.errorf("cannot read %s from standard input: %v", what, err)
		return "", ExitUsage
	}
	hint := "put the data in a file and read it from the cell"
	if e.json {
		printJSON(e.stdout, api.ErrorReply{Error: t.Error(), Code: api.CodeBadRequest, Hint: hint})
		return "", ExitUsage
	}
	e.errorf("%v", t)
	e.hintf("%s", hint)
	return "", ExitUsage
}
