package jupyter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWSSpooled: a gateway frame over bigFrame, in each framing, is
// spooled as it is read; its headers come back from the file and its
// stream text streams from there, whole. A frame the disk refuses is
// read to its end and dropped, saying its size and why.
func TestWSSpooled(t *testing.T) {
	id := identity{session: "s", username: "u"}
	text := strings.Repeat("z\u00e9\n", 1<<20) // 4 MB
	m, _ := id.request("stream", map[string]string{"name": "stdout", "text": text})
	m.Parent = Header{MsgID: "cell-1", MsgType: "execute_request"}
	js, err := encodeWSJSON(iopubCh, m)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := encodeWSv1(iopubCh, m)
	if err != nil {
		t.Fatal(err)
	}
	legacy := binary.BigEndian.AppendUint32(nil, 1)
	legacy = binary.BigEndian.AppendUint32(legacy, 8)
	legacy = append(legacy, js...)
	for _, c := range []struct {
		name     string
		frame    []byte
		text, v1 bool
	}{{"json", js, true, false}, {"v1", v1, false, true}, {"legacy", legacy, false, false}} {
		dir := t.TempDir()
		fr, err := readWS(bytes.NewReader(c.frame), dir)
		if err != nil || fr.path == "" || fr.size != int64(len(c.frame)) {
			t.Fatalf("%s: %+v %v, want it spooled", c.name, fr, err)
		}
		ch, got, err := decodeSpooledWS(fr, c.text, c.v1)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ch != iopubCh || got.Type() != "stream" || got.ParentID() != "cell-1" || got.big == nil {
			t.Errorf("%s: channel %q, %+v", c.name, ch, got.Header)
		}
		r, done, err := got.big.open()
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err = streamText(r, func(p []byte) { out.Write(p) })
		done()
		if err != nil || out.String() != text {
			t.Errorf("%s: streamed %d bytes (%v), want %d", c.name, out.Len(), err, len(text))
		}
		got.release()
		if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
			t.Errorf("%s: files left: %v", c.name, left)
		}
	}
	small, err := readWS(bytes.NewReader([]byte(`{"a":1}`)), t.TempDir())
	if err != nil || small.path != "" || string(small.b) != `{"a":1}` {
		t.Errorf("a small frame: %+v %v, want it in memory", small, err)
	}
	_, err = readWS(bytes.NewReader(js), filepath.Join(t.TempDir(), "gone"))
	var dropped *frameDropped
	if !errors.As(err, &dropped) || dropped.size != int64(len(js)) || !strings.Contains(err.Error(), "could not be spooled") {
		t.Errorf("a frame the disk refuses: %v", err)
	}
}

// FuzzDecodeSpooledWS: no frame makes the spooled decoder panic.
func FuzzDecodeSpooledWS(f *testing.F) {
	id := identity{session: "s", username: "u"}
	m, _ := id.request("stream", map[string]string{"text": "x"})
	js, _ := encodeWSJSON(iopubCh, m)
	v1, _ := encodeWSv1(iopubCh, m)
	f.Add(js, byte(0))
	f.Add(v1, byte(1))
	f.Add(append([]byte{0, 0, 0, 1, 0, 0, 0, 8}, js...), byte(2))
	f.Fuzz(func(t *testing.T, b []byte, kind byte) {
		dir := t.TempDir()
		fr := &wsFrame{path: filepath.Join(dir, "f"), size: int64(len(b))}
		if err := writeFile(fr.path, b); err != nil {
			t.Fatal(err)
		}
		_, m, err := decodeSpooledWS(fr, kind%3 == 0, kind%3 == 1)
		if err == nil && m.big != nil && (m.big.off < 0 || m.big.off+m.big.size > int64(len(b))) {
			t.Errorf("content at %d+%d in %d bytes", m.big.off, m.big.size, len(b))
		}
	})
}

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o600) }
