package jupyter

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// The channels WebSocket of a Jupyter Server carries every channel's
// messages on one connection, in one of two framings: JSON text with a
// "channel" field (the default, and all Jupyter Server 1.x speaks), or,
// when the client asks for the subprotocol v1Protocol and the server
// agrees, binary frames: an offset table then the channel name and the
// message's parts. No signatures: the server signs towards the kernel.

// v1Protocol is the WebSocket subprotocol of binary kernel frames.
const v1Protocol = "v1.kernel.websocket.jupyter.org"

// wsJSON is a message in the default JSON framing.
type wsJSON struct {
	Channel  string          `json:"channel"`
	Header   json.RawMessage `json:"header"`
	Parent   json.RawMessage `json:"parent_header"`
	Metadata json.RawMessage `json:"metadata"`
	Content  json.RawMessage `json:"content"`
	Buffers  []any           `json:"buffers,omitempty"`
}

// encodeWSJSON frames m for channel ch as JSON text.
func encodeWSJSON(ch string, m *Msg) ([]byte, error) {
	parts, err := m.parts()
	if err != nil {
		return nil, fmt.Errorf("cannot encode a %s: %w", m.Type(), err)
	}
	return json.Marshal(wsJSON{Channel: ch, Header: parts[0], Parent: parts[1], Metadata: parts[2], Content: parts[3]})
}

// decodeWSJSON reads a JSON text frame.
func decodeWSJSON(b []byte) (string, *Msg, error) {
	var w wsJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return "", nil, fmt.Errorf("a frame from the gateway is not a Jupyter message: %w", err)
	}
	if len(w.Header) == 0 {
		return "", nil, errors.New("a frame from the gateway has no message header")
	}
	if len(w.Parent) == 0 || string(w.Parent) == "null" {
		w.Parent = json.RawMessage("{}")
	}
	m, err := decodeParts([][]byte{w.Header, w.Parent, w.Metadata, w.Content})
	return w.Channel, m, err
}

// decodeWSLegacyBinary reads the binary frame the JSON framing uses for a
// message that has buffers: a big-endian count n, n 32-bit offsets, the
// message as JSON text, then its buffers.
func decodeWSLegacyBinary(b []byte) (string, *Msg, error) {
	if len(b) < 4 {
		return "", nil, errors.New("a binary frame from the gateway is too short")
	}
	n := int(binary.BigEndian.Uint32(b))
	if n < 1 || len(b) < 4*(n+1) {
		return "", nil, fmt.Errorf("a binary frame from the gateway says %d parts but is %d bytes", n, len(b))
	}
	offs := make([]int, n+1)
	for i := range n {
		offs[i] = int(binary.BigEndian.Uint32(b[4*(i+1):]))
	}
	offs[n] = len(b)
	if err := checkOffsets(offs, 4*(n+1), len(b)); err != nil {
		return "", nil, err
	}
	ch, m, err := decodeWSJSON(b[offs[0]:offs[1]])
	if err != nil {
		return "", nil, err
	}
	for i := 1; i < n; i++ {
		m.Buffers = append(m.Buffers, b[offs[i]:offs[i+1]])
	}
	return ch, m, nil
}

// encodeWSv1 frames m for channel ch in the v1 binary framing: a
// little-endian 64-bit count of offsets, the offsets (each part's start,
// then the end), then the channel name, header, parent header, metadata,
// content and buffers.
func encodeWSv1(ch string, m *Msg) ([]byte, error) {
	parts, err := m.parts()
	if err != nil {
		return nil, fmt.Errorf("cannot encode a %s: %w", m.Type(), err)
	}
	all := append(append([][]byte{[]byte(ch)}, parts...), m.Buffers...)
	count := len(all) + 1
	size := 8 * (count + 1)
	for _, p := range all {
		size += len(p)
	}
	out := make([]byte, 8*(count+1), size)
	binary.LittleEndian.PutUint64(out, uint64(count))
	off := 8 * (count + 1)
	for i, p := range all {
		binary.LittleEndian.PutUint64(out[8*(i+1):], uint64(off))
		off += len(p)
	}
	binary.LittleEndian.PutUint64(out[8*count:], uint64(off))
	for _, p := range all {
		out = append(out, p...)
	}
	return out, nil
}

// decodeWSv1 reads a v1 binary frame.
func decodeWSv1(b []byte) (string, *Msg, error) {
	if len(b) < 8 {
		return "", nil, errors.New("a binary frame from the gateway is too short")
	}
	count := binary.LittleEndian.Uint64(b)
	if count < 6 || count > uint64(len(b))/8 {
		return "", nil, fmt.Errorf("a binary frame from the gateway says %d offsets but is %d bytes", count, len(b))
	}
	n := int(count)
	offs := make([]int, n)
	for i := range n {
		offs[i] = int(binary.LittleEndian.Uint64(b[8*(i+1):]))
	}
	if err := checkOffsets(offs, 8*(n+1), len(b)); err != nil {
		return "", nil, err
	}
	part := func(i int) []byte { return b[offs[i]:offs[i+1]] }
	m, err := decodeParts([][]byte{part(1), part(2), part(3), part(4)})
	if err != nil {
		return "", nil, err
	}
	for i := 5; i < n-1; i++ {
		m.Buffers = append(m.Buffers, part(i))
	}
	return string(part(0)), m, nil
}

// checkOffsets makes sure offsets rise from at least first to at most
// end, so that no slice of a hostile frame panics.
func checkOffsets(offs []int, first, end int) error {
	prev := first
	for _, o := range offs {
		if o < prev || o > end {
			return fmt.Errorf("a binary frame from the gateway has an offset %d out of order or past its %d bytes", o, end)
		}
		prev = o
	}
	return nil
}
