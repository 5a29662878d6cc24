// Package driver defines how a session's holder talks to one runtime: how
// a runtime process is started, given a cell, interrupted, asked for
// input and asked who it is. Each runtime family implements Driver in its
// own subpackage — worker: a small program in the runtime's language over
// pipes; terminal: a REPL driven at its prompt; jupyter: a kernel, here
// over ZeroMQ or on a gateway — and reports a cell's output, result and
// the runtime's exit to a Handler. The holder (package holder) runs the
// driver; the daemon links none and knows a runtime only by its facts
// (Info), which the holder sends it.
package driver

import (
	"bufio"
	"context"
	"fmt"
	"image/png"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/sandbox"
)

// MarkerWait bounds how long a driver waits, once a runtime reported a
// cell done, for the end of its output, before it ends the cell without
// it (Result.OutputLate).
const MarkerWait = 1500 * time.Millisecond

// Spec says what to start.
type Spec struct {
	Exe        string   // interpreter as the user named it; resolved on Env's PATH
	Cwd        string   // absolute, existing directory
	Env        []string // the caller's environment, KEY=VALUE
	Cookie     string   // KEY=VALUE added to Env, so the whole tree can be found
	RuntimeDir string   // a private directory where a driver may write its files
	// SpoolDir is a private directory on disk where a driver keeps what a
	// runtime sends past what it holds in memory (a kernel's large
	// messages); "" means RuntimeDir, which may be memory (a tmpfs).
	SpoolDir   string
	ValueLimit int    // characters of a value's repr to send back
	Project    string // a project directory to activate (Julia), or ""
	// Gateway is the Jupyter gateway that runs a kernel (api.Spawn's), and
	// GatewayHTTP allows it over http:// to another host.
	Gateway     string
	GatewayHTTP bool
	// Sandbox, when set, confines the runtime: Launch starts it through
	// the trampoline (sandbox.Command), which confines itself and then
	// becomes the runtime. RuntimeDir is then the session's own.
	Sandbox *sandbox.Spec
}

// Result is how one cell ended, as the runtime reports it.
type Result struct {
	Cell   int    `json:"cell"`
	Status string `json:"status"`          // api.StatusDone, StatusError or StatusInterrupted
	Value  string `json:"value,omitempty"` // the value's display, possibly cut (see ValueCut)
	// ValueTotal is the length in characters of the whole value display.
	ValueTotal int `json:"value_total,omitempty"`
	// ValueCut is set when the display was over the value limit: Value
	// then holds its head, bound.Marker and its tail, as the Cut says.
	ValueCut *bound.Cut `json:"value_cut,omitempty"`
	// ValueFile is a file of the runtime's own holding the whole of a
	// value it cut, for the session to take over; ValueSaveErr says why
	// there is none.
	ValueFile    string         `json:"value_file,omitempty"`
	ValueSaveErr string         `json:"value_save_err,omitempty"`
	Error        *api.CellError `json:"error,omitempty"`
	// Rich are rich outputs the runtime saved in files of its own (the
	// spool), for the session to take over; RichMore counts those past
	// its bound.
	Rich     []api.Rich `json:"rich,omitempty"`
	RichMore int        `json:"rich_more,omitempty"`
	// A runtime that cut its error itself (to keep its message small)
	// says how long the message and traceback were, and where it saved
	// the whole (ErrorFile, a file of its own for the session to take
	// over), or why it could not (ErrorSaveErr).
	MessageTotal   int      `json:"message_total,omitempty"`
	TracebackTotal int      `json:"traceback_total,omitempty"`
	ErrorFile      string   `json:"error_file,omitempty"`
	ErrorSaveErr   string   `json:"error_save_err,omitempty"`
	Names          []string `json:"names"` // the names defined in the namespace afterwards (nil: not said)
	// Vars is the look at the session's own names taken as the cell
	// ended (nil: the runtime takes none): what a look answers while the
	// next cell runs (api.LookLast), and the source of Names.
	Vars      *Look  `json:"vars,omitempty"`
	Note      string `json:"note,omitempty"`       // something the runtime wants said (e.g. sys.exit was caught)
	Hint      string `json:"hint,omitempty"`       // a known trap the error fell into: one of the api.Hint constants, or ""
	ValueName string `json:"value_name,omitempty"` // the name the runtime gave the value (jshell's $1), or ""

	// What went wrong on the way, which the session tells as notes. Stray
	// counts events that did not belong to the cell in flight (a cell can
	// write to its worker's channels) and were ignored. Dropped is the size
	// in bytes of this cell's result when it was too long to take: its
	// value, error and names are lost. Redirected lists the descriptors
	// (1, 2) the cell pointed away from the output pipe, and Unrestored why
	// some could not be pointed back for the next cell. OutputLate says
	// that the end of the cell's output did not arrive in time after its
	// result, so what comes later is output between cells.
	Stray      int    `json:"stray,omitempty"`
	Dropped    int    `json:"dropped,omitempty"`
	Redirected []int  `json:"redirected,omitempty"`
	Unrestored string `json:"unrestored,omitempty"`
	OutputLate bool   `json:"output_late,omitempty"`

	// At is when the cell ended, as its holder saw it (a daemon may hear
	// of it later, having taken the session up); drivers leave it zero.
	At time.Time `json:"at,omitzero"`
}

// Exit is how a runtime process ended.
type Exit struct {
	Code   int // exit status, or -1 if killed by a signal
	Signal int // the signal that killed it, or 0
	Err    error
	At     time.Time // when it was reaped
}

// Handler receives a process's events. A driver calls it from one goroutine
// at a time, in order: all output a cell wrote is passed to Output before
// that cell's CellDone, and Exited is the last call.
type Handler interface {
	Output(p []byte) // p is only valid during the call
	CellDone(r Result)
	Exited(e Exit)
}

// Process is one running runtime.
type Process interface {
	PID() int
	Tree() proc.Tree // the process tree, for signals, memory and kill
	Version() string // the runtime's version, e.g. "3.11.2"
	Exe() string     // the executable actually running
	Note() string    // what the runtime said at start, for the creation line, or ""
	Run(cell int, code string) error
	// Interrupt asks the running cell to stop. The session calls it with
	// attempt 0, 1, 2… a moment apart for as long as the cell runs on, so a
	// driver can escalate (SIGINT to the runtime, then to its children).
	Interrupt(attempt int) error
}

// Prompt is a question a running cell asks: it waits for a line of
// input. Text is what the runtime shows as the prompt (it may also be in
// the cell's output); Password says the answer must not be shown or kept.
type Prompt struct {
	Cell     int    `json:"cell"`
	Text     string `json:"text"`
	Password bool   `json:"password,omitempty"`
	// Shown: the runtime printed Text in the cell's output itself (as
	// Python's input() does); else the session shows it with the answer.
	Shown bool `json:"shown,omitempty"`
	// NoEOF: the runtime reads its console here, where end of file would
	// end it, so the question takes lines only (R).
	NoEOF bool `json:"no_eof,omitempty"`
	// Total is how many characters the prompt had when the runtime's
	// worker cut it to api.PromptLimit (Text says the cut); 0 if whole.
	Total int `json:"total,omitempty"`
}

// Asker is a Handler that can pass a cell's question on: a driver whose
// runtime asks calls InputAsked, and the cell waits until the Process's
// Answer. A driver whose handler is no Asker answers end of file itself.
type Asker interface {
	InputAsked(p Prompt)
}

// Answerer is a Process whose cells can ask for input: Answer gives the
// cell waiting in a Prompt one line (text, without its newline), or end
// of file.
type Answerer interface {
	Answer(text string, eof bool) error
}

// Remote is a Process whose runtime runs on another machine (a kernel on
// a Jupyter gateway): Where says where, for sessions.
type Remote interface {
	Where() string
}

// Ender is a Process that ends its runtime by its own means: a kernel on
// a gateway is ended by asking the gateway, not by signals here.
type Ender interface {
	End(grace time.Duration) error
}

// RawTerminal is a Process hosted on a terminal that a person can attach
// to as they would to a tmux pane (attach --raw): what the runtime prints
// comes on out (closed when it ends), typing goes to in.
type RawTerminal interface {
	Raw() (in io.Writer, out <-chan []byte, detach func(), err error)
}

// Info describes a runtime to users: `polyrepl runtimes`, errors, README.
// These are the runtime's facts a session needs while it lives (how a
// value is shown, how the runtime ends itself, its transcript's
// extension): the holder that runs the driver sends them in its hello, so
// that the daemon needs no driver of its own (see Bounded).
type Info struct {
	Name   string `json:"name"`   // as users type it: "python", "r"
	Family string `json:"family"` // "worker" or "terminal"
	Ext    string `json:"ext"`    // the transcript's extension: ".py", ".R"
	// Lang names the language for Markdown fences and notebooks, if it is
	// not the runtime's name ("python" for ipython).
	Lang   string   `json:"lang,omitempty"`
	Exes   []string `json:"exes,omitempty"`    // executables tried on the caller's PATH, in order
	EnvVar string   `json:"env_var,omitempty"` // the variable that overrides the executable: POLYREPL_R
	// AlsoEnvVar is read when EnvVar is unset: IPython honours
	// $POLYREPL_PYTHON, the Python a person chose.
	AlsoEnvVar string `json:"also_env_var,omitempty"`
	Needs      string `json:"needs,omitempty"`  // what the user needs installed, in words
	Limits     string `json:"limits,omitempty"` // known limits, in words
	// VersionArgs print the executable's version.
	VersionArgs []string `json:"version_args,omitempty"`
	// Exit is how a cell ends the runtime itself, for a death's cause:
	// "os._exit()", "exit"; "" says "its own exit".
	Exit string `json:"exit,omitempty"`
	// ConsoleLines says how to go on or leave at the runtime's own console
	// prompt, for a question that takes lines only (R's browser), or "".
	ConsoleLines string `json:"console_lines,omitempty"`
	// ValueFormat shows a value as the runtime's REPL does: "{v}" is the
	// value, "{n}" the cell number, "{name}" the name the runtime gave the
	// value (jshell's $1); "" means the value alone.
	ValueFormat string `json:"value_format,omitempty"`
	// Forks: a session of the runtime can be forked between cells
	// (Forker, Adopter); NoFork says why one cannot, in words ("" for
	// the plain refusal).
	Forks  bool   `json:"forks,omitempty"`
	NoFork string `json:"no_fork,omitempty"`
}

// Display shows value v of cell n, which the runtime named name, as the
// runtime's REPL would.
func (i Info) Display(n int, name, v string) string {
	if i.ValueFormat == "" {
		return v
	}
	// One pass by hand: a strings.Replacer built per cell cost more than
	// the rest of the cell's display (it runs for every value shown).
	f := i.ValueFormat
	var b strings.Builder
	b.Grow(len(f) + len(v) + len(name))
	for {
		j := strings.IndexByte(f, '{')
		if j < 0 {
			b.WriteString(f)
			return b.String()
		}
		b.WriteString(f[:j])
		f = f[j:]
		switch {
		case strings.HasPrefix(f, "{n}"):
			b.WriteString(strconv.Itoa(n))
			f = f[3:]
		case strings.HasPrefix(f, "{name}"):
			b.WriteString(name)
			f = f[6:]
		case strings.HasPrefix(f, "{v}"):
			b.WriteString(v)
			f = f[3:]
		default:
			b.WriteByte('{')
			f = f[1:]
		}
	}
}

// Language is the language's name for Markdown fences and notebooks.
func (i Info) Language() string {
	if i.Lang != "" {
		return i.Lang
	}
	return i.Name
}

// DefaultExe is the executable to start when the user names none: the
// runtime's $POLYREPL_<RUNTIME> in the caller's environment (else its
// AlsoEnvVar), else the first of its executables found on the caller's
// PATH, else the first.
func (i Info) DefaultExe(env []string, cwd string) string {
	if p := Getenv(env, i.EnvVar); p != "" {
		return p
	}
	if p := Getenv(env, i.AlsoEnvVar); i.AlsoEnvVar != "" && p != "" {
		return p
	}
	for _, e := range i.Exes {
		if _, err := LookPath(e, env, cwd); err == nil {
			return e
		}
	}
	if len(i.Exes) > 0 {
		return i.Exes[0]
	}
	return ""
}

// Driver starts processes of one runtime.
type Driver interface {
	// Info describes the runtime.
	Info() Info
	// Start launches the runtime and returns once it is ready for a cell,
	// or with an error that says what the executable did instead.
	Start(ctx context.Context, spec Spec, h Handler) (Process, error)
}

var (
	mu       sync.Mutex
	drivers  = map[string]Driver{}
	families []Family
)

// Family is a kind of runtime with as many members as the machine has:
// "jupyter:NAME" for every installed Jupyter kernel. Its runtimes are
// named Prefix then a member's name.
type Family struct {
	Prefix string // "jupyter:"
	// Lookup makes the driver of member name (the part after Prefix).
	Lookup func(name string) (Driver, error)
	// Survey lists the members a session with env in cwd can start.
	Survey func(ctx context.Context, env []string, cwd string) []api.RuntimeInfo
	// Known says in words what the family offers, for an unknown runtime.
	Known string
}

// RegisterFamily makes a family of runtimes available.
func RegisterFamily(f Family) {
	mu.Lock()
	defer mu.Unlock()
	families = append(families, f)
}

// Register makes a driver available by its name; driver packages call it
// from init.
func Register(d Driver) {
	mu.Lock()
	defer mu.Unlock()
	drivers[d.Info().Name] = d
}

// Lookup finds a driver by runtime name, in any case or by an alias
// (Canonical); the error lists the known ones, and says the one meant when
// name is a slip of the keys away from it.
//
// A family's Lookup may read files (a Jupyter kernel's kernel.json): it
// runs outside the package's lock, so that a slow or hostile file costs
// only the call that asked for that family's runtime.
func Lookup(name string) (Driver, error) {
	mu.Lock()
	name, _ = canonical(name, registered, prefixesLocked())
	if d, ok := drivers[name]; ok {
		mu.Unlock()
		return d, nil
	}
	fams := append([]Family(nil), families...)
	mu.Unlock()
	for _, f := range fams {
		if rest, ok := strings.CutPrefix(name, f.Prefix); ok {
			return f.Lookup(rest)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var known []string
	for n := range drivers {
		known = append(known, n)
	}
	sort.Strings(known)
	mean := suggest(name, known)
	for _, f := range families {
		known = append(known, f.Known)
	}
	if mean != "" {
		return nil, fmt.Errorf("unknown runtime %q: did you mean %s? Known runtimes are %s", name, mean, strings.Join(known, ", "))
	}
	return nil, fmt.Errorf("unknown runtime %q: known runtimes are %s", name, strings.Join(known, ", "))
}

// All returns every registered driver, sorted by name.
func All() []Driver {
	mu.Lock()
	defer mu.Unlock()
	out := make([]Driver, 0, len(drivers))
	for _, d := range drivers {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Info().Name < out[j].Info().Name })
	return out
}

// Getenv finds key in a KEY=VALUE environment, the last one winning as in
// the C library.
func Getenv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// PNGSize reads a PNG file's width and height from its header; 0, 0 if
// it is not a PNG, or its header is not a PNG's (its checksum fails, or
// it says no size a PNG can have): a size is never read from garbage.
func PNGSize(path string) (int, int) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(bufio.NewReaderSize(f, 64))
	if err != nil {
		return 0, 0
	}
	return cfg.Width, cfg.Height
}
