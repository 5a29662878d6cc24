package jupyter

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"

	"github.com/go-zeromq/zmq4"
	zmqtransport "github.com/go-zeromq/zmq4/transport"
)

// A kernel sends what a cell prints as it pleases: ipykernel gathers a
// flood's writes into one stream message per flush, tens of megabytes
// each. The holder's memory must not follow. So a ZeroMQ frame larger
// than bigFrame never reaches memory whole: the kernel's connection is
// read through spoolConn, which writes such a frame's body to a file and
// hands ZeroMQ a small reference in its place; a stream message's text
// is then read from that file piece by piece (streamText), and any other
// message is read whole only up to maxWhole, and skipped past it, with
// a note saying what was skipped. Messages between the transports and
// the kernel's loop are held to inBudget bytes in all.
const (
	bigFrame = 1 << 20  // frames over this are spooled to a file
	maxWhole = 16 << 20 // the largest message content read whole
	inBudget = 16 << 20 // bytes of messages waiting for the kernel's loop
	// streamPiece is how much of a spooled stream's text is passed on
	// at a time.
	streamPiece = 256 << 10
)

// spoolTransport is the zmq4 transport "polyrepl-tcp": TCP read through
// a spoolConn of the spooler its address names.
const spoolTransport = "polyrepl-tcp"

var (
	spoolersMu sync.Mutex
	spoolers   = map[string]*spooler{}
)

func init() {
	if err := zmq4.RegisterTransport(spoolTransport, spoolTCP{}); err != nil {
		panic(err)
	}
}

// spoolTCP dials TCP and wraps the connection in the spooler named after
// the address's '/'.
type spoolTCP struct{}

func (spoolTCP) Dial(ctx context.Context, d zmqtransport.Dialer, addr string) (net.Conn, error) {
	hostport, id, _ := strings.Cut(addr, "/")
	spoolersMu.Lock()
	sp := spoolers[id]
	spoolersMu.Unlock()
	if sp == nil {
		return nil, fmt.Errorf("no spooler %q for %s", id, hostport)
	}
	c, err := d.DialContext(ctx, "tcp", hostport)
	if err != nil {
		return nil, err
	}
	return &spoolConn{Conn: c, sp: sp, r: newReader(c), greeting: 64}, nil
}

func (spoolTCP) Listen(context.Context, string) (net.Listener, error) {
	return nil, errors.New("polyrepl's kernel transport only dials")
}

func (spoolTCP) Addr(ep string) (string, error) { return ep, nil }

// spooler keeps one kernel's spooled frames: the files, by the id their
// reference carries. A reference is refMagic, the spooler's nonce (never
// sent anywhere, so no frame a kernel sends can pass for one) and the id.
type spooler struct {
	name  string // in the transport's addresses
	dir   string
	nonce [16]byte
	mu    sync.Mutex
	next  uint64
	files map[uint64]*bigPart
}

const refMagic = "\x00polyrepl-spooled\x00"

// refLen is the length of a reference frame's body.
const refLen = len(refMagic) + 16 + 8

// bigPart is a frame's body kept in a file, or, when it could not be
// (err: the disk is full), skipped.
type bigPart struct {
	path string
	off  int64 // where in the file it starts
	size int64
	err  error
}

// open opens the part for reading.
func (p *bigPart) open() (io.Reader, func(), error) {
	if p.err != nil {
		return nil, nil, p.err
	}
	f, err := os.Open(p.path)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read back a message spooled to disk: %w", err)
	}
	return io.NewSectionReader(f, p.off, p.size), func() { f.Close() }, nil
}

// read reads the whole part.
func (p *bigPart) read() ([]byte, error) {
	r, done, err := p.open()
	if err != nil {
		return nil, err
	}
	defer done()
	b := make([]byte, p.size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("cannot read back a message spooled to disk: %w", err)
	}
	return b, nil
}

func newSpooler(dir string) (*spooler, error) {
	sp := &spooler{dir: dir, files: map[uint64]*bigPart{}}
	if _, err := rand.Read(sp.nonce[:]); err != nil {
		return nil, err
	}
	sp.name = fmt.Sprintf("%x", sp.nonce[:8])
	spoolersMu.Lock()
	spoolers[sp.name] = sp
	spoolersMu.Unlock()
	return sp, nil
}

// endpoint is the zmq4 endpoint of a kernel's port through this spooler.
func (sp *spooler) endpoint(ip string, port int) string {
	return fmt.Sprintf("%s://%s:%d/%s", spoolTransport, ip, port, sp.name)
}

// spool writes n bytes from r to a new file and returns its reference.
// A file the disk refuses costs the frame, not the connection: the rest
// of it is read and dropped, and the reference says why.
func (sp *spooler) spool(r io.Reader, n int64) ([]byte, error) {
	p := &bigPart{size: n}
	cr := &countReader{r: io.LimitReader(r, n)}
	f, err := os.CreateTemp(sp.dir, "jupyter-frame-*") // 0600
	if err == nil {
		p.path = f.Name()
		_, err = io.Copy(f, cr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}
	// What the file did not take is read and dropped: the frame is
	// read to its end whatever became of it, or the stream is lost.
	if _, rerr := io.Copy(io.Discard, cr); rerr != nil {
		return nil, rerr
	}
	if cr.n < n {
		return nil, io.ErrUnexpectedEOF // the connection broke
	}
	if err != nil {
		p.path, p.err = "", fmt.Errorf("it could not be spooled to disk: %w", err)
	}
	sp.mu.Lock()
	sp.next++
	id := sp.next
	sp.files[id] = p
	sp.mu.Unlock()
	ref := make([]byte, 0, refLen)
	ref = append(append(ref, refMagic...), sp.nonce[:]...)
	return binary.BigEndian.AppendUint64(ref, id), nil
}

// take finds the file a frame refers to, if it is a reference of this
// spooler's; the file is the caller's from then on.
func (sp *spooler) take(frame []byte) *bigPart {
	if sp == nil || len(frame) != refLen || !bytes.HasPrefix(frame, []byte(refMagic)) ||
		!bytes.Equal(frame[len(refMagic):len(refMagic)+16], sp.nonce[:]) {
		return nil
	}
	id := binary.BigEndian.Uint64(frame[len(refMagic)+16:])
	sp.mu.Lock()
	defer sp.mu.Unlock()
	p := sp.files[id]
	delete(sp.files, id)
	return p
}

// close removes every file not taken, and the spooler's name.
func (sp *spooler) close() {
	spoolersMu.Lock()
	delete(spoolers, sp.name)
	spoolersMu.Unlock()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for id, p := range sp.files {
		p.remove()
		delete(sp.files, id)
	}
}

func (p *bigPart) remove() {
	if p.path != "" {
		os.Remove(p.path)
	}
}

// spoolConn passes a ZMTP 3 stream through as it comes — the greeting,
// commands, small frames — except the body of a message frame over
// bigFrame, which it spools and replaces with a reference.
type spoolConn struct {
	net.Conn
	sp       *spooler
	r        *bufio.Reader
	greeting int    // bytes of the peer's greeting still to pass
	body     int64  // bytes of the current frame's body still to pass
	pending  []byte // made bytes not yet returned
}

func (c *spoolConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	switch {
	case c.greeting > 0:
		n, err := c.r.Read(p[:min(len(p), c.greeting)])
		c.greeting -= n
		return n, err
	case c.body > 0:
		n, err := c.r.Read(p[:min(int64(len(p)), c.body)])
		c.body -= int64(n)
		return n, err
	}
	flags, err := c.r.ReadByte()
	if err != nil {
		return 0, err
	}
	var size uint64
	hdr := []byte{flags}
	if flags&0x02 != 0 { // long
		var b [8]byte
		if _, err := io.ReadFull(c.r, b[:]); err != nil {
			return 0, err
		}
		size = binary.BigEndian.Uint64(b[:])
		hdr = append(hdr, b[:]...)
	} else {
		b, err := c.r.ReadByte()
		if err != nil {
			return 0, err
		}
		size = uint64(b)
		hdr = append(hdr, b)
	}
	switch {
	case size > 1<<62:
		return 0, fmt.Errorf("the kernel sent a frame that says it has %d bytes", size)
	case flags&0x04 != 0 && size > bigFrame:
		return 0, fmt.Errorf("the kernel sent a ZeroMQ command of %d bytes", size)
	case flags&0x04 != 0 || size <= bigFrame:
		c.pending, c.body = hdr, int64(size)
		return c.Read(p)
	}
	ref, err := c.sp.spool(c.r, int64(size))
	if err != nil {
		return 0, err
	}
	c.pending = append([]byte{flags &^ 0x02, byte(len(ref))}, ref...)
	return c.Read(p)
}

// budget holds the bytes of messages on their way from the transports to
// the kernel's loop under a bound: a message waits for room, except one
// arriving when none is on its way, however large.
type budget struct {
	mu    sync.Mutex
	used  int64
	room  chan struct{} // closed when room is made
	limit int64
}

func newBudget(limit int64) *budget {
	return &budget{limit: limit, room: make(chan struct{})}
}

// acquire takes n bytes of the budget, or returns false when done closes
// first.
func (b *budget) acquire(n int64, done <-chan struct{}) bool {
	for {
		b.mu.Lock()
		if b.used == 0 || b.used+n <= b.limit {
			b.used += n
			b.mu.Unlock()
			return true
		}
		room := b.room
		b.mu.Unlock()
		select {
		case <-room:
		case <-done:
			return false
		}
	}
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	close(b.room)
	b.room = make(chan struct{})
}

func newReader(c net.Conn) *bufio.Reader { return bufio.NewReaderSize(c, 64<<10) }
