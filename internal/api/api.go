// Package api defines the daemon's wire protocol: the paths, request bodies
// and replies that the daemon serves and the client sends. It holds types
// only, so that the daemon and the one client agree by construction.
package api

import (
	"fmt"
	"time"

	"github.com/polyrepl/polyrepl/internal/bound"
)

// Paths of the v1 API. {name} is a session name.
const (
	PathStatus    = "/v1/status"
	PathStop      = "/v1/stop"
	PathSessions  = "/v1/sessions"
	PathSession   = "/v1/sessions/{name}"
	PathExec      = "/v1/sessions/{name}/exec"
	PathWait      = "/v1/sessions/{name}/wait"
	PathInput     = "/v1/sessions/{name}/input"
	PathInterrupt = "/v1/sessions/{name}/interrupt"
	PathRestart   = "/v1/sessions/{name}/restart"
	PathKill      = "/v1/sessions/{name}/kill"
)

// VersionHeader carries the sender's polyrepl version on every request and
// reply, so either side can notice a mismatch.
const VersionHeader = "Polyrepl-Version"

// Limits the daemon enforces; the client checks them too, to fail early.
const (
	DefaultTimeout = 30 * time.Second
	MaxTimeout     = 600 * time.Second
	MaxCodeBytes   = 2 << 20 // 2 MiB of code per cell
	MaxNameLen     = 64
	OutputLimit    = 30000 // characters of output per reply
	ValueLimit     = 10000 // characters of a value's repr
	// ErrorLimit bounds a cell's error, message and traceback together,
	// in a reply and in a record entry; the whole error is saved to a
	// file, as long output is.
	ErrorLimit       = 10000
	NameChars        = "letters, digits, '.', '_' and '-' (not starting with '.' or '-')"
	MaxEnvBytes      = 1 << 20
	DefaultRuntime   = "python"
	InterruptTimeout = 5 * time.Second
)

// Cell statuses.
const (
	StatusDone        = "done"
	StatusError       = "error"
	StatusRunning     = "running"
	StatusInterrupted = "interrupted"
	StatusDead        = "dead"
	// StatusInput: the cell waits for a line of input (CellResult.Prompt
	// says what it asked); the input call answers it.
	StatusInput = "input"
)

// Prompt is what a cell waiting for input asked.
type Prompt struct {
	Text string `json:"text"` // what the runtime showed as the prompt
	// Password: the runtime asked for a secret (getpass); the answer is
	// never shown nor kept.
	Password bool `json:"password,omitempty"`
	// NoEOF: the question takes lines only; end of file would end the
	// runtime's console (R).
	NoEOF bool `json:"no_eof,omitempty"`
	// Total is how many characters the runtime's prompt had when it
	// was longer than PromptLimit (or PromptBrief, in a listing): Text
	// keeps its head and tail, and says the cut between them.
	Total int `json:"total,omitempty"`
}

// InputRequest answers the question a running cell asks: one line (Text,
// without its newline), or end of file; then waits as ExecRequest does.
type InputRequest struct {
	Text string `json:"text"`
	EOF  bool   `json:"eof,omitempty"`
	// Secret: the answer is a secret the runtime did not say it asked for
	// (bash's read -s, sudo in a subprocess): kept out of the output and
	// the record as a password's answer is.
	Secret     bool     `json:"secret,omitempty"`
	Timeout    *float64 `json:"timeout,omitempty"`
	Client     Client   `json:"client"`
	Generation string   `json:"generation,omitempty"`
	Progress   float64  `json:"progress,omitempty"`
}

// Client identifies who sent a request and through what, for busy messages
// and the shared record, where each client has its own position.
type Client struct {
	Who string `json:"who,omitempty"` // a label: "alice", "claude-code"
	How string `json:"how,omitempty"` // "cli", "mcp", "attach"
	// Conn tells apart connections with the same label (each MCP server
	// process, each attach console); "" for the CLI, whose label is it.
	Conn string `json:"conn,omitempty"`
	// Quiet asks not to be told other clients' activity
	// (POLYREPL_ACTIVITY=off).
	Quiet bool `json:"quiet,omitempty"`
	// Output and Value, if above 0, are how many characters of a cell's
	// output and value this client takes inline in a reply, below the
	// daemon's OutputLimit and ValueLimit: a model pays for each one
	// (polyrepl mcp --max-output). The whole of what they cut is saved to
	// a file that the reply's cut names.
	Output int `json:"output,omitempty"`
	Value  int `json:"value,omitempty"`
	// Reach is what this client may reach, set by the daemon for each
	// request from its HeaderCeiling and from the session its process
	// belongs to; never sent, never taken from a body. nil: no ceiling.
	Reach *Reach `json:"-"`
}

// Label names the client in a sentence: "alice via mcp", or "someone".
func (c Client) Label() string {
	w := c.Who
	if w == "" {
		w = "someone"
	}
	if c.How != "" {
		w += " via " + c.How
	}
	return w
}

// JupyterPrefix starts the runtime name of a Jupyter kernel:
// "jupyter:python3".
const JupyterPrefix = "jupyter:"

// GatewayVar names the variable of a caller's environment that gives the
// gateway of a kernel session that names none.
const GatewayVar = "POLYREPL_GATEWAY"

// Spawn says how to start a session if the name has none yet. It is used
// only on creation; restart reuses what the session was created with.
type Spawn struct {
	Runtime string `json:"runtime,omitempty"` // default "python"
	Exe     string `json:"exe,omitempty"`     // interpreter; resolved on the caller's PATH
	Cwd     string `json:"cwd"`               // absolute
	// CwdAsked says the caller named Cwd; otherwise it is where the
	// caller stands, which a live session need not be told about.
	CwdAsked bool     `json:"cwd_asked,omitempty"`
	Env      []string `json:"env"`               // the caller's environment, KEY=VALUE
	Project  string   `json:"project,omitempty"` // a project directory to activate (Julia)
	// Memory limits the session's processes, in bytes; 0 takes the
	// daemon's default ($POLYREPL_MEMORY where the daemon started).
	Memory int64 `json:"memory,omitempty"`
	// Gateway is the URL of a Jupyter Server, Kernel Gateway or
	// Enterprise Gateway that runs the session's kernel (runtime
	// jupyter:NAME), or "" for this machine. Its token comes from Env
	// ($POLYREPL_GATEWAY_TOKEN, or the file $POLYREPL_GATEWAY_TOKEN_FILE
	// names), never from here. GatewayHTTP allows http:// to a host that
	// is not this machine's loopback.
	Gateway     string `json:"gateway,omitempty"`
	GatewayHTTP bool   `json:"gateway_http,omitempty"`
	// Sandbox is the session's policy; nil asks for none (the client's
	// default, else full). The daemon keeps it Normal (sandbox.Normal),
	// so a session's spawn always says its policy.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// SandboxDefault says Sandbox is the client's default (a person's
	// $POLYREPL_SANDBOX), not asked of this call: it shapes a session
	// this call creates, and a live session of another policy is used
	// as it is, as a cwd the caller did not ask for is (CwdAsked).
	SandboxDefault bool `json:"sandbox_default,omitempty"`
}

// ExecRequest runs one cell.
type ExecRequest struct {
	Code string `json:"code"`
	// Timeout is how long the call waits for the cell, in seconds: nil
	// takes DefaultTimeout, 0 starts the cell and answers at once.
	Timeout    *float64 `json:"timeout,omitempty"`
	Spawn      Spawn    `json:"spawn"`
	Client     Client   `json:"client"`
	Generation string   `json:"generation,omitempty"` // if set, refuse unless it matches the live session
	// Progress, if above 0, asks for a stream (NDJSON StreamEvents) with a
	// progress event at least this often, in seconds, while the cell runs.
	Progress float64 `json:"progress,omitempty"`
}

// WaitRequest collects a running or finished cell.
type WaitRequest struct {
	Timeout    *float64 `json:"timeout,omitempty"` // as in ExecRequest; 0 looks without waiting
	Client     Client   `json:"client"`
	Generation string   `json:"generation,omitempty"`
	Progress   float64  `json:"progress,omitempty"` // as in ExecRequest
}

// Progress says how a running cell is doing, for clients that must show
// signs of life on long calls.
type Progress struct {
	Cell     int     `json:"cell"`
	Elapsed  float64 `json:"elapsed"`   // seconds since the cell started
	LastLine string  `json:"last_line"` // the latest line the cell printed, bounded
}

// StreamEvent is one line of a streamed reply: progress events, then
// exactly one result or error.
type StreamEvent struct {
	Progress *Progress   `json:"progress,omitempty"`
	Result   *CellResult `json:"result,omitempty"`
	Error    *ErrorReply `json:"error,omitempty"`
}

// StreamType is the content type of a streamed reply.
const StreamType = "application/x-ndjson"

// ControlRequest is the body of interrupt, restart and kill.
type ControlRequest struct {
	Client     Client `json:"client"`
	Generation string `json:"generation,omitempty"`
}

// CellError is what a cell raised, bounded by ErrorLimit where the
// daemon makes the result, so that every edge shows the same cut.
type CellError struct {
	Type      string `json:"type"`
	Message   string `json:"message"`
	Traceback string `json:"traceback,omitempty"`
	// MessageCut and TracebackCut say what ErrorLimit cut of each (head
	// and tail kept); the File of either holds the whole error.
	MessageCut   *bound.Cut `json:"message_cut,omitempty"`
	TracebackCut *bound.Cut `json:"traceback_cut,omitempty"`
}

// CellResult is the one shape of a cell's result everywhere: CLI --json,
// the record, and the facts of MCP structured content (internal/mcp
// keeps there only what its text does not say).
type CellResult struct {
	Session    string `json:"session"`
	Generation string `json:"generation"`
	Cell       int    `json:"cell"`
	Status     string `json:"status"`
	Output     string `json:"output"`
	Value      string `json:"value,omitempty"`
	// Display is the value as the runtime's own REPL shows it, prompt
	// included: "Out[3]: 42" for Python, "=> 42" for Ruby, "[1] 42" for R.
	Display   string     `json:"display,omitempty"`
	Error     *CellError `json:"error,omitempty"`
	Elapsed   float64    `json:"elapsed"` // seconds since the cell started
	OutputCut *bound.Cut `json:"output_cut,omitempty"`
	ValueCut  *bound.Cut `json:"value_cut,omitempty"`
	// Rich are the cell's rich outputs (figures, images), each saved
	// whole as a file; RichMore counts those past the bound, not saved.
	Rich     []Rich `json:"rich,omitempty"`
	RichMore int    `json:"rich_more,omitempty"`
	// Prompt is the question a cell with status input waits on.
	Prompt *Prompt `json:"prompt,omitempty"`
	Notes  []Note  `json:"notes,omitempty"`
	// Activity is what other clients did in the session since this client
	// last heard: data from the shared session, told before the result.
	Activity *Activity `json:"activity,omitempty"`
}

// RichBudget bounds the bytes of rich outputs a session's record keeps:
// past it a cell's new figures are not kept, and the reply says so; they
// are freed as their entries leave the record.
const RichBudget = 500 << 20

// Rich is one rich output of a cell — a matplotlib figure, an image —
// saved whole as a file: each edge shows it its own way (a line with the
// path for people, an image block for a model).
type Rich struct {
	MIME   string `json:"mime"` // "image/png"
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
	Bytes  int64  `json:"bytes"`
	File   string `json:"file"`
	Text   string `json:"text,omitempty"` // its text/plain form
}

// Death says how a session's life ended.
type Death struct {
	Cause    string    `json:"cause"` // in words: "killed by signal 9 (SIGKILL)"
	By       string    `json:"by"`    // one of the By constants
	At       time.Time `json:"at"`    // when
	ExitCode int       `json:"exit_code,omitempty"`
	Signal   int       `json:"signal,omitempty"`
}

// SessionInfo is one line of `polyrepl sessions`.
type SessionInfo struct {
	Name       string    `json:"name"`
	Generation string    `json:"generation"`
	Runtime    string    `json:"runtime"`
	Version    string    `json:"version"`
	Exe        string    `json:"exe"`
	PID        int       `json:"pid"`
	State      string    `json:"state"` // one of the State constants
	Created    time.Time `json:"created"`
	LastActive time.Time `json:"last_active"`
	Cells      int       `json:"cells"`
	Memory     uint64    `json:"memory"` // bytes, the whole process tree
	// MemoryShared: the session shares pages with a fork (it is one, or
	// was forked), and Memory is their proportional set size, each
	// shared page counted as its share, so the two do not each count it.
	MemoryShared bool `json:"memory_shared,omitempty"`
	// Where is where the runtime runs, if not on this machine: a Jupyter
	// gateway's URL and the kernel's id there.
	Where string `json:"where,omitempty"`
	// MemoryLimit is the limit in force, in bytes (0: none), and
	// LimitBy how: "cgroup" or "cgroup v1" (the tree together) or
	// "rlimit" (each process).
	MemoryLimit int64    `json:"memory_limit,omitempty"`
	LimitBy     string   `json:"limit_by,omitempty"`
	Cwd         string   `json:"cwd"`
	Names       []string `json:"names"`
	// NamesTotal is how many names the session has when Names lists
	// only the first ListedNames of them.
	NamesTotal int      `json:"names_total,omitempty"`
	Running    *Running `json:"running,omitempty"`
	// Stopped: the runtime is stopped by a signal (SIGSTOP, SIGTSTP) and
	// runs nothing, its cell included, until SIGCONT (interrupt sends it).
	Stopped    bool   `json:"stopped,omitempty"`
	Unread     bool   `json:"unread"` // output or a result nobody has collected
	Death      *Death `json:"death,omitempty"`
	Transcript string `json:"transcript"`
	// Holder is the pid of the process that keeps the runtime, so it
	// outlives the daemon; HolderVersion is its polyrepl version when it
	// is not the daemon's (the session runs that version's holder and
	// worker until it is restarted).
	Holder        int    `json:"holder,omitempty"`
	HolderVersion string `json:"holder_version,omitempty"`
	// Problem says why an unreachable session cannot be used.
	Problem string `json:"problem,omitempty"`
	// Sandbox is the session's policy (nil: full), and Enforced what
	// the kernel enforces of it, part by part.
	Sandbox  *Sandbox  `json:"sandbox,omitempty"`
	Enforced *Enforced `json:"enforced,omitempty"`
	// Fork says which session this one is a fork of, and after which
	// of its cells.
	Fork *Fork `json:"fork,omitempty"`
	// Checkpoints are the session's, oldest first (polyrepl checkpoint).
	Checkpoints []Checkpoint `json:"checkpoints,omitempty"`
}

// Running describes the cell a session is running.
type Running struct {
	Cell    int       `json:"cell"`
	Started time.Time `json:"started"`
	Client  Client    `json:"client"`
	Code    string    `json:"code"` // first line, bounded
	// Input is the prompt of the question the cell waits on, if it asked
	// one: the session runs nothing else until it is answered.
	Input *Prompt `json:"input,omitempty"`
}

// RuntimeInfo is one runtime a session can run in, as a new session
// would find it: `polyrepl runtimes` and the MCP runtimes tool.
type RuntimeInfo struct {
	Name    string `json:"name"`
	Family  string `json:"family"` // how it is driven: worker, terminal, jupyter
	Exe     string `json:"exe"`    // the executable a new session would start
	Path    string `json:"path,omitempty"`
	Found   bool   `json:"found"`
	Version string `json:"version,omitempty"`
	EnvVar  string `json:"env_var"` // the variable naming another executable
	Needs   string `json:"needs"`   // what to install, in words
	Limits  string `json:"limits,omitempty"`
	// Forks: its sessions can be forked (polyrepl fork); NoFork says why
	// not.
	Forks   bool   `json:"forks,omitempty"`
	NoFork  string `json:"no_fork,omitempty"`
	Problem string `json:"problem,omitempty"` // why it was not found
	// Display and Language describe a Jupyter kernel as its kernel.json
	// does: "Python 3 (ipykernel)", "python".
	Display  string `json:"display,omitempty"`
	Language string `json:"language,omitempty"`
}

// RuntimesReply lists runtimes (MCP structured output is an object).
type RuntimesReply struct {
	Runtimes []RuntimeInfo `json:"runtimes"`
}

// SessionsReply lists sessions.
type SessionsReply struct {
	Sessions []SessionInfo `json:"sessions"`
}

// KillReply says what kill or restart did. Session is the name, as in
// every reply; Info is the session as SessionsReply lists it: for kill
// the life that ended (its names are what was lost), for restart the
// new one.
type KillReply struct {
	Session string      `json:"session"`
	Info    SessionInfo `json:"info"`
	Notes   []Note      `json:"notes,omitempty"`
}

// StatusReply describes the daemon.
type StatusReply struct {
	PID      int       `json:"pid"`
	Version  string    `json:"version"`
	Socket   string    `json:"socket"`
	Log      string    `json:"log"`
	StateDir string    `json:"state_dir"`
	Started  time.Time `json:"started"`
	Sessions int       `json:"sessions"`
	// Goroutines and FDs are the daemon's own, to watch for leaks.
	Goroutines int `json:"goroutines"`
	FDs        int `json:"fds"`
	// Memory says how sessions' memory limits are held, and the default.
	Memory string `json:"memory"`
	// MemoryCap is the cap on all sessions together, when the daemon
	// was started with one.
	MemoryCap *MemoryCap `json:"memory_cap,omitempty"`
}

// MemoryCap is the cap on all sessions' memory together (polyrepl daemon
// --memory-total, $POLYREPL_MEMORY_TOTAL) as it stands.
type MemoryCap struct {
	Bytes    int64  `json:"bytes"`
	Enforced bool   `json:"enforced"`
	By       string `json:"by,omitempty"`    // "cgroup" or "cgroup v1", when enforced
	Group    string `json:"group,omitempty"` // the cgroup every session's is under, when enforced
	Why      string `json:"why,omitempty"`   // why it is not enforced, when it is not
	// InUse is what the sessions use together now, in bytes: as the
	// kernel counts it against the cap (page cache included) when the
	// cap is enforced, else the resident memory of their processes.
	InUse   int64  `json:"in_use"`
	Counted string `json:"counted"` // "cgroup" or "rss": how InUse was counted
	// Outside lists live sessions the cap does not hold: started by a
	// daemon without it (and taken up since), or on a gateway.
	Outside []string `json:"outside,omitempty"`
}

// StopRequest stops the daemon: KeepSessions leaves every session
// running in its holder, for the next daemon to take up (an upgrade);
// otherwise every session ends with it.
type StopRequest struct {
	KeepSessions bool `json:"keep_sessions,omitempty"`
}

// StopReply lists what stopping the daemon ended, or kept.
type StopReply struct {
	PID   int           `json:"pid"`
	Ended []SessionInfo `json:"ended"`
	Kept  []SessionInfo `json:"kept,omitempty"`
}

// KeepsHeader, on every reply, says that the daemon leaves its sessions
// to their holders when asked (StopRequest.KeepSessions), so that a
// client of a newer version may replace it without losing them; a
// daemon without it would end them.
const KeepsHeader = "Polyrepl-Keeps-Sessions"

// ErrorReply is the body of every non-2xx reply.
//
// Error and Hint are written for any reader (no command, flag or tool
// names); Field and Next say the rest as data, for each edge to word in
// its reader's terms.
type ErrorReply struct {
	Error string `json:"error"`
	Hint  string `json:"hint,omitempty"`
	// Code classifies the error for programs: one of the Code constants.
	Code string `json:"code"`
	// Field names the input that was wrong: one of the Field constants.
	Field string `json:"field,omitempty"`
	// Next are the steps that help, in order.
	Next []Action `json:"next,omitempty"`
	// Death is set when the error is about a session that died.
	Death *Death `json:"death,omitempty"`
	// Lost says what the death lost (a NoteLost), the first time this
	// client hears of it; the edges word it in place of Error.
	Lost *Note `json:"lost,omitempty"`
}

// ValidateName checks a session name. It becomes a file name and a URL
// path segment, so it must be short and plain.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("the session name is empty")
	case len(name) > MaxNameLen:
		return fmt.Errorf("the session name is %d characters long; the limit is %d", len(name), MaxNameLen)
	case !plainName(name):
		return fmt.Errorf("invalid session name %q", name)
	}
	return nil
}

// plainName is the pattern ^[A-Za-z0-9_][A-Za-z0-9._-]*$, checked by hand:
// a regexp compiled at init would cost every CLI start.
func plainName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
		case (c == '.' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// Readable rounds d the way a person reads it: 850ms, 12.3s, 3m4s.
func Readable(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < time.Minute:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// Seconds is a timeout for a request: a pointer, because a timeout of 0
// (answer at once) must differ on the wire from none given (the default).
func Seconds(secs float64) *float64 { return &secs }
