package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/polyrepl/polyrepl/internal/api"
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
//   - a line the SDK would refuse — not JSON, not one object (a batch),
//     not "jsonrpc": "2.0", an id that is not a string, a number or null
//     (true, {}, []), a method that is not a string — gets a JSON-RPC
//     error (-32700 Parse error, -32600 Invalid Request) and the server
//     goes on: the SDK ends the connection at the first message it cannot
//     read, and with it every call in flight, unanswered;
//   - a request whose id is that of a request still in flight is refused
//     with an error naming the id (the SDK would drop it without an
//     answer), and an id is free again once its request is answered;
//   - the end of in does not cut off the answers: a client that writes its
//     requests and closes its end of the pipe — a script, a one-shot
//     inspector call — gets an answer to each, since at the end of the
//     input the server waits until every request in flight is answered
//     (at most drainLimit) before it sees the end; with none in flight it
//     ends at once.
func Stdio(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
	p := newPending()
	w := &answerWriter{w: out, p: p}
	return &mcp.IOTransport{Reader: &lineGuard{br: bufio.NewReader(in), in: in, p: p, out: w}, Writer: w, MaxLineLength: -1}
}

// pending holds the ids of the requests read and not yet answered. An
// id is free again as its answer is written, and the end of the input
// waits until that write is done.
type pending struct {
	mu      sync.Mutex
	ids     map[jsonrpc.ID]bool
	writing int           // answers being written
	idle    chan struct{} // closed while nothing is in flight or being written
	broken  bool          // the output failed: no answer will leave
}

func newPending() *pending {
	p := &pending{ids: map[jsonrpc.ID]bool{}, idle: make(chan struct{})}
	close(p.idle)
	return p
}

// busy says whether anything is in flight or being written; p.mu held.
func (p *pending) busy() bool { return len(p.ids) > 0 || p.writing > 0 }

// add counts a request in flight; false if its id is already in flight.
func (p *pending) add(id jsonrpc.ID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids[id] {
		return false
	}
	if !p.busy() && !p.broken {
		p.idle = make(chan struct{})
	}
	p.ids[id] = true
	return true
}

// answering frees the ids of answers about to be written.
func (p *pending) answering(ids []jsonrpc.ID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range ids {
		if p.ids[id] {
			delete(p.ids, id)
			p.writing++
		}
	}
}

// written counts the answers whose write is done (n of what answering
// freed), or the output broken.
func (p *pending) written(n int, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writing = max(0, p.writing-n)
	wasBusy := !p.broken
	if err != nil {
		p.broken = true
	}
	if wasBusy && (p.broken || !p.busy()) && !isClosed(p.idle) {
		close(p.idle)
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
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

// maxMethod bounds a method's name: the longest MCP method has 33
// characters, and a longer name is refused with its head quoted, not
// echoed whole by the SDK's "method not found".
const maxMethod = 200

// lineGuard hands the SDK one message per line that it can read, answers
// what is not one itself, counts the requests, and holds back the end of
// the input until they are answered.
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
			g.out.refuse(nil, jsonrpc.CodeParseError, fmt.Sprintf("Parse error: a message over %d bytes", maxLine))
			continue
		case err != nil:
			return 0, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		msg, r := checkLine(line)
		if r != nil {
			g.out.refuse(r.id, r.code, r.msg)
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok {
			id, _ := json.Marshal(req.ID.Raw())
			if n := utf8.RuneCountInString(req.Method); n > maxMethod {
				if req.IsCall() {
					g.out.refuse(id, jsonrpc.CodeMethodNotFound, "Method not found: "+quoteCut(req.Method, quoted))
				}
				continue
			}
			if req.IsCall() && !g.p.add(req.ID) {
				g.out.refuse(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: id %s is taken by a request still in flight; it is free again once that one is answered: send this one with another id", api.Clip(string(id), quoted, "id")))
				continue
			}
		}
		g.buf = append(line, '\n')
	}
	n := copy(b, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// refusal is the JSON-RPC error answering a line the SDK cannot take.
type refusal struct {
	id   json.RawMessage // the line's id if usable, else nil (null)
	code int
	msg  string
}

// checkLine reads a line as the SDK will, and says why it cannot if it
// cannot. The SDK's own decoder decides; the words are ours.
func checkLine(line []byte) (jsonrpc.Message, *refusal) {
	if !json.Valid(line) {
		return nil, &refusal{code: jsonrpc.CodeParseError, msg: "Parse error: the line is not JSON"}
	}
	if line[0] != '{' {
		return nil, &refusal{code: jsonrpc.CodeInvalidRequest, msg: "Invalid Request: a message is one JSON object per line (batches are not taken)"}
	}
	// Keys as the SDK reads them: case and all.
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, &refusal{code: jsonrpc.CodeParseError, msg: "Parse error: " + quoteCut(err.Error(), quoted)}
	}
	id, idOK := usableID(m["id"])
	var method string
	_, hasMethod := m["method"]
	methodOK := !hasMethod || json.Unmarshal(m["method"], &method) == nil
	var version string
	json.Unmarshal(m["jsonrpc"], &version)
	r := &refusal{id: id, code: jsonrpc.CodeInvalidRequest}
	switch {
	case version != "2.0":
		r.msg = `Invalid Request: "jsonrpc" must be "2.0"`
	case !idOK:
		r.msg = fmt.Sprintf(`Invalid Request: an "id" is a string, a number or null, not %s`, jsonKind(m["id"]))
	case !methodOK:
		r.msg = fmt.Sprintf(`Invalid Request: "method" is a string, not %s`, jsonKind(m["method"]))
	case !hasMethod && (id == nil || (m["result"] == nil && m["error"] == nil)):
		r.msg = `Invalid Request: a message has a "method", or an "id" and a "result" or "error"`
	}
	if r.msg != "" {
		return nil, r
	}
	if msg, ok := plainRequest(m, line); ok {
		return msg, nil
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		r.msg = "Invalid Request: " + quoteCut(err.Error(), quoted)
		return nil, r
	}
	return msg, nil
}

// sdkMaxDepth is the nesting the SDK's decoder takes.
const sdkMaxDepth = 1000

// plainRequest is the request a line checked so far carries (m its keys),
// when the SDK's decoder is sure to read it the same: a method, an id
// that is a string, a number the decoder reads or none, no "error", no
// deeper nesting than the decoder takes. It saves the SDK's decoder,
// which checking a line by it ran a second time on every line (~200 µs
// and 67 KB of buffers a call here); any other line goes to the decoder.
func plainRequest(m map[string]json.RawMessage, line []byte) (*jsonrpc.Request, bool) {
	raw, hasMethod := m["method"]
	if _, hasError := m["error"]; !hasMethod || hasError || depthOver(line, sdkMaxDepth) {
		return nil, false
	}
	var method string
	if json.Unmarshal(raw, &method) != nil {
		return nil, false
	}
	var idv any
	switch jsonKind(m["id"]) {
	case "a string":
		var s string
		if json.Unmarshal(m["id"], &s) != nil {
			return nil, false
		}
		idv = s
	case "a number":
		f, err := strconv.ParseFloat(string(bytes.TrimSpace(m["id"])), 64)
		if err != nil {
			return nil, false
		}
		idv = f
	case "", "null":
	default:
		return nil, false
	}
	id, err := jsonrpc.MakeID(idv)
	if err != nil {
		return nil, false
	}
	return &jsonrpc.Request{Method: method, ID: id, Params: m["params"]}, true
}

// depthOver says whether JSON value b nests objects and arrays deeper
// than max.
func depthOver(b []byte, max int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			end := skipString(b, i)
			if end < 0 {
				return false
			}
			i = end - 1
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// usableID returns an id an answer can name (a string or a number), or
// nil; ok is false for an id JSON-RPC does not allow (true, {}, []).
func usableID(raw json.RawMessage) (id json.RawMessage, ok bool) {
	switch jsonKind(raw) {
	case "a string", "a number":
		return raw, true
	case "", "null":
		return nil, true
	}
	return nil, false
}

// jsonKind names the kind of a JSON value: "a string", "true", "an
// object"...; "" for none.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f', 'n':
		return string(raw)
	}
	return "a number"
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

// maxErrorLine is the length past which an outgoing line is looked at
// for an error message to cut: no error of the SDK's own words is as long.
const maxErrorLine = 2000

// shortError returns line with its error message cut, if it is an error
// answer whose message is longer than errorText; ok is false otherwise.
func shortError(line []byte) ([]byte, bool) {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data,omitempty"`
		} `json:"error"`
	}
	if json.Unmarshal(line, &m) != nil || m.Error == nil || utf8.RuneCountInString(m.Error.Message) <= errorText {
		return nil, false
	}
	m.Error.Message = cutText(m.Error.Message, errorText)
	m.Error.Data = nil
	b, err := json.Marshal(m)
	return b, err == nil
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
	out := b
	if len(a.partial) == 0 && len(b) > maxErrorLine && bytes.IndexByte(b, '\n') == len(b)-1 && bytes.Contains(b, []byte(`"error"`)) {
		// One whole message, as the SDK writes them: an error in it
		// that quotes a long input is cut (unknown methods, prompts...).
		if short, ok := shortError(b[:len(b)-1]); ok {
			out = append(short, '\n')
		}
	}
	// The ids answered are freed before the answers leave, so that a
	// client reusing one at once finds it free.
	var ids []jsonrpc.ID
	lines := bytes.Split(b, []byte("\n"))
	for i, line := range lines[:len(lines)-1] {
		if i == 0 && len(a.partial) > 0 {
			line = append(a.partial, line...)
		}
		if id, ok := answerID(line); ok {
			ids = append(ids, id)
		}
	}
	a.p.answering(ids)
	_, err := a.w.Write(out)
	a.p.written(len(ids), err)
	if len(lines) > 1 {
		a.partial = a.partial[:0]
	}
	a.partial = append(a.partial, lines[len(lines)-1]...)
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

// answerID is the id of an answer the server writes; ok is false for
// any other line. It reads the line's envelope, not its result, which can
// be long.
func answerID(line []byte) (jsonrpc.ID, bool) {
	e := readEnvelope(line)
	if e.method != nil || e.id == nil {
		return jsonrpc.ID{}, false
	}
	var v any
	switch jsonKind(e.id) {
	case "a string":
		var s string
		if json.Unmarshal(e.id, &s) != nil {
			return jsonrpc.ID{}, false
		}
		v = s
	case "a number":
		f, err := strconv.ParseFloat(string(e.id), 64)
		if err != nil {
			return jsonrpc.ID{}, false
		}
		v = f
	default:
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(v)
	return id, err == nil && id.IsValid()
}

// refuse answers a line the SDK cannot take, as JSON-RPC asks: an error
// naming its id, or a null id when none could be read.
func (a *answerWriter) refuse(id json.RawMessage, code int, msg string) {
	var idv any
	if len(id) > 0 && json.Valid(id) {
		idv = id
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": idv, "error": map[string]any{"code": code, "message": msg}})
	// Not counted as an answer: the message it answers was never counted,
	// or (an id in flight again) is still to be answered.
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, err := a.w.Write(append(b, '\n')); err != nil {
		a.p.written(0, err)
	}
}

func (a *answerWriter) Close() error { return a.w.Close() }
