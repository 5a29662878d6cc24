package mcp

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
)

type nopWriteCloser struct{ *bytes.Buffer }

func (nopWriteCloser) Close() error { return nil }

// A line over the limit is answered with a parse error and skipped whole;
// the next message still reaches the server.
func TestLineGuardSkipsAnOverlongLine(t *testing.T) {
	next := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	in := strings.Repeat("x", maxLine+10) + "\n" + next + "\n"
	out := nopWriteCloser{&bytes.Buffer{}}
	p := &pending{idle: make(chan struct{})}
	close(p.idle)
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
