package e2e

// The MCP server under hostile input (issue 33 items 5, 6 and 8): lines
// the SDK cannot read, the end of its input with calls in flight, a
// PNG decompression bomb from a real cell, and inputs of megabytes
// that error texts and labels would repeat.

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	be "encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/jpeg"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/testenv"
)

const mcpSection = "10 MCP server"

// rawAnswer is one line `polyrepl mcp` wrote.
type rawAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	size int
}

// rawMCP is `polyrepl mcp` fed JSON-RPC lines by hand, as a script or a
// broken client would.
type rawMCP struct {
	t       *testing.T
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  *testenv.Buffer
	answers chan rawAnswer
	exited  chan struct{}
	early   map[string]rawAnswer // answers read while another was awaited
}

func (e *env) startRawMCP() *rawMCP {
	t := e.t
	t.Helper()
	cmd, stderr := e.mcpCommand()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := &rawMCP{t: t, cmd: cmd, stdin: stdin, stderr: stderr, answers: make(chan rawAnswer, 1000), exited: make(chan struct{}), early: map[string]rawAnswer{}}
	go func() {
		defer close(m.answers)
		br := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				var a rawAnswer
				if json.Unmarshal(line, &a) != nil {
					a.Error = &struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					}{0, "NOT JSON-RPC: " + clip(string(line))}
				}
				a.size = len(line)
				m.answers <- a
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		cmd.Wait()
		close(m.exited)
	}()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-m.exited:
		case <-time.After(cmdTimeout):
			t.Errorf("polyrepl mcp still runs %s after its input closed", cmdTimeout)
			cmd.Process.Kill()
			<-m.exited
		}
	})
	return m
}

func (m *rawMCP) send(line string) {
	m.t.Helper()
	if _, err := io.WriteString(m.stdin, line+"\n"); err != nil {
		m.t.Fatalf("writing to polyrepl mcp: %v\nstderr: %s", err, clip(m.stderr.String()))
	}
}

// next is the next line the server writes.
func (m *rawMCP) next() rawAnswer {
	m.t.Helper()
	select {
	case a, ok := <-m.answers:
		if !ok {
			m.t.Fatalf("polyrepl mcp closed its output; stderr: %s", clip(m.stderr.String()))
		}
		return a
	case <-time.After(cmdTimeout):
		m.t.Fatalf("no answer from polyrepl mcp in %s", cmdTimeout)
	}
	return rawAnswer{}
}

// answer is the answer naming id (its JSON), in whatever order answers
// come.
func (m *rawMCP) answer(id string) rawAnswer {
	m.t.Helper()
	for {
		if a, ok := m.early[id]; ok {
			delete(m.early, id)
			return a
		}
		a := m.next()
		m.early[string(a.ID)] = a
	}
}

// initialize opens the session as name.
func (m *rawMCP) initialize(name string) {
	m.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "init", "method": "initialize",
		"params": map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": name, "version": "1"}}})
	m.send(string(b))
	if a := m.next(); string(a.ID) != `"init"` || a.Error != nil {
		m.t.Fatalf("initialize answered %+v", a)
	}
	m.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func toolCall(id, tool string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	return string(b)
}

// resultText is the text of a tool result.
func resultText(a rawAnswer) string {
	var r mcp.CallToolResult
	if err := json.Unmarshal(a.Result, &r); err != nil {
		return ""
	}
	return toolText(&r)
}

// Lines the SDK cannot read — an id true, {} or [], a batch, the wrong
// "jsonrpc", not JSON — and a second request with the id of one in
// flight are each answered with a JSON-RPC error while an exec is in
// flight; the exec is answered, and the server goes on. Inputs of
// megabytes come back as 200 characters and their length; a 3 MB client
// name labels its cells with 100 characters.
func TestReliabilityMCPRefusedLines(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	m := e.startRawMCP()
	m.initialize(strings.Repeat("n", 3_000_000))
	m.send(toolCall("cell", "exec", map[string]any{"session": "r", "code": "import time\ntime.sleep(3)\nprint('after the sleep')"}))

	big := strings.Repeat("y", 5_000_000)
	refused := []struct {
		what, line string
		code       int
		id         string
	}{
		{"an id true", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, "null"},
		{"an id {}", `{"jsonrpc":"2.0","id":{},"method":"tools/list"}`, -32600, "null"},
		{"an id []", `{"jsonrpc":"2.0","id":[],"method":"ping"}`, -32600, "null"},
		{"a batch", `[{"jsonrpc":"2.0","id":70,"method":"ping"}]`, -32600, "null"},
		{`"jsonrpc": "1.0"`, `{"jsonrpc":"1.0","id":71,"method":"ping"}`, -32600, "71"},
		{"a line that is not JSON", `{"jsonrpc":"2.0","id":72,`, -32700, "null"},
		{"the id of the exec in flight again", `{"jsonrpc":"2.0","id":"cell","method":"ping"}`, -32600, `"cell"`},
		{"a 5 MB method", `{"jsonrpc":"2.0","id":73,"method":"` + big + `"}`, -32601, "73"},
		{"a 5 MB tool name", toolCall("74", big, map[string]any{}), -32602, `"74"`},
	}
	var said []string
	for _, c := range refused {
		m.send(c.line)
		a := m.answer(c.id)
		if a.Error == nil || a.Error.Code != c.code || string(a.ID) != c.id || a.size > 2000 {
			t.Errorf("%s: answered id %s, %d bytes, %+v; want error %d naming id %s", c.what, a.ID, a.size, a.Error, c.code, c.id)
			continue
		}
		said = append(said, fmt.Sprintf("%s: %d", c.what, a.Error.Code))
	}
	// Arguments of 12 MB, plain and as a name, come back cut.
	huge := strings.Repeat("z", 12_000_000)
	for i, args := range []map[string]any{
		{"session": "r2", "code": "1", "memory": huge},
		{"session": "r2", "code": "1", huge: 1},
	} {
		id := fmt.Sprint("arg", i)
		m.send(toolCall(id, "exec", args))
		a := m.answer(`"` + id + `"`)
		if txt := resultText(a); a.size > 2000 || !strings.Contains(txt, "(12,000,000 characters)") {
			t.Errorf("exec with a 12 MB argument: answered %d bytes: %.300s", a.size, txt)
		}
	}
	m.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	got := map[string]rawAnswer{`"after"`: m.answer(`"after"`), `"cell"`: m.answer(`"cell"`)}
	cellText := resultText(got[`"cell"`])
	if !strings.Contains(cellText, "after the sleep") {
		t.Errorf("the exec in flight was answered %+v: %s", got[`"cell"`], cellText)
	}
	if got[`"after"`].Error != nil {
		t.Errorf("the ping after the refused lines: %+v", got[`"after"`].Error)
	}
	hist, _, _ := e.run("history", "r")
	if strings.Contains(hist, strings.Repeat("n", 101)) || !strings.Contains(hist, "[label cut: 3,000,000 characters in all; showing the first 100]") {
		t.Errorf("the record labels the 3 MB client as: %s", clip(hist))
	}
	start := time.Now()
	m.stdin.Close()
	select {
	case <-m.exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("polyrepl mcp still runs 60 s after its input closed with nothing in flight")
	}
	if code := m.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("polyrepl mcp exited %d; stderr: %s", code, clip(m.stderr.String()))
	}
	report(t, mcpSection, "lines the SDK cannot read sent while an exec runs: an id `true`, `{}` or `[]`, a batch, `\"jsonrpc\":\"1.0\"`, a cut line, the exec's own id again, a 5 MB method, a 5 MB tool name",
		"each answered with a JSON-RPC error of at most 2,000 bytes (%s); the exec answered with its output; the server went on (a ping answered), and ended %s after its input closed", strings.Join(said, "; "), time.Since(start).Round(100*time.Millisecond))
	report(t, mcpSection, "a 12 MB argument value, a 12 MB argument name, a 3 MB clientInfo.name",
		"the refusals quote 200 characters and say \"(12,000,000 characters)\"; the client's cells are labelled with 100 characters of its name and \"[label cut: 3,000,000 characters in all; showing the first 100]\"")
}

// The end of the input: with nothing in flight the server ends at once;
// with an exec in flight, once it is answered.
func TestReliabilityMCPEndOfInput(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)

	idle := e.startRawMCP()
	idle.initialize("idle-client")
	start := time.Now()
	idle.stdin.Close()
	if !waitFor(60*time.Second, func() bool {
		select {
		case <-idle.exited:
			return true
		default:
			return false
		}
	}) {
		t.Fatalf("polyrepl mcp still runs 60 s after its input closed with nothing in flight")
	}
	idleEnd := time.Since(start)

	busy := e.startRawMCP()
	busy.initialize("busy-client")
	busy.send(toolCall("1", "exec", map[string]any{"session": "end", "code": "import time\ntime.sleep(2)\nprint('answered')"}))
	start = time.Now()
	busy.stdin.Close()
	a := busy.next()
	answered := time.Since(start)
	if txt := resultText(a); !strings.Contains(txt, "answered") {
		t.Errorf("the exec in flight at the end of the input: %+v %s", a.Error, txt)
	}
	select {
	case <-busy.exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("polyrepl mcp still runs 60 s after answering its last call")
	}
	busyEnd := time.Since(start)
	report(t, mcpSection, "the client closes stdin: with nothing in flight; with an exec in flight (a 2 s cell)",
		"ended %s after the close; answered the exec %s after the close, then ended (%s)",
		idleEnd.Round(100*time.Millisecond), answered.Round(100*time.Millisecond), busyEnd.Round(100*time.Millisecond))
}

// craftBomb is a grayscale PNG whose header says w×h: a few KB of zeros
// compressed, which no decoder should be let to expand.
func craftBomb(w, h int) []byte { return craftPNG(w, h, 0, 50) }

// craftPNG is a PNG of w×h pixels of colour type ct (0 gray, 2 RGB)
// whose data are rows black rows.
func craftPNG(w, h int, ct byte, rows int) []byte {
	chunk := func(typ string, data []byte) []byte {
		var b bytes.Buffer
		be.Write(&b, be.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		be.Write(&b, be.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
		return b.Bytes()
	}
	ihdr := make([]byte, 13)
	be.BigEndian.PutUint32(ihdr[0:], uint32(w))
	be.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, ct
	row := make([]byte, 1+w)
	if ct == 2 {
		row = make([]byte, 1+3*w)
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	for range rows {
		zw.Write(row)
	}
	zw.Close()
	out := append([]byte("\x89PNG\r\n\x1a\n"), chunk("IHDR", ihdr)...)
	out = append(out, chunk("IDAT", z.Bytes())...)
	return append(out, chunk("IEND", nil)...)
}

// A value whose _repr_png_ returns a 60000×60000 PNG (3.4 GB decoded)
// is described from its header and left as its file, with the server's
// memory flat; a corrupt image is called corrupt; a JPEG returned by
// _repr_png_ is sent and listed as a JPEG.
func TestReliabilityMCPImageBomb(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	files := map[string][]byte{"bomb.png": craftBomb(60000, 60000), "big.png": craftPNG(10000, 5000, 2, 5000), "corrupt.jpg": append([]byte{0xff, 0xd8, 0xff, 0xe0, 0, 16}, bytes.Repeat([]byte("junk"), 100)...)}
	var jb bytes.Buffer
	jpeg.Encode(&jb, image.NewGray(image.Rect(0, 0, 320, 240)), nil)
	files["photo.jpg"] = jb.Bytes()
	// 2550338678×680730779, if read from the bytes after the signature.
	files["garbage.png"] = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"), 0x98, 0x01, 0xf6, 0x76, 0x28, 0x92, 0x6f, 0x9b, 8, 0, 0, 0, 0, 1, 2, 3, 4)
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(e.home, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := e.startMCP()
	s.call("exec", map[string]any{"session": "img", "code": "class B:\n    def __init__(self, p): self.p = p\n    def _repr_png_(self): return open(self.p, 'rb').read()"}, nil)
	stop := peakRSS(s.cmd.Process.Pid)
	call := func(file string) (cellResult, *mcp.CallToolResult) {
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		defer cancel()
		res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "exec", Arguments: map[string]any{"session": "img", "code": fmt.Sprintf("B(%q)", filepath.Join(e.home, file))}})
		if err != nil {
			t.Fatalf("exec B(%s): %v\nstderr: %s", file, err, clip(s.stderr.String()))
		}
		var r cellResult
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &r)
		json.Unmarshal(b, &r.raw)
		return r, res
	}
	richFile := func(r cellResult) string {
		rich, _ := r.raw["rich"].([]any)
		if len(rich) != 1 {
			t.Fatalf("rich outputs %v, want one", r.raw["rich"])
		}
		f, _ := rich[0].(map[string]any)["file"].(string)
		return f
	}
	r, bombRes := call("bomb.png")
	peak := stop()
	bombText := toolText(bombRes)
	bombFile := richFile(r)
	for _, want := range []string{"60000×60000 PNG", "decoding it would take 3433 MB", "not sent, and left as its file"} {
		if !strings.Contains(bombText, want) {
			t.Errorf("the bomb's reply lacks %q: %s", want, bombText)
		}
	}
	if !strings.Contains(bombText, filepath.Dir(bombFile)) {
		t.Errorf("the bomb's reply does not name its file (%s): %s", bombFile, bombText)
	}
	for _, c := range bombRes.Content {
		if _, ok := c.(*mcp.ImageContent); ok {
			t.Errorf("the bomb was sent as an image block")
		}
	}
	if peak > 150<<20 {
		t.Errorf("polyrepl mcp peaked at %d MB with the bomb; want its memory flat", peak>>20)
	}

	// A real 10000×5000 RGB image (200 MB decoded) is scaled and sent.
	stop = peakRSS(s.cmd.Process.Pid)
	_, res := call("big.png")
	bigPeak := stop()
	var bigSent image.Config
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			bigSent, _, _ = image.DecodeConfig(bytes.NewReader(ic.Data))
		}
	}
	if bigSent.Width != 1568 || !strings.Contains(toolText(res), "to 1568×784") {
		t.Errorf("a 10000×5000 PNG sent as %d×%d: %s", bigSent.Width, bigSent.Height, toolText(res))
	}
	t.Logf("peak RSS: %d MB with the bomb, %d MB scaling the 10000×5000 PNG", peak>>20, bigPeak>>20)
	if bigPeak > 400<<20 {
		t.Errorf("polyrepl mcp peaked at %d MB scaling a 10000×5000 PNG", bigPeak>>20)
	}

	r, res = call("corrupt.jpg")
	corruptText := toolText(res)
	if f := richFile(r); !strings.Contains(corruptText, "is corrupt: a JPEG") || !strings.Contains(corruptText, f) || len(res.Content) != 1 {
		t.Errorf("the corrupt image's reply (%d blocks): %s", len(res.Content), corruptText)
	}
	_, res = call("photo.jpg")
	photoText := toolText(res)
	var mime string
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			mime = ic.MIMEType
		}
	}
	if mime != "image/jpeg" || !strings.Contains(photoText, "320×240 JPEG") || strings.Contains(photoText, "PNG") {
		t.Errorf("a JPEG from _repr_png_ sent as %q: %s", mime, photoText)
	}
	_, res = call("garbage.png")
	garbageText := toolText(res)
	if strings.Contains(garbageText, "2550338678") || !strings.Contains(garbageText, "is corrupt: a PNG") {
		t.Errorf("a garbage PNG header through MCP: %s", garbageText)
	}
	// The CLI lists what the runtime kept as the bytes say, too.
	// A figure's line is polyrepl's words: on standard error.
	_, cliGarbage, _ := e.run("exec", "img", fmt.Sprintf("B(%q)", filepath.Join(e.home, "garbage.png")))
	_, cliPhoto, _ := e.run("exec", "img", fmt.Sprintf("B(%q)", filepath.Join(e.home, "photo.jpg")))
	if strings.Contains(cliGarbage, "2550338678") || !strings.Contains(cliGarbage, "[image 1: PNG") || !strings.Contains(cliPhoto, "[image 1: JPEG") {
		t.Errorf("the CLI lists a garbage PNG header as %q and a JPEG from _repr_png_ as %q", cliGarbage, cliPhoto)
	}
	if r, txt := s.cell("exec", map[string]any{"session": "img", "code": "1+1"}); r.Status != "done" || !strings.HasSuffix(txt, ": 2") {
		t.Errorf("exec after the images: %+v, %q", r, txt)
	}
	report(t, mcpSection, "`_repr_png_` returning a 3 KB PNG whose header says 60000×60000 (3.4 GB decoded); a real 10000×5000 RGB PNG; a corrupt JPEG; a JPEG from `_repr_png_`; a PNG signature followed by garbage",
		"the server peaked at %d MB with the bomb; the reply says %q and names the file; the 10000×5000 image is scaled to 1568×784 and sent (peak %d MB); the corrupt one is \"corrupt: a JPEG that cannot be read\" with its file; the JPEG is sent and listed as a 320×240 JPEG (by the CLI too); the garbage header is \"corrupt: a PNG\", its size not read from it (it was 2550338678×680730779)",
		peak>>20, sentenceFrom(bombText, "Image 1"), bigPeak>>20)
}

// sentenceFrom is the sentence of text that starts with prefix.
func sentenceFrom(text, prefix string) string {
	i := strings.Index(text, prefix)
	if i < 0 {
		return ""
	}
	s := text[i:]
	if j := strings.Index(s, ": not sent"); j > 0 {
		s = s[:j]
	}
	if j := strings.Index(s, "; not sent"); j > 0 {
		s = s[:j]
	}
	return s
}
