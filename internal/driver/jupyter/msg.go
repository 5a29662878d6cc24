package jupyter

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// protocolVersion is the version of the Jupyter messaging protocol this
// client speaks (5.3: the stdin channel's password field, control
// channel interrupts).
const protocolVersion = "5.3"

// delimiter separates a ZeroMQ message's routing identities from the
// Jupyter message.
const delimiter = "<IDS|MSG>"

// Header is a message's header, and its parent_header: the header of the
// request a message answers or was caused by.
type Header struct {
	MsgID    string `json:"msg_id"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
}

// Msg is one Jupyter message, whichever channel or framing carried it.
type Msg struct {
	Header   Header          `json:"header"`
	Parent   Header          `json:"parent_header"`
	Metadata json.RawMessage `json:"metadata"`
	Content  json.RawMessage `json:"content"`
	// Buffers are binary parts after the content (widgets use them);
	// polyrepl only passes them over.
	Buffers [][]byte `json:"-"`
	// big holds the content instead of Content when it was too large to
	// take into memory (see spool.go); release removes it.
	big *bigPart
}

// errTooBig is a message content over maxWhole, which is not read whole.
var errTooBig = errors.New("too large to take whole")

// Size is the content's length in bytes, wherever it is.
func (m *Msg) Size() int64 {
	if m.big != nil {
		return m.big.size
	}
	return int64(len(m.Content))
}

// release lets go of a spooled content's file.
func (m *Msg) release() {
	if m != nil && m.big != nil {
		m.big.remove()
	}
}

// Type is the message's type: "execute_request", "stream"…
func (m *Msg) Type() string { return m.Header.MsgType }

// ParentID is the id of the request m answers, or "".
func (m *Msg) ParentID() string { return m.Parent.MsgID }

// Decode reads m's content into v.
func (m *Msg) Decode(v any) error {
	content := m.Content
	if m.big != nil {
		if m.big.err != nil {
			return m.big.err
		}
		if m.big.size > maxWhole {
			return fmt.Errorf("a %s message from the kernel of %d bytes is %w (polyrepl reads at most %d MB of one)", m.Type(), m.big.size, errTooBig, maxWhole>>20)
		}
		b, err := m.big.read()
		if err != nil {
			return err
		}
		content = b
	}
	if err := json.Unmarshal(content, v); err != nil {
		return fmt.Errorf("a %s message from the kernel has content polyrepl cannot read: %w", m.Type(), err)
	}
	return nil
}

// identity is who sends requests: one client session, as Jupyter's own
// clients name themselves.
type identity struct {
	session  string
	username string
	seq      int
}

// request builds a message of type typ with content, a new msg_id of
// the session, as the protocol wants every request.
func (id *identity) request(typ string, content any) (*Msg, error) {
	return id.requestTagged(typ, content, "_")
}

// requestTagged is request with tag between the session and the number
// in its msg_id, so that what answers it is known by its parent's id.
func (id *identity) requestTagged(typ string, content any, tag string) (*Msg, error) {
	c, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("cannot encode a %s: %w", typ, err)
	}
	id.seq++
	return &Msg{
		Header: Header{
			MsgID: fmt.Sprintf("%s%s%d", id.session, tag, id.seq), Session: id.session, Username: id.username,
			Date: time.Now().UTC().Format(time.RFC3339Nano), MsgType: typ, Version: protocolVersion,
		},
		Metadata: json.RawMessage("{}"),
		Content:  c,
	}, nil
}

// parts are the four JSON parts of m that are signed and sent, in order.
func (m *Msg) parts() ([][]byte, error) {
	header, err := json.Marshal(m.Header)
	if err != nil {
		return nil, err
	}
	parent := []byte("{}")
	if m.Parent.MsgID != "" {
		if parent, err = json.Marshal(m.Parent); err != nil {
			return nil, err
		}
	}
	meta, content := []byte(m.Metadata), []byte(m.Content)
	if len(meta) == 0 {
		meta = []byte("{}")
	}
	if len(content) == 0 {
		content = []byte("{}")
	}
	return [][]byte{header, parent, meta, content}, nil
}

// signer signs and checks messages with the connection's key
// (HMAC-SHA256, the only scheme polyrepl writes into a connection file);
// an empty key signs nothing and accepts any signature, as the protocol
// says.
type signer struct{ key []byte }

func (s signer) sign(parts [][]byte) []byte {
	if len(s.key) == 0 {
		return nil
	}
	mac := hmac.New(sha256.New, s.key)
	for _, p := range parts {
		mac.Write(p)
	}
	sum := mac.Sum(nil)
	out := make([]byte, hex.EncodedLen(len(sum)))
	hex.Encode(out, sum)
	return out
}

// errBadSignature is a message whose signature does not match: never
// acted on, since anyone on the host can reach the kernel's ports.
var errBadSignature = errors.New("a message with a wrong signature was ignored")

// encodeZMQ turns m into the frames of a ZeroMQ message: delimiter,
// signature, the four JSON parts, buffers.
func (s signer) encodeZMQ(m *Msg) ([][]byte, error) {
	parts, err := m.parts()
	if err != nil {
		return nil, fmt.Errorf("cannot encode a %s: %w", m.Type(), err)
	}
	frames := make([][]byte, 0, 6+len(m.Buffers))
	frames = append(frames, []byte(delimiter), s.sign(parts))
	frames = append(frames, parts...)
	return append(frames, m.Buffers...), nil
}

// decodeZMQ reads the frames of a ZeroMQ message, checking its
// signature. A frame sp spooled (see spool.go) may stand for the
// content, which is then read from its file; anywhere else (a header of
// megabytes, a widget's buffer) the message, or the buffer, is dropped.
func (s signer) decodeZMQ(frames [][]byte, sp *spooler) (*Msg, error) {
	bigs := make([]*bigPart, len(frames))
	spooled := false
	for j, f := range frames {
		if bigs[j] = sp.take(f); bigs[j] != nil {
			spooled = true
		}
	}
	kept := -1
	defer func() {
		for j, b := range bigs {
			if b != nil && j != kept {
				b.remove()
			}
		}
	}()
	i := 0
	for i < len(frames) && !bytes.Equal(frames[i], []byte(delimiter)) {
		i++
	}
	if len(frames)-i < 6 {
		return nil, fmt.Errorf("a message from the kernel has %d frames, fewer than the protocol's 6", len(frames))
	}
	if spooled {
		for j := i; j < i+5; j++ {
			if bigs[j] != nil {
				return nil, fmt.Errorf("a message from the kernel has a part of %d bytes before its content; it was dropped", bigs[j].size)
			}
		}
	}
	sig, parts := frames[i+1], frames[i+2:i+6]
	big := bigs[i+5]
	if big != nil && big.err != nil {
		// Its content is gone: it is read only to say what was skipped.
	} else if want, err := s.signWith(parts, big); err != nil {
		return nil, err
	} else if want != nil && !hmac.Equal(want, sig) {
		return nil, errBadSignature
	}
	m, err := decodeParts(parts)
	if err != nil {
		return nil, err
	}
	if big != nil && big.err != nil && m.Type() != "stream" {
		// Unsigned, it may say only what a stream lost, never a reply.
		return nil, fmt.Errorf("a %s message of %d bytes from the kernel was dropped: %w", m.Type(), big.size, big.err)
	}
	if big != nil {
		m.Content, m.big, kept = nil, big, i+5
	}
	for j := i + 6; j < len(frames); j++ {
		if bigs[j] == nil {
			m.Buffers = append(m.Buffers, frames[j])
		}
	}
	return m, nil
}

// signWith signs parts whose content is in big's file, if big is not
// nil.
func (s signer) signWith(parts [][]byte, big *bigPart) ([]byte, error) {
	if big == nil || len(s.key) == 0 {
		return s.sign(parts), nil
	}
	mac := hmac.New(sha256.New, s.key)
	for _, p := range parts[:3] {
		mac.Write(p)
	}
	r, done, err := big.open()
	if err != nil {
		return nil, err
	}
	defer done()
	if _, err := io.Copy(mac, r); err != nil {
		return nil, fmt.Errorf("cannot read back a spooled message from the kernel: %w", err)
	}
	sum := mac.Sum(nil)
	out := make([]byte, hex.EncodedLen(len(sum)))
	hex.Encode(out, sum)
	return out, nil
}

// decodeParts reads the four JSON parts of a message.
func decodeParts(parts [][]byte) (*Msg, error) {
	m := &Msg{Metadata: parts[2], Content: parts[3]}
	if err := json.Unmarshal(parts[0], &m.Header); err != nil {
		return nil, fmt.Errorf("a message from the kernel has a header polyrepl cannot read: %w", err)
	}
	if err := json.Unmarshal(parts[1], &m.Parent); err != nil {
		return nil, fmt.Errorf("a %s message from the kernel has a parent header polyrepl cannot read: %w", m.Type(), err)
	}
	return m, nil
}
