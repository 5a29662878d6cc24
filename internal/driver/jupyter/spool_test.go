package jupyter

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestStreamText: a stream message's text is passed on unescaped, in
// pieces of at most streamPiece, whatever else the content holds.
func TestStreamText(t *testing.T) {
	big := strings.Repeat("é\"\\\n\t\u2028x", 200_000)
	for _, c := range []struct {
		content string
		want    string
		bad     bool
	}{
		{`{"name": "stdout", "text": "hello\n"}`, "hello\n", false},
		{`{"text":"a\u00e9\ud83d\ude00\ud800z","name":"stderr"}`, "aé😀\uFFFDz", false},
		{`{"meta": {"text": "no", "x": [1, {"text": "no"}, "]}"]}, "n": -1.5e3, "t": true, "text": "yes"}`, "yes", false},
		{`{"text": "\/\b\f\r"}`, "/\b\f\r", false},
		{`{}`, "", false},
		{`[1]`, "", true},
		{`{"text": "unterminated`, "unterminated", true},
		{`{"text": "\x"}`, "", true},
	} {
		var got bytes.Buffer
		err := streamText(strings.NewReader(c.content), func(p []byte) { got.Write(p) })
		if (err != nil) != c.bad || (!c.bad && got.String() != c.want) {
			t.Errorf("%.60s: %q, %v", c.content, got.String(), err)
		}
	}
	content, _ := json.Marshal(map[string]string{"name": "stdout", "text": big})
	var got bytes.Buffer
	pieces := 0
	if err := streamText(bytes.NewReader(content), func(p []byte) {
		if len(p) > streamPiece+4 {
			t.Errorf("a piece of %d bytes", len(p))
		}
		pieces++
		got.Write(p)
	}); err != nil || got.String() != big || pieces < 2 {
		t.Errorf("a %d-byte text: %d bytes in %d pieces, %v", len(big), got.Len(), pieces, err)
	}
}

// FuzzStreamText: the text streamed is the text encoding/json reads, for
// any content it reads as an object with one text member.
func FuzzStreamText(f *testing.F) {
	f.Add([]byte(`{"name": "stdout", "text": "hello\n"}`))
	f.Add([]byte(`{"text":"\ud83d\ude00\udc00","x":{"text":[1,"]"]}}`))
	f.Add([]byte(`{"a":null,"text":"\u0000"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var got bytes.Buffer
		err := streamText(bytes.NewReader(b), func(p []byte) { got.Write(p) })
		var m map[string]json.RawMessage
		if !utf8.Valid(b) || json.Unmarshal(b, &m) != nil {
			return
		}
		texts := 0
		for k := range m {
			if strings.EqualFold(k, "text") {
				texts++
			}
		}
		if _, ok := m["text"]; !ok || texts != 1 || bytes.Count(b, []byte(`"text"`)) != 1 {
			return
		}
		var s struct {
			Text *string `json:"text"`
		}
		if json.Unmarshal(b, &s) != nil || s.Text == nil {
			return
		}
		if err != nil || got.String() != *s.Text {
			t.Errorf("%q: streamed %q (%v), json reads %q", b, got.String(), err, *s.Text)
		}
	})
}

// TestSpoolConn: a ZMTP stream read through spoolConn comes out the same
// but for a frame over bigFrame, which is a reference to a file holding
// it; the message it belongs to decodes, signature checked, with its
// content in that file.
func TestSpoolConn(t *testing.T) {
	sp, err := newSpooler(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	sig := signer{key: []byte("key")}
	id := identity{session: "s", username: "u"}
	text := strings.Repeat("y", 3<<20)
	m, _ := id.request("stream", map[string]string{"name": "stdout", "text": text})
	frames, err := sig.encodeZMQ(m)
	if err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	stream.Write(bytes.Repeat([]byte{0xAB}, 64)) // the greeting
	frame := func(flags byte, body []byte) {
		if len(body) > 255 {
			stream.WriteByte(flags | 0x02)
			binary.Write(&stream, binary.BigEndian, uint64(len(body)))
		} else {
			stream.WriteByte(flags)
			stream.WriteByte(byte(len(body)))
		}
		stream.Write(body)
	}
	frame(0x04, []byte("\x05READYsome properties"))
	for i, f := range frames {
		more := byte(0x01)
		if i == len(frames)-1 {
			more = 0
		}
		frame(more, f)
	}
	a, b := net.Pipe()
	go func() { a.Write(stream.Bytes()); a.Close() }()
	c := &spoolConn{Conn: b, sp: sp, r: newReader(b), greeting: 64}
	out, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > 64<<10 || !bytes.Equal(out[:64], stream.Bytes()[:64]) {
		t.Fatalf("%d bytes came out of %d", len(out), stream.Len())
	}
	// Read the frames back as zmq4 would.
	r := bytes.NewReader(out[64:])
	var got [][]byte
	for r.Len() > 0 {
		flags, _ := r.ReadByte()
		var n uint64
		if flags&0x02 != 0 {
			binary.Read(r, binary.BigEndian, &n)
		} else {
			s, _ := r.ReadByte()
			n = uint64(s)
		}
		body := make([]byte, n)
		io.ReadFull(r, body)
		if flags&0x04 == 0 {
			got = append(got, body)
		}
	}
	dm, err := sig.decodeZMQ(got, sp)
	if err != nil {
		t.Fatal(err)
	}
	defer dm.release()
	if dm.big == nil || dm.Size() != int64(len(frames[5])) || dm.Type() != "stream" {
		t.Fatalf("decoded %+v, want the content spooled", dm.Header)
	}
	var s bytes.Buffer
	f, _ := os.Open(dm.big.path)
	defer f.Close()
	if err := streamText(f, func(p []byte) { s.Write(p) }); err != nil || s.String() != text {
		t.Errorf("the spooled text: %d bytes, %v", s.Len(), err)
	}
	// A reference made by another spooler, or a frame that looks like
	// one, is not taken.
	other, _ := newSpooler(t.TempDir())
	defer other.close()
	ref := append([]byte(refMagic), make([]byte, 24)...)
	if other.take(ref) != nil || sp.take(ref) != nil {
		t.Error("a forged reference was taken")
	}
	if _, err := (signer{key: []byte("other")}).decodeZMQ(got, sp); err == nil {
		t.Error("a spooled message with a wrong signature was taken")
	}
}

// TestBudget: a message waits while others hold the budget, except one
// arriving when none does.
func TestBudget(t *testing.T) {
	b := newBudget(10)
	done := make(chan struct{})
	if !b.acquire(100, done) {
		t.Fatal("the first message, over the budget, was refused")
	}
	got := make(chan bool)
	go func() { got <- b.acquire(1, done) }()
	select {
	case <-got:
		t.Fatal("a message passed while the budget was spent")
	default:
	}
	b.release(100)
	if !<-got {
		t.Fatal("the waiting message was refused")
	}
	go func() { got <- b.acquire(20, done) }()
	close(done)
	if <-got {
		t.Error("a message passed after the kernel ended")
	}
}

// TestSpoolRefused: frames the disk refuses are read to their end and
// stand as references that say why; the stream after them is intact.
func TestSpoolRefused(t *testing.T) {
	sp, err := newSpooler(filepath.Join(t.TempDir(), "gone"))
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	var stream bytes.Buffer
	stream.Write(make([]byte, 64))
	for _, n := range []int{3 << 20, 2 << 20} {
		stream.WriteByte(0x03) // more, long
		binary.Write(&stream, binary.BigEndian, uint64(n))
		stream.Write(bytes.Repeat([]byte{'b'}, n))
	}
	stream.Write([]byte{0x00, 5, 'h', 'e', 'l', 'l', 'o'})
	a, b := net.Pipe()
	go func() { a.Write(stream.Bytes()); a.Close() }()
	out, err := io.ReadAll(&spoolConn{Conn: b, sp: sp, r: newReader(b), greeting: 64})
	if err != nil {
		t.Fatal(err)
	}
	rest := out[64:]
	for i := range 2 {
		if rest[0] != 0x01 || int(rest[1]) != refLen {
			t.Fatalf("frame %d: flags %x, size %d", i, rest[0], rest[1])
		}
		p := sp.take(rest[2 : 2+refLen])
		if p == nil || p.err == nil || p.path != "" {
			t.Errorf("frame %d: %+v, want a reference saying why it was dropped", i, p)
		}
		rest = rest[2+refLen:]
	}
	if string(rest) != "\x00\x05hello" {
		t.Errorf("after the dropped frames: %q", rest)
	}
}
