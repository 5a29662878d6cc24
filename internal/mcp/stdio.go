package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainLimit bounds how long the end of the input waits for answers: the
// longest a call can wait (a timeout of 600 s), and a margin.
const drainLimit = 11 * time.Minute

// maxLine bounds one message on stdin, as the SDK's transport does.
const maxLine = mcp.DefaultMaxLineLength

// Stdio is the transport of `polyrepl mcp`: JSON-RPC lines on in and out,
// with a guard on each line in front of the SDK, so that
//
//   - a line that is not a JSON object gets a JSON-RPC error (-32700 Parse
//     error, -32600 Invalid Request) and the server goes on, rather than
//     ending with every call in flight unanswered;
//   - the end of in does not cut off the answers: a client that writes its
//     requests and closes its end of the pipe — a script, a one-shot
//     inspector call — gets an answer to each, since at the end of the
//     input the server waits until every request it read is answered (at
//     most drainLimit) before it sees the end.
func Stdio(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
	p := &pending{idle: make(chan struct{})}
	close(p.idle)
	w := &answerWriter{w: out, p: p}
	return &mcp.IOTransport{Reader: &lineGuard{br: bufio.NewReader(in), in: in, p: p, out: w}, Writer: w, MaxLineLength: -1}
}

// pending counts the requests read and not yet answered.
type pending struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed while n is 0
}

func (p *pending) add() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		p.idle = make(chan struct{})
	}
	p.n++
}

func (p *pending) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		return
	}
	if p.n--; p.n == 0 {
		close(p.idle)
	}
}

func (p *pending) waitIdle(limit time.Duration) {
	p.mu.Lock()
	idle := p.idle
	p.mu.Unlock()
	select {
	case <-idle:
	case <-time.After(limit):
	}
}

// message is what telling requests from answers takes of a line.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// hasID says whether m carries an id that an answer can name.
func (m message) hasID() bool { return hasID(m.ID) }

func hasID(id json.RawMessage) bool { return len(id) > 0 && string(id) != "null" }

// outgoing is what counting answers takes of the server's own lines: not
// their result, which can be long and is only skipped over.
type outgoing struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// lineGuard hands the SDK one well-formed message per line, answers what
// is not one itself, counts the requests, and holds back the end of the
// input until they are answered.
type lineGuard struct {
	br  *bufio.Reader
	in  io.Closer
	p   *pending
	out *answerWriter
	buf []byte // what is left of the current line for the SDK
	eof bool
}

func (g *lineGuard) Read(b []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.eof {
			// An answer is counted once written, so when none is pending
			// every answer has left.
			g.p.waitIdle(drainLimit)
			return 0, io.EOF
		}
		line, err := readLine(g.br)
		switch {
		case errors.Is(err, io.EOF):
			g.eof = true
		case errors.Is(err, errLineTooLong):
			g.out.refuse(-32700, fmt.Sprintf("Parse error: a message over %d bytes", maxLine))
			continue
		case err != nil:
			return 0, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var m message
		if line[0] != '{' {
			if json.Valid(line) {
				g.out.refuse(-32600, "Invalid Request: a message is one JSON object per line")
			} else {
				g.out.refuse(-32700, "Parse error: the line is not JSON")
			}
			continue
		}
		if err := json.Unmarshal(line, &m); err != nil {
			g.out.refuse(-32700, "Parse error: "+err.Error())
			continue
		}
		switch {
		case m.JSONRPC != "2.0":
			g.out.refuseID(m.ID, -32600, `Invalid Request: "jsonrpc" must be "2.0"`)
			continue
		case m.Method == "" && (!m.hasID() || (m.Result == nil && m.Error == nil)):
			g.out.refuseID(m.ID, -32600, `Invalid Request: a message has a "method", or an "id" and a "result" or "error"`)
			continue
		}
		if m.hasID() && m.Method != "" {
			g.p.add()
		}
		g.buf = append(line, '\n')
	}
	n := copy(b, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

func (g *lineGuard) Close() error { return g.in.Close() }

var errLineTooLong = errors.New("line too long")

// readLine reads one line, without its newline. A line over maxLine is
// read to its end and dropped, with errLineTooLong.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			line = nil
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimSuffix(line, []byte("\n")), err
		}
	}
}

// answerWriter passes the output on, counting the answers in it.
type answerWriter struct {
	mu      sync.Mutex // the SDK and the guard both write, a message at a time
	w       io.WriteCloser
	p       *pending
	partial []byte
}

func (a *answerWriter) Write(b []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, err := a.w.Write(b)
	rest := b[:n]
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			a.partial = append(a.partial, rest...)
			break
		}
		line := rest[:i]
		if len(a.partial) > 0 {
			line = append(a.partial, line...)
		}
		var m outgoing
		if json.Unmarshal(line, &m) == nil && hasID(m.ID) && m.Method == "" {
			a.p.done()
		}
		a.partial = a.partial[:0]
		rest = rest[i+1:]
	}
	return n, err
}

// refuse answers a line that is no message, as JSON-RPC asks: an error
// with a null id, since none could be read.
func (a *answerWriter) refuse(code int, msg string) { a.refuseID(nil, code, msg) }

// refuseID answers a malformed message that carried id (nil: none).
func (a *answerWriter) refuseID(id json.RawMessage, code int, msg string) {
	var idv any
	if len(id) > 0 && json.Valid(id) {
		idv = id
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": idv, "error": map[string]any{"code": code, "message": msg}})
	// Not counted as an answer: the message it answers was never counted.
	a.mu.Lock()
	defer a.mu.Unlock()
	a.w.Write(append(b, '\n'))
}

func (a *answerWriter) Close() error { return a.w.Close() }
