package holder

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/limit"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// Proto is the holder protocol this binary speaks. A holder states its
// protocol first thing in its Hello; a daemon adopts holders of every
// protocol from MinProto to Proto, and reports any other with what to
// do. The first fields of Hello (up to Leader) keep their meaning in
// every protocol, so that any daemon can at least say whose session a
// holder keeps and end it.
const (
	Proto    = 3
	MinProto = 3
)

// Frame types. A frame is its type (one byte), the length of its
// payload (four bytes, big-endian) and the payload: JSON for control
// messages, raw bytes for output and typing.
const (
	// holder → daemon
	frameHello   = 'H' // Hello: the session as the holder keeps it
	frameFailed  = 'F' // failure: the runtime did not start
	frameRefused = 'N' // failure: the holder will not serve this daemon
	frameOutput  = 'O' // raw output, in order
	frameDone    = 'C' // a cell's result (driver.Result)
	frameAsk     = 'Y' // a cell asks for input (driver.Prompt)
	frameLogCut  = 'G' // logCut: the cell's log file holds no more than this
	frameExited  = 'X' // the runtime's exit (exitMsg)
	frameRawOut  = 'T' // what the runtime's terminal printed, for a person attached raw
	frameRawEnd  = 'U' // the raw attachment ended
	frameReply   = 'r' // replyMsg: the answer to a call
	// A fork's holder, after the brief: where the copy is to go
	// (driver.ForkInto), answered by frameForkFrom (fork.go).
	frameForkReady = 'K'
	// Runtime: the runtime or the checkpoints changed (checkpoint.go)
	frameRuntime = 'V'

	// daemon → holder
	frameBrief = 'S' // Brief: what to start (the first frame only)
	frameCall  = 'q' // callMsg: one of the Service's operations
	frameRun   = 'R' // CellMeta as JSON, a newline, then the code
	frameRawIn = 'W' // a person's typing
	// ForkAnswer: the copy the parent's holder made, for a fork's holder
	frameForkFrom = 'P'
)

// maxFrame bounds a frame's payload: a cell's code is at most
// api.MaxCodeBytes, output comes in reads of at most outputChunk, and a
// hello carries the caller's environment.
const maxFrame = 4*api.MaxCodeBytes + api.MaxEnvBytes + 1<<20

// outputChunk is the largest output frame sent: a replay reads its
// spool in pieces this big.
const outputChunk = 256 << 10

// Brief is what the daemon asks a new holder to start: its session's
// name and life, the spawn (api.Spawn) to run, and where its files go.
type Brief struct {
	Name       string    `json:"name"`
	Generation string    `json:"generation"`
	Created    time.Time `json:"created"`
	Spawn      api.Spawn `json:"spawn"` // the session's spawn: runtime, exe, cwd, env, project, memory
	Cookie     string    `json:"cookie"`
	RuntimeDir string    `json:"runtime_dir"` // where the driver writes its files
	ValueLimit int       `json:"value_limit"`
	// SpoolDir is where the holder keeps output past what it holds in
	// memory; Socket where it listens for the daemons after this one;
	// Log the file it logs to.
	SpoolDir string `json:"spool_dir"`
	Socket   string `json:"socket"`
	Log      string `json:"log"`
	// Fork, for a fork of another session: its runtime is adopted from
	// that session's, not started (fork.go). ForkFrom is the daemon's
	// side: how it asks the parent's holder for the copy.
	Fork     *ForkBrief                                `json:"fork,omitempty"`
	ForkFrom func(driver.ForkInto) (ForkAnswer, error) `json:"-"`
}

// Hello is the session as a holder keeps it, sent to each daemon that
// connects, before the output and events it has not let go of.
type Hello struct {
	// Kept in every protocol: who this is and how to end it.
	Proto      int       `json:"proto"`
	Polyrepl   string    `json:"polyrepl"` // the holder's polyrepl version
	HolderPID  int       `json:"holder_pid"`
	Name       string    `json:"name"`
	Generation string    `json:"generation"`
	Runtime    string    `json:"runtime"`
	Cookie     string    `json:"cookie"`
	Leader     proc.Proc `json:"leader"` // the runtime process, with its start time

	Created time.Time   `json:"created"`
	Spawn   api.Spawn   `json:"spawn"`
	Version string      `json:"version"` // the runtime's
	Exe     string      `json:"exe"`
	Facts   driver.Info `json:"facts"` // the runtime's, from its driver here; no Name: a holder of an older build
	// Enforced is what the kernel enforces of the session's sandbox
	// (Spawn.Sandbox), as the holder found when it started the runtime;
	// nil for a session without one.
	Enforced *api.Enforced `json:"enforced,omitempty"`
	Note     string        `json:"note,omitempty"`
	Where    string        `json:"where,omitempty"` // where a remote runtime runs (driver.Remote)
	// ForkDir is where a fork's channels go: the runtime's driver
	// directory, which its sandbox lets it open. Forked says, for a
	// fork, how its copy was made.
	ForkDir string      `json:"fork_dir,omitempty"`
	Forked  *ForkAnswer `json:"forked,omitempty"`
	// Spare are the forks of the runtime other sessions adopted: not of
	// its tree (proc.Tree.Spare).
	Spare []proc.Proc `json:"spare,omitempty"`
	// Checkpoints are the session's, oldest first (checkpoint.go).
	Checkpoints []Checkpoint `json:"checkpoints,omitempty"`
	Limit       *limit.Held  `json:"limit,omitempty"`
	Cells       int          `json:"cells"`
	Names       []string     `json:"names,omitempty"`
	LastActive  time.Time    `json:"last_active"`
	// Cur is the cell in flight, or the last cell.
	Cur *CellState `json:"cur,omitempty"`
	// IdleAfter and IdleSeq say whose idle output is replayed: output
	// printed after cell IdleAfter finished (0: before any), recorded
	// as entry IdleSeq (0: the daemon had not recorded it yet).
	IdleAfter int `json:"idle_after,omitempty"`
	IdleSeq   int `json:"idle_seq,omitempty"`
	// Exited is the runtime's exit if it has ended (it is replayed last).
	Exited *Exit `json:"exited,omitempty"`
}

// CellMeta is what the daemon tells a holder of a cell as it runs it, so
// that a daemon adopting the session can take the cell up again.
type CellMeta struct {
	Cell    int        `json:"cell"`
	Seq     int        `json:"seq"`  // its record entry
	Code    string     `json:"code"` // its first line, bounded
	Client  api.Client `json:"client"`
	Started time.Time  `json:"started"`
	OOMs    int        `json:"ooms"` // the group's OOM kills before it
	// Whole is the file the cell's output log goes to once it is past
	// CellInMemory bytes: the cell's whole-output file in the record.
	Whole string `json:"whole,omitempty"`
}

// CellState is a cell as a holder keeps it.
type CellState struct {
	CellMeta
	// Bytes the cell printed. Past CellInMemory they are all in Whole,
	// up to Kept if the file failed (LogErr says why); before that, the
	// holder sends them after its hello.
	Bytes  int64  `json:"bytes"`
	InFile bool   `json:"in_file,omitempty"`
	Kept   int64  `json:"kept,omitempty"`
	LogErr string `json:"log_err,omitempty"`
	// Read is how far each reader (a client's key) has read the cell's
	// output, and Final which of them were given its result: a daemon
	// taking the session up goes on from there for each.
	Read  map[string]int64 `json:"read,omitempty"`
	Final map[string]bool  `json:"final,omitempty"`
	// Done: its result came (it is replayed after the output).
	Done   bool      `json:"done"`
	Status string    `json:"status,omitempty"`
	Ended  time.Time `json:"ended,omitempty"`
	// Prompt is the question the cell waits on, if it asked one nobody
	// answered yet.
	Prompt *driver.Prompt `json:"prompt,omitempty"`
}

// MaxReaders bounds the readers whose positions a cell keeps, in the
// daemon and in its holder: one past it reads the cell from its start.
const MaxReaders = 32

// Exit is how the runtime ended, as the holder saw it.
type Exit struct {
	Code   int       `json:"code"`
	Signal int       `json:"signal,omitempty"`
	Err    string    `json:"err,omitempty"`
	At     time.Time `json:"at"`
}

// exitOf is what goes on the wire for a driver.Exit.
func exitOf(e driver.Exit) *Exit {
	x := &Exit{Code: e.Code, Signal: e.Signal, At: e.At}
	if e.Err != nil {
		x.Err = e.Err.Error()
	}
	if x.At.IsZero() {
		x.At = time.Now()
	}
	return x
}

// Driver is the exit as a driver reports it.
func (x Exit) Driver() driver.Exit {
	e := driver.Exit{Code: x.Code, Signal: x.Signal, At: x.At}
	if x.Err != "" {
		e.Err = errors.New(x.Err)
	}
	return e
}

// readMark says how far a reader (a client's key) has read cell's
// output, and whether it was given the result.
type readMark struct {
	Cell   int    `json:"cell"`
	Reader string `json:"reader"`
	At     int64  `json:"at"`
	Final  bool   `json:"final,omitempty"`
}

// logCut says that the cell's log file holds its output only up to byte
// At: the disk refused the rest (Err), which the holder keeps the last
// of in memory.
type logCut struct {
	Cell int    `json:"cell"`
	At   int64  `json:"at"`
	Err  string `json:"err"`
}

// idleEntry says which record entry holds the output printed after
// cell After finished.
type idleEntry struct {
	After int `json:"after"`
	Seq   int `json:"seq"`
}

// failure says why a holder did not start a runtime, or will not serve.
type failure struct {
	Err string `json:"err"`
	// Sandbox: the session's sandbox refused to start it (a policy the
	// kernel cannot enforce, a gateway's session), not its runtime.
	Sandbox bool `json:"sandbox,omitempty"`
}

// failureLimit bounds a holder's failure where it enters the daemon:
// it quotes what a runtime printed before it failed, and a holder of
// another build may send any length.
const failureLimit = 8000

// SandboxError is a start refused by the session's sandbox, as its
// holder said: the caller's fix is the policy, not the executable.
type SandboxError struct{ Msg string }

func (e *SandboxError) Error() string { return e.Msg }

// wire is one end of a holder connection: frames written whole under a
// lock, read by one goroutine.
type wire struct {
	c   *net.UnixConn
	br  *bufio.Reader
	wmu sync.Mutex
	buf []byte // a payload read, valid until the next read
}

// newWire is the daemon's end of a connection: it reads output, in
// frames of up to outputChunk.
func newWire(c *net.UnixConn) *wire {
	return &wire{c: c, br: bufio.NewReaderSize(c, outputChunk+64)}
}

// newHolderWire is the holder's end: it reads cells, interrupts and
// acknowledgements, mostly small, so it keeps a small buffer (an idle
// holder is meant to cost little).
func newHolderWire(c *net.UnixConn) *wire {
	return &wire{c: c, br: bufio.NewReaderSize(c, 16<<10)}
}

// send writes one frame; a payload of several parts is written as one.
func (w *wire) send(typ byte, parts ...[]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n > maxFrame {
		return fmt.Errorf("a %c frame of %d bytes is over the limit of %d", typ, n, maxFrame)
	}
	var head [5]byte
	head[0] = typ
	binary.BigEndian.PutUint32(head[1:], uint32(n))
	bufs := make(net.Buffers, 0, 1+len(parts))
	bufs = append(bufs, head[:])
	for _, p := range parts {
		if len(p) > 0 {
			bufs = append(bufs, p)
		}
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	_, err := bufs.WriteTo(w.c)
	return err
}

// sendJSON writes one frame holding v as JSON.
func (w *wire) sendJSON(typ byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.send(typ, b)
}

// read reads the next frame; its payload is valid until the next read.
func (w *wire) read() (byte, []byte, error) {
	var head [5]byte
	if _, err := io.ReadFull(w.br, head[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(head[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("a %c frame of %d bytes is over the limit of %d", head[0], n, maxFrame)
	}
	if cap(w.buf) < int(n) || (cap(w.buf) > 1<<20 && n < 64<<10) {
		// A big payload's buffer is not kept for the small ones.
		w.buf = make([]byte, n, max(int(n), 4096))
	}
	w.buf = w.buf[:n]
	if _, err := io.ReadFull(w.br, w.buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return head[0], w.buf, nil
}

func (w *wire) close() error { return w.c.Close() }

// closeWrite stops writing and keeps reading: what the peer sent before
// it went can still be read.
func (w *wire) closeWrite() {
	w.c.CloseWrite()
}
