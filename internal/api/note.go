package api

import (
	"time"

	"github.com/polyrepl/polyrepl/internal/bound"
)

// Note kinds: what a note is about. Each kind says which of Note's fields
// it fills; render (for people) and mcp (for models) turn them into words.
const (
	// NoteCreated: a session was created for this call. Session, Runtime,
	// Version, Cwd, PID; Said is what the runtime said at start, if
	// anything; Again when it was started as the life before it (its
	// runtime, executable, directory, …), which died unasked or was
	// ended as Ended says (a Death's By: kill, stop); Replaced is the
	// runtime of the life before it when the call named another; Fork
	// when it was made as a fork of another session.
	NoteCreated = "created"
	// NoteForked: a record entry of the session a fork was taken from.
	// Session, Fork (Into, Cell).
	NoteForked = "forked"
	// NoteCheckpoint: a checkpoint was taken. Session, Checkpoint;
	// Again when it replaced one of its label; Dropped, the oldest it
	// ended to stay within MaxCheckpoints.
	NoteCheckpoint = "checkpoint"
	// NoteRolledBack: the session's runtime was replaced by a copy of a
	// checkpoint. Session, Checkpoint, PID (the new runtime), Cells (the
	// last cell rolled back: those after Checkpoint.Cell up to it are).
	NoteRolledBack = "rolled-back"
	// NoteRestarted: a fresh process replaced the session's. Session,
	// Runtime, Version, Cwd, PID; Names are the names that are gone (as
	// the loss note of a death says them); Cell is the cell the restart
	// ended, if one was running.
	NoteRestarted = "restarted"
	// NoteLost: a life of this name died. Session, Death, and what was
	// lost: Names, Cells, Transcript.
	NoteLost = "lost"
	// NoteEnded: a record entry, the session's life ended. Session, Death.
	NoteEnded = "ended"
	// NoteAdopted: a record entry, a daemon took the session up from the
	// holder that kept it while no daemon ran (the last one was killed,
	// crashed or was upgraded): its runtime and namespace went on.
	// Session; PID and Version are the daemon's.
	NoteAdopted = "adopted"
	// NoteAttached: a record entry, Client attached a terminal to the
	// session's runtime.
	NoteAttached = "attached"
	// NoteOthers: other sessions need attention. Others (at most
	// MaxOthers of them); Count, how many more need it, told in later
	// replies; Next collects.
	NoteOthers = "others"
	// NoteIdle: the session printed while no cell ran. Output, OutputCut,
	// and Err if the whole output could not be saved.
	NoteIdle = "idle"
	// NoteRunning: the call's timeout passed and the cell goes on.
	// Session, Cell, Elapsed; Why is StuckStopped when the runtime is
	// stopped by a signal, so it goes on only once woken; Next collects
	// or stops it.
	NoteRunning = "running"
	// NoteInput: the cell waits for a line of input. Session, Cell, Said
	// (the prompt), Why "password" if a secret is asked, "lines" if the
	// question takes no end of file (R's console); Next answers or stops
	// it.
	NoteInput = "input"
	// NoteCapped: the MCP server answered before the timeout asked for,
	// at its cap on any call's wait (polyrepl mcp --max-wait), so that
	// the client would not give up on the call. Elapsed is the cap.
	NoteCapped = "capped"
	// NoteCollected: there was nothing new to collect. Session, and the
	// last Cell with its Status and At (Cell 0: none ran yet).
	NoteCollected = "collected"
	// NoteUncollected: an earlier cell's result nobody collected. Result,
	// and Client, who sent it; the notes of that result follow it in the
	// reply.
	NoteUncollected = "uncollected"
	// NoteSentBy: the cell this reply reads was sent by another client
	// (Client), which reads the same output from its own position.
	// Session, Cell.
	NoteSentBy = "sent-by"
	// NoteNotRunning: an interrupt found no cell running. Session, and
	// the last Cell with its Status (Cell 0: none ran yet).
	NoteNotRunning = "not-running"
	// NoteStuck: a cell did not stop within Elapsed seconds of SIGINT.
	// Session, Cell, and Why, what keeps it from stopping if that is
	// known (one of the Stuck constants); Next ends it.
	NoteStuck = "stuck"
	// NoteUnchanged: what a call asked of a live session only applies
	// when one is created. Session, Asked; Next applies it.
	NoteUnchanged = "unchanged"
	// NoteChildOOM: the kernel killed Count processes of the session for
	// going over its memory limit, Limit, and the runtime lives on.
	NoteChildOOM = "child-oom"
	// NoteRuntime: something the runtime itself wants said. Said.
	NoteRuntime = "runtime"
	// NoteHint: the cell's error is a known trap of its runtime, and
	// there is a way around it. Session, Cell, Hint (one of the Hint
	// constants).
	NoteHint = "hint"
	// NoteSave: something could not be saved. Saved, what (one of the
	// Saved constants), and Err.
	NoteSave = "save"
	// NoteStray: Count events on the runtime's result channel did not
	// belong to the cell in flight (a cell can write to that channel) and
	// were ignored. Session, Cell, Count.
	NoteStray = "stray"
	// NoteDropped: the runtime's report of the cell was Count bytes, too
	// long for the daemon to take, so its value, error and names are not
	// shown; the session lives on. Session, Cell, Count.
	NoteDropped = "dropped"
	// NoteRedirected: the cell pointed descriptors FDs (1: stdout, 2:
	// stderr) away from the session's output, so what it printed after
	// that went there; they were pointed back for the next cell, unless
	// Err says why not. Session, Cell, FDs, Err.
	NoteRedirected = "redirected"
	// NoteOutputLate: the end of the cell's output did not arrive within
	// Elapsed seconds of its result, so the cell was ended without it;
	// anything that arrives later is output printed while no cell ran.
	// Session, Cell, Elapsed.
	NoteOutputLate = "output-late"
	// NoteVersion: the client and the daemon differ. Version is the
	// daemon's, ClientVersion the client's; Next ends it; Err says why
	// the client could not replace it, if it tried.
	NoteVersion = "version"
	// NoteUpgraded: the client replaced a daemon of an older version
	// with one of its own, which took up every session from its holder.
	// Version is the old daemon's, ClientVersion the new one's, PID the
	// new daemon's, Names the sessions that went on.
	NoteUpgraded = "upgraded"
	// NoteUnread: a record entry, lines of the session's record file
	// that its loader could not take and left out; the entries on the
	// other lines were read. Session, Count (the lines left out), Lines
	// (the first RecordLinesTold of them), File (the file as it was,
	// kept aside; "" with Err if it could not be).
	NoteUnread = "unread"
	// NoteElsewhere: the daemon that keeps the client's state directory
	// (StateDir) listens at Socket (pid PID), not at the socket this
	// client's environment names (OwnSocket: its XDG_RUNTIME_DIR
	// differs from the daemon's), and the client reached it there.
	// Said to a client once.
	NoteElsewhere = "elsewhere"
	// NoteSandbox: a cell was refused a write, a read or a connection
	// by its session's sandbox (Sandbox says which policy); the edges
	// say how to widen it.
	NoteSandbox = "sandbox"
)

// Why a record's loader left a line out (RecordLine.Why).
const (
	// UnreadLong: the line is longer than a record line may be (Limit
	// bytes); Bytes counts it.
	UnreadLong = "too-long"
	// UnreadMalformed: the line is not an entry (not JSON, or cut off).
	UnreadMalformed = "malformed"
	// UnreadSeq: the line's seq does not follow the entries before it:
	// it is past the next seq (After+1) by more than the lines left out
	// before it account for, or before the record's first entry (After
	// 0). It is never trusted to drop or number anything.
	UnreadSeq = "seq"
	// UnreadError: reading the file failed at this line (Err); the lines
	// after it were not read, and the seqs they may hold are not known.
	UnreadError = "error"
)

// RecordLinesTold bounds the lines an unread note lists; Count counts
// them all.
const RecordLinesTold = 10

// RecordLine is a line of a record file that its loader left out.
type RecordLine struct {
	Line  int    `json:"line"` // from 1
	Bytes int    `json:"bytes"`
	Why   string `json:"why"`
	Seq   int    `json:"seq,omitempty"`   // the seq it claims, if one could be read
	After int    `json:"after,omitempty"` // UnreadSeq: the last seq before it
	Limit int    `json:"limit,omitempty"` // UnreadLong: the bound on a line
	Err   string `json:"err,omitempty"`   // UnreadError: what failed
}

// What a hint note is about.
const (
	// HintDynamicImport: a Node cell used a static import, which only a
	// module may; await import() loads the same module in a cell.
	HintDynamicImport = "dynamic-import"
)

// What keeps a stuck cell from stopping, in a stuck note's Why.
const (
	// StuckIgnoresSIGINT: the runtime ignores SIGINT (the cell set it to
	// SIG_IGN), so an interrupt cannot reach the cell.
	StuckIgnoresSIGINT = "ignores-sigint"
	// StuckStopped: the runtime is stopped by a signal (SIGSTOP): in a
	// stuck note, it stayed stopped after SIGCONT; in a running note, it
	// makes no progress until it gets SIGCONT (interrupt sends it).
	StuckStopped = "stopped"
)

// What a save note is about.
const (
	SavedRecord     = "record"     // the shared record
	SavedTranscript = "transcript" // the cell's place in the transcript
	SavedOutput     = "output"     // the whole output, beyond what the reply holds
	SavedError      = "error"      // the whole error, beyond what the reply holds
	SavedValue      = "value"      // the whole value, beyond what the reply holds
	SavedRich       = "rich"       // a figure or image the cell showed
)

// Note is one thing a reply or the record says besides a cell's own
// output: a kind and the facts it is about, never words, so that each
// edge can say it in its reader's terms. Which fields a kind fills is
// said at its constant.
type Note struct {
	Kind    string  `json:"kind"`
	Session string  `json:"session,omitempty"`
	Cell    int     `json:"cell,omitempty"`
	Status  string  `json:"status,omitempty"`
	Client  *Client `json:"client,omitempty"`

	Runtime string `json:"runtime,omitempty"`
	Version string `json:"version,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	PID     int    `json:"pid,omitempty"`
	Again   bool   `json:"again,omitempty"`
	// Ended and Replaced: see NoteCreated.
	Ended    string `json:"ended,omitempty"`
	Replaced string `json:"replaced,omitempty"`

	Death      *Death   `json:"death,omitempty"`
	Names      []string `json:"names,omitempty"`
	Cells      int      `json:"cells,omitempty"`
	Transcript string   `json:"transcript,omitempty"`
	// Lines and File: an unread note's lines left out, and where the
	// file as it was is kept.
	Lines []RecordLine `json:"lines,omitempty"`
	File  string       `json:"file,omitempty"`

	At        *time.Time `json:"at,omitempty"`
	Elapsed   float64    `json:"elapsed,omitempty"` // seconds
	Output    string     `json:"output,omitempty"`
	OutputCut *bound.Cut `json:"output_cut,omitempty"`
	Result    *Earlier   `json:"result,omitempty"`
	Others    []Other    `json:"others,omitempty"`
	Asked     []Asked    `json:"asked,omitempty"`
	Count     int        `json:"count,omitempty"`
	Limit     string     `json:"limit,omitempty"` // a memory limit as it holds: "512 MB (cgroup)"
	Cap       bool       `json:"cap,omitempty"`   // the limit gone over was the cap on all sessions together
	Saved     string     `json:"saved,omitempty"`
	Hint      string     `json:"hint,omitempty"`
	Why       string     `json:"why,omitempty"`
	FDs       []int      `json:"fds,omitempty"`
	Err       string     `json:"err,omitempty"`
	// Said is words from outside polyrepl: what a runtime said.
	Said string `json:"said,omitempty"`
	// Socket is where the daemon listens, OwnSocket where the client's
	// environment says it would, StateDir the state directory the
	// daemon keeps: in an elsewhere note.
	Socket    string `json:"socket,omitempty"`
	OwnSocket string `json:"own_socket,omitempty"`
	StateDir  string `json:"state_dir,omitempty"`
	// ClientVersion is the client's version, in a version note.
	ClientVersion string   `json:"client_version,omitempty"`
	Next          []Action `json:"next,omitempty"`
	// Sandbox is the policy in a created note (with Enforced) and in a
	// sandbox note.
	Sandbox  *Sandbox  `json:"sandbox,omitempty"`
	Enforced *Enforced `json:"enforced,omitempty"`
	// Fork is how a session was forked, in a created or forked note.
	Fork *Fork `json:"fork,omitempty"`
	// Checkpoint and Dropped: see NoteCheckpoint and NoteRolledBack.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	Dropped    *Checkpoint `json:"dropped,omitempty"`
	// Text is the note in words, filled only where a note leaves as JSON
	// for a person's scripts (the CLI's --json); everywhere else the
	// edges word the fields.
	Text string `json:"text,omitempty"`
}

// Other is a session an others note is about: one running a cell, or
// holding output or a result nobody collected.
type Other struct {
	Session string   `json:"session"`
	State   string   `json:"state"`
	Running *Running `json:"running,omitempty"`
	Death   *Death   `json:"death,omitempty"`
	Names   []string `json:"names,omitempty"` // a dead one's lost names
	Unread  bool     `json:"unread,omitempty"`
}

// Asked is one thing a call asked of a live session that did not take
// effect: Field (one of the Field constants) as Want, while it has Have
// ("" when it has none).
type Asked struct {
	Field string `json:"field"`
	Want  string `json:"want"`
	Have  string `json:"have,omitempty"`
}

// Earlier is the result of an earlier cell that nobody collected, told
// with the next cell's reply: a CellResult's own fields, without the
// notes and activity, which the reply carrying it tells.
type Earlier struct {
	Cell      int        `json:"cell"`
	Status    string     `json:"status"`
	Output    string     `json:"output"`
	Value     string     `json:"value,omitempty"`
	Display   string     `json:"display,omitempty"`
	Error     *CellError `json:"error,omitempty"`
	Elapsed   float64    `json:"elapsed"`
	OutputCut *bound.Cut `json:"output_cut,omitempty"`
	ValueCut  *bound.Cut `json:"value_cut,omitempty"`
}

// EarlierOf is r without its notes and activity.
func EarlierOf(r CellResult) *Earlier {
	return &Earlier{Cell: r.Cell, Status: r.Status, Output: r.Output, Value: r.Value, Display: r.Display,
		Error: r.Error, Elapsed: r.Elapsed, OutputCut: r.OutputCut, ValueCut: r.ValueCut}
}

// Result is e as a result of its session, to show as one.
func (e Earlier) Result(session string) CellResult {
	return CellResult{Session: session, Cell: e.Cell, Status: e.Status, Output: e.Output, Value: e.Value, Display: e.Display,
		Error: e.Error, Elapsed: e.Elapsed, OutputCut: e.OutputCut, ValueCut: e.ValueCut}
}
