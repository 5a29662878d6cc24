package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainLimit bounds how long the end of the input waits for answers: the
// longest a call can wait (a timeout of 600 s), and a margin.
const drainLimit = 11 * time.Minute

// Stdio is the transport of `polyrepl mcp`: JSON-RPC lines on in and out,
// where the end of in does not cut off the answers. A client that writes
// its requests and closes its end of the pipe — a script, a one-shot
// inspector call — still gets an answer to each: at the end of the input
// the server waits until every request it read has been answered (at most
// drainLimit) before it sees the end.
func Stdio(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
	p := &pending{idle: make(chan struct{})}
	close(p.idle)
	return &mcp.IOTransport{Reader: &drainReader{r: in, p: p}, Writer: &answerWriter{w: out, p: p}}
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

// lines calls fn with each whole line passing through, across writes.
type lines struct{ partial []byte }

func (l *lines) feed(b []byte, fn func(line []byte)) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.partial = append(l.partial, b...)
			return
		}
		line := b[:i]
		if len(l.partial) > 0 {
			line = append(l.partial, line...)
		}
		fn(line)
		l.partial = l.partial[:0]
		b = b[i+1:]
	}
}

// message is what telling requests from answers takes of a line.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func parse(line []byte) (m message, ok bool) {
	return m, json.Unmarshal(line, &m) == nil
}

// drainReader passes the input on, counting the requests in it, and
// holds back its end until they are answered.
type drainReader struct {
	r     io.ReadCloser
	p     *pending
	lines lines
}

func (d *drainReader) Read(b []byte) (int, error) {
	n, err := d.r.Read(b)
	d.lines.feed(b[:n], func(line []byte) {
		if m, ok := parse(line); ok && len(m.ID) > 0 && string(m.ID) != "null" && m.Method != "" {
			d.p.add()
		}
	})
	if err == io.EOF {
		// An answer is counted once written, so when none is pending
		// every answer has left.
		d.p.waitIdle(drainLimit)
	}
	return n, err
}

func (d *drainReader) Close() error { return d.r.Close() }

// answerWriter passes the output on, counting the answers in it.
type answerWriter struct {
	mu    sync.Mutex // the SDK writes one message at a time; this makes sure
	w     io.WriteCloser
	p     *pending
	lines lines
}

func (a *answerWriter) Write(b []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, err := a.w.Write(b)
	a.lines.feed(b[:n], func(line []byte) {
		if m, ok := parse(line); ok && len(m.ID) > 0 && m.Method == "" {
			a.p.done()
		}
	})
	return n, err
}

func (a *answerWriter) Close() error { return a.w.Close() }
