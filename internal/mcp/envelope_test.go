package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestReadEnvelope(t *testing.T) {
	long := strings.Repeat(`x\"{[`, 1000)
	for _, c := range []struct {
		line           string
		id, method     string
		answer, req, r bool
	}{
		{line: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"exec"}}`, id: `1`, method: `"tools/call"`, req: true},
		{line: ` { "id" : "a\"b" , "method":"ping" } `, id: `"a\"b"`, method: `"ping"`, req: true},
		{line: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, method: `"notifications/initialized"`},
		{line: `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + long + `"}]}}`, id: `7`, answer: true, r: true},
		{line: `{"jsonrpc":"2.0","id":-3,"error":{"code":-32600,"message":"no"}}`, id: `-3`, answer: true, r: true},
		{line: `{"params":{"id":5,"method":"inner"},"id":null,"method":"x"}`, id: `null`, method: `"x"`},
		{line: `{"id":true,"method":"x"}`, id: `true`, method: `"x"`},
		{line: `{"id":{"a":1},"result":1}`, id: `{"a":1}`, answer: true},
		{line: `{"method":5,"id":1}`, id: `1`},
		{line: `[{"id":1,"method":"x"}]`},
		{line: `not json`},
		{line: `{"id":1,"method":"x"`, id: `1`, method: `"x"`, req: true}, // cut short: what was read
		{line: `{"id":"unterminated`},
		{line: ``},
	} {
		e := readEnvelope([]byte(c.line))
		if string(e.id) != c.id || string(e.method) != c.method || e.answer != c.answer || e.request() != c.req || e.response() != c.r {
			t.Errorf("readEnvelope(%.80q) = id %q method %q answer %v request %v response %v; want %q %q %v %v %v",
				c.line, e.id, e.method, e.answer, e.request(), e.response(), c.id, c.method, c.answer, c.req, c.r)
		}
	}
}

// FuzzReadEnvelope: any line is scanned without a panic, and a message
// the encoder writes is read as the decoder reads it.
func FuzzReadEnvelope(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, "x", "exec", `\"`, true)
	f.Add(`{"id":"a","result":{}}`, "", "", "", false)
	f.Fuzz(func(t *testing.T, raw, id, method, text string, numeric bool) {
		readEnvelope([]byte(raw))
		var idv any = id
		if numeric {
			idv = len(id)
		}
		msg := map[string]any{"jsonrpc": "2.0", "id": idv, "method": method, "params": map[string]any{"id": text, "code": text}}
		line, err := json.Marshal(msg)
		if err != nil {
			return
		}
		e := readEnvelope(line)
		wantID, _ := json.Marshal(idv)
		wantMethod, _ := json.Marshal(method)
		if !bytes.Equal(e.id, wantID) || !bytes.Equal(e.method, wantMethod) || !e.request() {
			t.Errorf("readEnvelope(%s) = id %s method %s request %v", line, e.id, e.method, e.request())
		}
	})
}

// A handler that panics is answered with an internal error, and the
// process (the daemon, for the splice) goes on.
func TestRecoveredPanic(t *testing.T) {
	h := recovered(func(context.Context, string, mcp.Request) (mcp.Result, error) { panic("boom") })
	res, err := h(context.Background(), "tools/call", nil)
	var je *jsonrpc.Error
	if res != nil || !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError || !strings.Contains(je.Message, "boom") {
		t.Errorf("a panicking handler answered %v, %v", res, err)
	}
}
