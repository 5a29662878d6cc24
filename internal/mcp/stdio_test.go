package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type nopWriteCloser struct{ *bytes.Buffer }

func (nopWriteCloser) Close() error { return nil }

// A line over the limit is answered with a parse error and skipped whole;
// the next message still reaches the server.
func TestLineGuardSkipsAnOverlongLine(t *testing.T) {
	next := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	in := strings.Repeat("x", maxLine+10) + "\n" + next + "\n"
	out := nopWriteCloser{&bytes.Buffer{}}
	p := newPending()
	w := &answerWriter{w: out, p: p}
	g := &lineGuard{br: bufio.NewReader(strings.NewReader(in)), in: io.NopCloser(nil), p: p, out: w}
	var got bytes.Buffer
	buf := make([]byte, 7)
	for {
		n, err := g.Read(buf)
		got.Write(buf[:n])
		if n == 0 && err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
		if bytes.HasSuffix(got.Bytes(), []byte("\n")) {
			// Answer it as the server would, so the end is not held back.
			w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
		}
	}
	if got.String() != next+"\n" {
		t.Errorf("passed on %q, want only the next message", got.String())
	}
	if !strings.Contains(out.String(), `"code":-32700`) || !strings.Contains(out.String(), "over") {
		t.Errorf("answered %q, want a parse error for the long line", out.String())
	}
}

// guardServer serves a plain SDK server with a tool "sleep" (it sleeps
// its "ms" argument and says "slept") over Stdio on pipes, and returns
// the client's ends and a channel closed when the server ends.
func guardServer(t *testing.T) (io.WriteCloser, *bufio.Reader, chan struct{}) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "guard-test"}, nil)
	type sleepIn struct {
		MS int `json:"ms"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "sleep"}, func(ctx context.Context, req *mcp.CallToolRequest, in sleepIn) (*mcp.CallToolResult, any, error) {
		time.Sleep(time.Duration(in.MS) * time.Millisecond)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept"}}}, nil, nil
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		srv.Run(context.Background(), Stdio(inR, outW))
		outW.Close()
		close(done)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the server did not end after its input closed")
		}
	})
	return inW, bufio.NewReader(outR), done
}

// answer is one line the server wrote.
type answer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func readAnswer(t *testing.T, r *bufio.Reader) answer {
	t.Helper()
	line, err := r.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading an answer: %v (read %q)", err, line)
	}
	var a answer
	if err := json.Unmarshal(line, &a); err != nil {
		t.Fatalf("answer %q: %v", line, err)
	}
	return a
}

const initLine = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`

// Every line the SDK would refuse — and end the connection on, leaving
// every call in flight unanswered — is answered with a JSON-RPC error by
// the guard, and the server goes on: a call in flight meanwhile is
// answered, and the next request too (issue 33 item 6).
func TestLineGuardRefusesWhatTheSDKRefuses(t *testing.T) {
	in, out, done := guardServer(t)
	io.WriteString(in, initLine)
	if a := readAnswer(t, out); string(a.ID) != `"init"` || a.Error != nil {
		t.Fatalf("initialize answered %+v", a)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"sleep","arguments":{"ms":1500}}}`+"\n")
	cases := []struct {
		line string
		id   string // the id the error names
		code int
		says string
	}{
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, "null", -32600, `not true`},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, "null", -32600, `not an object`},
		{`{"jsonrpc":"2.0","id":[],"method":"ping"}`, "null", -32600, `not an array`},
		{`{"jsonrpc":"2.0","id":false}`, "null", -32600, `not false`},
		{`[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, "null", -32600, `batches`},
		{`[]`, "null", -32600, `batches`},
		{`"ping"`, "null", -32600, `one JSON object`},
		{`not json`, "null", -32700, `not JSON`},
		{`{"jsonrpc":"2.0","id":3,"method":"ping"} {"x":1}`, "null", -32700, `not JSON`},
		{`{"jsonrpc":"2.0","id":3,"method":"ping"`, "null", -32700, `not JSON`},
		{`{"jsonrpc":"1.0","id":4,"method":"ping"}`, "4", -32600, `"jsonrpc" must be "2.0"`},
		{`{"id":5,"method":"ping"}`, "5", -32600, `"jsonrpc" must be "2.0"`},
		{`{"JSONRPC":"2.0","id":5,"method":"ping"}`, "5", -32600, `"jsonrpc" must be "2.0"`},
		{`{"jsonrpc":"2.0","id":6,"method":42}`, "6", -32600, `"method" is a string, not a number`},
		{`{"jsonrpc":"2.0","id":7,"method":null}`, "7", -32601, `method not found`}, // the SDK's reading
		{`{"jsonrpc":"2.0","id":9}`, "9", -32600, `a message has a "method"`},
		{`{"jsonrpc":"2.0","id":null,"result":{}}`, "null", -32600, `a message has a "method"`},
		{`{"jsonrpc":"2.0","id":10,"error":"no"}`, "10", -32600, `Invalid Request: `},
		{`{"jsonrpc":"2.0","id":11,"method":"ping","params":` + strings.Repeat("[", 1500) + strings.Repeat("]", 1500) + `}`, "11", -32600, `depth`},
		{`{"jsonrpc":"2.0","id":"slow","method":"ping"}`, `"slow"`, -32600, `id "slow" is taken by a request still in flight`},
		{`{"jsonrpc":"2.0","id":12,"method":"` + strings.Repeat("m", 5000) + `"}`, "12", -32601, `(5,000 characters)`},
	}
	for _, c := range cases {
		io.WriteString(in, c.line+"\n")
		a := readAnswer(t, out)
		if a.Error == nil || a.Error.Code != c.code || string(a.ID) != c.id || !strings.Contains(a.Error.Message, c.says) || len(a.Error.Message) > 500 {
			t.Errorf("%.80s: answered id %s %+v, want id %s, code %d, saying %q", c.line, a.ID, a.Error, c.id, c.code, c.says)
		}
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":"after","method":"ping"}`+"\n")
	got := map[string]answer{}
	for len(got) < 2 {
		a := readAnswer(t, out)
		got[string(a.ID)] = a
	}
	if a := got[`"slow"`]; a.Error != nil || !strings.Contains(string(a.Result), "slept") {
		t.Errorf("the call in flight was answered %+v, want its result", a)
	}
	if a := got[`"after"`]; a.Error != nil {
		t.Errorf("the ping after the refused lines was answered %+v", a)
	}
	// Its answer given, the id is free again.
	io.WriteString(in, `{"jsonrpc":"2.0","id":"slow","method":"ping"}`+"\n")
	if a := readAnswer(t, out); a.Error != nil || string(a.ID) != `"slow"` {
		t.Errorf("a reused id after its answer: %+v %+v", a, a.Error)
	}
	select {
	case <-done:
		t.Fatal("the server ended")
	default:
	}
}

// The end of the input with nothing in flight ends the server at once;
// with a call in flight, after its answer.
func TestLineGuardEndOfInput(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		in, out, done := guardServer(t)
		io.WriteString(in, initLine)
		readAnswer(t, out)
		// A duplicate of an answered id, and one refused while in flight,
		// leave nothing pending.
		io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":300}}}`+"\n")
		io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":300}}}`+"\n")
		readAnswer(t, out)
		readAnswer(t, out)
		in.Close()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the server still runs 20 s after its input ended with nothing in flight")
		}
	})
	t.Run("in flight", func(t *testing.T) {
		in, out, done := guardServer(t)
		io.WriteString(in, initLine)
		readAnswer(t, out)
		io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":1000}}}`+"\n")
		in.Close()
		a := readAnswer(t, out)
		if string(a.ID) != "2" || !strings.Contains(string(a.Result), "slept") {
			t.Errorf("the call in flight at the end of the input was answered %+v", a)
		}
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the server still runs 20 s after answering the last call")
		}
	})
}

// FuzzCheckLine: whatever a line holds, the guard either refuses it or
// hands the SDK a message its own decoder reads.
func FuzzCheckLine(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":true}`, `[1]`, `{"jsonrpc":"2.0","id":1.5,"result":{}}`,
		`{"jsonrpc":"2.0","ID":1,"method":"x","id":"a"}`, `{"jsonrpc":"2.0","id":1,"id":true,"method":"x"}`, "{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || bytes.IndexByte(line, '\n') >= 0 {
			return
		}
		msg, r := checkLine(line)
		if r != nil {
			if msg != nil || r.msg == "" || (r.id != nil && !json.Valid(r.id)) {
				t.Fatalf("%q: refused with %+v and a message %v", line, r, msg)
			}
			return
		}
		sdk, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			t.Fatalf("%q passed, and the SDK refuses it: %v", line, err)
		}
		// The guard's reading without the decoder (plainRequest) is the SDK's.
		if got, ok := msg.(*jsonrpc.Request); ok {
			want, ok := sdk.(*jsonrpc.Request)
			if !ok || got.ID != want.ID || got.Method != want.Method {
				t.Fatalf("%q: the guard read %+v, the SDK %+v", line, got, sdk)
			}
		}
		var raw json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(append(line, '\n')))
		if err := dec.Decode(&raw); err != nil {
			t.Fatalf("%q passed, and the SDK's framing refuses it: %v", line, err)
		}
	})
}

// An error answer whose message quotes a long input leaves cut, its id
// counted as answered; a long result leaves whole.
func TestAnswerWriterCutsLongErrors(t *testing.T) {
	out := nopWriteCloser{&bytes.Buffer{}}
	p := newPending()
	w := &answerWriter{w: out, p: p}
	id, _ := jsonrpc.MakeID(float64(3))
	p.add(id)
	long := strings.Repeat("q", 100_000)
	w.Write([]byte(`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"unknown prompt \"` + long + `\""}}` + "\n"))
	var a answer
	if err := json.Unmarshal(out.Bytes(), &a); err != nil || a.Error == nil || len(a.Error.Message) > 2*errorText || !strings.Contains(a.Error.Message, "characters cut") || string(a.ID) != "3" {
		t.Errorf("wrote %.300s (%v)", out.String(), err)
	}
	if p.busy() {
		t.Errorf("the answer to id 3 was not counted")
	}
	out.Reset()
	result := `{"jsonrpc":"2.0","id":4,"result":{"text":"` + long + `","error":"x"}}` + "\n"
	w.Write([]byte(result))
	if out.String() != result {
		t.Errorf("a long result was changed")
	}
}
