package jupyter

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// A gateway forwards each kernel message as one WebSocket frame, as
// large as the kernel made it. A frame over bigFrame is spooled to a
// file as it is read, never held whole (spoolWS); its small parts (the
// channel, the headers) are read from the file, and its content stays
// there, a stream's text read piece by piece as from a kernel here. A
// frame over maxGatewayFrame is read to its end and dropped, said.

// wsFrame is one frame read from a gateway: in memory, or in a file.
type wsFrame struct {
	b    []byte
	path string // the file holding it, when spooled
	size int64
}

func (f *wsFrame) remove() {
	if f.path != "" {
		os.Remove(f.path)
	}
}

// readWS reads one frame from r, spooling it to a file in dir when it is
// over bigFrame. A frame over maxGatewayFrame is read to its end and
// refused with errFrameTooBig (its size said).
func readWS(r io.Reader, dir string) (*wsFrame, error) {
	var head bytes.Buffer
	n, err := io.CopyN(&head, r, bigFrame+1)
	if err == io.EOF {
		return &wsFrame{b: head.Bytes(), size: n}, nil
	}
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "jupyter-frame-*") // 0600
	if err != nil {
		m, _ := io.Copy(io.Discard, r)
		return nil, &frameDropped{size: n + m, why: fmt.Errorf("it could not be spooled to disk: %w", err)}
	}
	fr := &wsFrame{path: f.Name()}
	_, err = f.Write(head.Bytes())
	cr := &countReader{r: io.LimitReader(r, maxGatewayFrame-n+1)}
	if err == nil {
		_, err = io.Copy(f, cr)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	fr.size = n + cr.n
	switch {
	case err != nil:
		fr.remove()
		rest, _ := io.Copy(io.Discard, r)
		return nil, &frameDropped{size: fr.size + rest, why: fmt.Errorf("it could not be spooled to disk: %w", err)}
	case fr.size > maxGatewayFrame:
		fr.remove()
		rest, _ := io.Copy(io.Discard, r)
		return nil, &frameDropped{size: fr.size + rest, why: fmt.Errorf("polyrepl takes at most %d MB from a gateway in one frame", maxGatewayFrame>>20)}
	}
	return fr, nil
}

// frameDropped is a gateway frame read to its end and dropped.
type frameDropped struct {
	size int64
	why  error
}

func (e *frameDropped) Error() string {
	return fmt.Sprintf("the gateway sent a message of %d MB that was dropped: %v", e.size>>20, e.why)
}

// decodeSpooledWS reads a spooled frame: its parts before the content
// from the file, its content left there (buffers are dropped).
func decodeSpooledWS(fr *wsFrame, text, v1 bool) (string, *Msg, error) {
	f, err := os.Open(fr.path)
	if err != nil {
		return "", nil, fmt.Errorf("cannot read back a frame from the gateway: %w", err)
	}
	defer f.Close()
	whole := io.NewSectionReader(f, 0, fr.size)
	switch {
	case text:
		return decodeSpooledJSON(fr.path, whole, 0)
	case v1:
		offs, err := spooledOffsets(whole, fr.size, true)
		if err != nil {
			return "", nil, err
		}
		part := func(i int) ([]byte, error) { return smallPart(whole, offs[i], offs[i+1]) }
		var parts [4][]byte
		for i := range 4 {
			if parts[i], err = part(i); err != nil {
				return "", nil, err
			}
		}
		m, err := decodeParts([][]byte{parts[1], parts[2], parts[3], nil})
		if err != nil {
			return "", nil, err
		}
		m.big = &bigPart{path: fr.path, off: offs[4], size: offs[5] - offs[4]}
		return string(parts[0]), m, nil
	default:
		offs, err := spooledOffsets(whole, fr.size, false)
		if err != nil {
			return "", nil, err
		}
		return decodeSpooledJSON(fr.path, io.NewSectionReader(f, offs[0], offs[1]-offs[0]), offs[0])
	}
}

// spooledOffsets reads a binary frame's offset table from a file: v1's
// (little-endian, 64-bit, the last the end) or the legacy one
// (big-endian, 32-bit, the frame's size added as the end), and checks
// that the offsets rise within the frame.
func spooledOffsets(r io.ReaderAt, size int64, v1 bool) ([]int64, error) {
	var b [8]byte
	short := errors.New("a binary frame from the gateway is too short")
	var offs []int64
	var first int64
	if v1 {
		if _, err := r.ReadAt(b[:8], 0); err != nil {
			return nil, short
		}
		n := binary.LittleEndian.Uint64(b[:])
		if n < 6 || n > 1024 || int64(8*(n+1)) > size {
			return nil, fmt.Errorf("a binary frame from the gateway says %d offsets but is %d bytes", n, size)
		}
		table := make([]byte, 8*n)
		if _, err := r.ReadAt(table, 8); err != nil {
			return nil, short
		}
		for i := range int(n) {
			offs = append(offs, int64(binary.LittleEndian.Uint64(table[8*i:])))
		}
		first = int64(8 * (n + 1))
	} else {
		if _, err := r.ReadAt(b[:4], 0); err != nil {
			return nil, short
		}
		n := binary.BigEndian.Uint32(b[:])
		if n < 1 || n > 1024 || int64(4*(n+1)) > size {
			return nil, fmt.Errorf("a binary frame from the gateway says %d parts but is %d bytes", n, size)
		}
		table := make([]byte, 4*n)
		if _, err := r.ReadAt(table, 4); err != nil {
			return nil, short
		}
		for i := range int(n) {
			offs = append(offs, int64(binary.BigEndian.Uint32(table[4*i:])))
		}
		offs = append(offs, size)
		first = int64(4 * (n + 1))
	}
	prev := first
	for _, o := range offs {
		if o < prev || o > size {
			return nil, fmt.Errorf("a binary frame from the gateway has an offset %d out of order or past its %d bytes", o, size)
		}
		prev = o
	}
	return offs, nil
}

// smallPart reads a part of a spooled frame that must be small (a
// header, a channel's name).
func smallPart(r io.ReaderAt, from, to int64) ([]byte, error) {
	if to-from > bigFrame {
		return nil, fmt.Errorf("a message from the gateway has a part of %d bytes before its content; it was dropped", to-from)
	}
	b := make([]byte, to-from)
	if _, err := r.ReadAt(b, from); err != nil && !(err == io.EOF && len(b) == 0) {
		return nil, fmt.Errorf("cannot read back a frame from the gateway: %w", err)
	}
	return b, nil
}

// decodeSpooledJSON reads a message in the JSON framing from r, which
// starts at base in the file path: its members but the content read
// whole (each at most bigFrame), the content left in the file.
func decodeSpooledJSON(path string, r *io.SectionReader, base int64) (string, *Msg, error) {
	cr := &countReader{r: r}
	s := &textScanner{r: bufio.NewReaderSize(cr, 64<<10)}
	pos := func() int64 { return cr.n - int64(s.r.Buffered()) }
	spans := map[string][2]int64{}
	bad := errors.New("a frame from the gateway is not a Jupyter message")
	if b, err := s.next(); err != nil || b != '{' {
		return "", nil, bad
	}
	for first := true; ; first = false {
		b, err := s.next()
		if err != nil {
			return "", nil, bad
		}
		if b == '}' && first {
			break
		}
		if b != '"' {
			return "", nil, bad
		}
		key, err := s.key()
		if err != nil {
			return "", nil, bad
		}
		if b, err = s.next(); err != nil || b != ':' {
			return "", nil, bad
		}
		if b, err = s.next(); err != nil {
			return "", nil, bad
		}
		start := pos() - 1
		if err := s.skip(b); err != nil {
			return "", nil, bad
		}
		spans[key] = [2]int64{start, pos()}
		if b, err = s.next(); err != nil {
			return "", nil, bad
		}
		if b == '}' {
			break
		}
		if b != ',' {
			return "", nil, bad
		}
	}
	read := func(key string) ([]byte, error) {
		sp, ok := spans[key]
		if !ok {
			return nil, nil
		}
		return smallPart(r, sp[0], sp[1])
	}
	var w wsJSON
	var err error
	if w.Header, err = read("header"); err != nil {
		return "", nil, err
	}
	if w.Parent, err = read("parent_header"); err != nil {
		return "", nil, err
	}
	if w.Metadata, err = read("metadata"); err != nil {
		return "", nil, err
	}
	ch, err := read("channel")
	if err != nil {
		return "", nil, err
	}
	json.Unmarshal(ch, &w.Channel)
	if len(w.Header) == 0 {
		return "", nil, errors.New("a frame from the gateway has no message header")
	}
	if len(w.Parent) == 0 || string(w.Parent) == "null" {
		w.Parent = json.RawMessage("{}")
	}
	m, err := decodeParts([][]byte{w.Header, w.Parent, w.Metadata, nil})
	if err != nil {
		return "", nil, err
	}
	if c, ok := spans["content"]; ok {
		m.big = &bigPart{path: path, off: base + c[0], size: c[1] - c[0]}
	} else {
		m.Content = json.RawMessage("{}")
	}
	return w.Channel, m, nil
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
