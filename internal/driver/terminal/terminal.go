// Package terminal is the driver family for runtimes driven through their
// own REPL, the way a person would type at it, with a per-runtime Profile:
// how to silence its prompt, how a cell is loaded (the cell is written to a
// file and one loader line runs it, so cells of any length and shape arrive
// whole), and how completion is marked (a command after the loader prints
// a mark the driver waits for).
//
// The REPL reads commands on fd 0 and writes everything on one stream (fd 1
// and fd 2 together), over pipes unless the profile asks for a
// pseudo-terminal. The stream is split at marks: lines of the form
//
//	polyrepl_NONCE_KIND
//
// where NONCE is random per session and KIND is one of
//
//	ready    the setup lines ran; what came before was the banner
//	version  what came since "ready" is the runtime's version
//	value    (printed by the loader itself) what follows, up to "end",
//	         is the cell's value rather than its output
//	error    (printed by the loader itself) the cell failed; words after
//	         it ("error exit status 2") are the error's message
//	end      the cell's output ends here
//	names    what came since "end" lists the defined names
//	look     what follows, up to "looked", is a look's (vars.go)
//
// A mark's command is sent as two halves joined by the runtime, so that a
// terminal echoing the command never shows the mark itself.
package terminal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/console"
	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// Profile describes one runtime of the terminal family.
type Profile struct {
	driver.Info
	// Args are the REPL's arguments; Project adds those for a project
	// directory (nil: the runtime takes none).
	Args    []string
	Project func(dir string) []string
	// Env is added to the caller's environment.
	Env []string
	// PTY runs the REPL on a pseudo-terminal, for runtimes that only
	// behave interactively on one. Echo is turned off and output is not
	// translated (no \r added), so what the cell prints arrives as is.
	PTY bool
	// Files are written to the session's directory of cell files at
	// start (Mark.Dir), by name: helpers the REPL loads, such as a look's.
	Files map[string]string
	// Setup returns lines sent once at start: prompts off, helpers the
	// loader uses. They may print marks with m.
	Setup func(m Mark) []string
	// Print is a command that prints head+tail and a newline, flushing
	// the runtime's output first.
	Print func(head, tail string) string
	// Version is a command printing the runtime's version, or "".
	Version string
	// File turns a cell into the content of its file; nil keeps it as is.
	File func(code string) string
	// Load is the loader line that runs the cell file at path; nil sends
	// the cell's code itself (for REPLs that cannot load a file).
	Load func(path string) string
	// Names is a command listing the defined names, parsed by ParseNames
	// (nil: one name per line); "" if the runtime cannot list them.
	Names      string
	ParseNames func(out string) []string
	// Vars, if set, is the command that looks at the session's own
	// names (q.Path ""; q.All: the runtime's too) or at the members of
	// what q.Path names, printing what ParseVars reads (vars.go). It
	// never evaluates the path: a path its grammar does not take is a
	// *driver.PathError before anything is sent. A profile with Vars
	// lists a cell's names with its look at them (Names is not used).
	Vars      func(q driver.VarsQuery) (string, error)
	ParseVars func(out string, q driver.VarsQuery) (driver.Look, error)
	// Binds reports whether a cell may change the defined names, so that
	// cells that only evaluate skip the names command, whose cost grows
	// with the names; nil: every cell may.
	Binds func(code string) bool
	// Prompt is what the REPL prints when it waits for a command, if it
	// cannot be silenced: one is dropped right before and one right after
	// each mark, where the REPL prints it between the commands polyrepl
	// sends.
	Prompt string
	// Error matches a line of output that means the cell failed (made
	// with Pattern).
	Error func() *regexp.Regexp
	// Interrupt, if set, replaces the default: SIGINT to the REPL (on a
	// terminal, the Ctrl-C key), then to its whole process group.
	Interrupt func(tree proc.Tree, attempt int) error
	// PromptMark, if set, is a setup command after which the REPL prints
	// the "prompt" mark (made with m.Halves) on a line of its own each
	// time it waits for a command: a cell then runs alone, and one that
	// reads standard input asks (ask.go).
	PromptMark func(m Mark) string
	// RawPrompt is what a person attached raw is shown where the REPL
	// waits for a command, for a profile whose prompt is a mark (taken
	// out of the output, so the person would see none): "$ " for sh.
	// It reaches the attached terminal only, never the record.
	RawPrompt string
	// ThreadReads: the REPL reads standard input on a thread other than
	// its first (a JVM's), so all its threads are looked at.
	ThreadReads bool
	// LoadHoldsFile, for a REPL with no prompt to mark (gnuplot on a
	// pipe) whose loader keeps the cell's file open while it runs it: a
	// cell then runs alone all the same (ask.go). The file ends with the
	// "loaded" mark, after which the rest is sent; a cell cut short (an
	// error, an interrupt) is over once the REPL reads its standard input
	// with the file closed; a read with it open is the cell's question.
	LoadHoldsFile bool
	// Plot, if set, returns the lines sent before a cell's loader line
	// that send its plots to file, a PNG (unless the user chose a
	// terminal of their own), and those sent after it that close the
	// file: a plot the cell drew comes back as its rich output without
	// the user choosing a terminal, and a cell that drew none leaves the
	// file empty, dropped.
	Plot func(file, code string) (before, after []string)
}

// Mark makes the marks of one session.
type Mark struct{ nonce, dir string }

// Dir is the session's directory of cell files, where the profile's Files
// are, for a setup line that reads them.
func (m Mark) Dir() string { return m.dir }

// Halves is the mark of kind, split in two for a Print command.
func (m Mark) Halves(kind string) (head, tail string) {
	s := m.prefix() + kind
	return s[:len(s)/2], s[len(s)/2:]
}

func (m Mark) prefix() string { return "polyrepl_" + m.nonce + "_" }

// Driver adapts a Profile to driver.Driver.
type Driver struct{ P *Profile }

// Info implements driver.Driver.
func (d Driver) Info() driver.Info { return d.P.Info }

// Start implements driver.Driver.
func (d Driver) Start(ctx context.Context, spec driver.Spec, h driver.Handler) (driver.Process, error) {
	pr := d.P
	l := driver.Launch{Runtime: pr.Name, Needs: pr.Needs, EnvVar: pr.EnvVar, Spec: spec,
		Args: pr.Args, Project: pr.Project, Env: pr.Env}
	cmd, err := l.Command()
	if err != nil {
		return nil, err
	}
	nonce, err := driver.Nonce(9)
	if err != nil {
		return nil, err
	}
	cells, err := os.MkdirTemp(spec.RuntimeDir, pr.Name+"-cells-")
	if err != nil {
		return nil, fmt.Errorf("cannot make a directory for %s cell files in %s: %w", pr.Name, spec.RuntimeDir, err)
	}
	mark := Mark{nonce: nonce, dir: cells}
	for name, content := range pr.Files {
		if err := paths.WriteFile(filepath.Join(cells, name), []byte(content)); err != nil {
			os.RemoveAll(cells)
			return nil, fmt.Errorf("cannot write %s's helper %s in %s: %w", pr.Name, name, cells, err)
		}
	}
	p := &process{
		pr:        pr,
		cmd:       cmd,
		h:         h,
		exe:       driver.ExeOf(cmd),
		mark:      mark,
		prefix:    []byte(mark.prefix()),
		prompt:    []byte(pr.Prompt),
		cells:     cells,
		cellNames: newCellNames(cells, pr.Ext),
		valueLim:  spec.ValueLimit,
		ready:     make(chan struct{}),
		exited:    make(chan driver.Exit, 1),
		outEOF:    make(chan struct{}),
	}
	// With a watch, the driver keeps its own handle on where the REPL
	// writes (marks go there) and on what it reads (to see it empty, and
	// who reads it): the output pipe's write end and the input pipe, or
	// the terminal's slave side for both.
	var out, outKeep, conFile *os.File
	watch := (pr.PromptMark != nil || pr.LoadHoldsFile) && proc.SeesStdinReads()
	if pr.PTY {
		out, outKeep, err = startPTY(cmd, watch, l.Start)
		p.in, conFile = out, outKeep
	} else {
		out, p.in, outKeep, err = startPipes(cmd, watch, l.Start)
		conFile = p.in
	}
	if err != nil {
		os.RemoveAll(cells)
		return nil, fmt.Errorf("cannot start %s: %w", driver.ExeOf(cmd), err)
	}
	p.tree = l.TreeOf(cmd)
	if watch {
		p.startWatch(outKeep, conFile)
	}
	go p.readOutput(out)
	go p.wait()

	var boot, owing strings.Builder
	if pr.Setup != nil {
		for _, l := range pr.Setup(mark) {
			boot.WriteString(l + "\n")
		}
	}
	if watch && pr.PromptMark != nil {
		owing.WriteString(pr.PromptMark(mark) + "\n")
	}
	owing.WriteString(p.print("ready") + "\n")
	if pr.Version != "" {
		owing.WriteString(pr.Version + "\n" + p.print("version") + "\n")
	}
	p.mu.Lock()
	if watch {
		p.oweLocked(owing.String())
	}
	p.mu.Unlock()
	p.send(boot.String() + owing.String())

	err = l.Await(ctx, driver.Started{Tree: p.tree, Ready: p.ready, Exited: p.exited, OutEOF: p.outEOF, Early: p.earlyBytes})
	if err != nil {
		os.RemoveAll(cells) // also done once the process is reaped; the caller may look first
		return nil, err
	}
	return p, nil
}

// mode says where the stream's bytes go.
type mode int

const (
	modeBoot    mode = iota // before "ready": the banner, kept for errors
	modeVersion             // the version command's output
	modeOutput              // a cell's output, or output while idle
	modeValue               // a cell's value
	modeNames               // the names command's output
	modeLook                // a look's output (vars.go)
)

// process is one running REPL. Its handler is called under mu.
type process struct {
	pr       *Profile
	cmd      *exec.Cmd
	h        driver.Handler
	tree     proc.Tree
	exe      string
	version  string
	mark     Mark
	prefix   []byte
	prompt   []byte
	cells    string
	valueLim int

	inMu   sync.Mutex
	in     *os.File
	unread unread // on a terminal: a write its reader may not have had yet (ask.go)

	mu          sync.Mutex
	mode        mode
	started     bool // ready was closed
	done        bool // Exited was called
	early       driver.Early
	versionOut  bytes.Buffer
	cell        int // the running cell, or 0
	cellFile    string
	plotFile    string // where the running cell's plot goes, if the profile plots
	interrupted bool
	failed      bool   // the loader printed an error mark
	failMsg     string // and said this
	errLine     string // the output from the first error line on, bounded
	line        []byte // the current line of output, for Error
	value       bytes.Buffer
	names       bytes.Buffer
	cellNames   *cellNames // rewrites the cell files' paths in output
	listNames   bool       // the running cell's names are listed after it
	look        *look      // a look under way (vars.go), or nil
	lookPrompt  bool       // the next prompt is a look's last: not shown to a person attached raw

	raw chan []byte // a person's terminal attached raw, or nil

	// A profile with PromptMark (ask.go): the prompts the REPL owes, what
	// to send once the running cell's loader has its prompt, whether its
	// question is out, its last line of output (the question's text), the
	// watch, and the driver's own write end of the output pipe.
	owed    int
	trailer string
	asked   bool
	asker   int // the pid whose read the question is
	tail    console.Tail
	watch   *console.Watch
	outKeep *os.File // where the REPL writes: the output pipe, or the slave side
	conFile *os.File // what it reads: the input pipe, or the slave side

	ready  chan struct{}
	exited chan driver.Exit
	outEOF chan struct{}
}

func (p *process) PID() int        { return p.cmd.Process.Pid }
func (p *process) Tree() proc.Tree { return p.tree }
func (p *process) Exe() string     { return p.exe }
func (p *process) Note() string    { return "" }

// Version is the runtime's version as its version command printed it.
func (p *process) Version() string { return p.version }

func (p *process) print(kind string) string {
	h, t := p.mark.Halves(kind)
	return p.pr.Print(h, t)
}

func (p *process) send(s string) error {
	return p.sendFor(s, p.tree.Leader.PID)
}

// sendFor writes s for the process reader to read (the REPL, or the
// process whose question s answers).
func (p *process) sendFor(s string, reader int) error {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if p.pr.PTY && p.watch != nil {
		p.unread.mark(reader)
	}
	if _, err := io.WriteString(p.in, s); err != nil {
		return fmt.Errorf("cannot send the cell to %s (it may have died): %w", p.pr.Name, err)
	}
	return nil
}

// Run writes the cell to its file and sends the loader line, the end mark
// and the names command.
func (p *process) Run(cell int, code string) error {
	p.awaitLook()
	var msg strings.Builder
	file := ""
	if p.pr.Load == nil {
		msg.WriteString(strings.TrimRight(code, "\n") + "\n")
	} else {
		content := code
		if p.pr.File != nil {
			content = p.pr.File(code)
		}
		if !strings.HasSuffix(content, "\n") {
			content += "\n"
		}
		if p.watch != nil && p.pr.LoadHoldsFile {
			content += p.print("loaded") + "\n"
		}
		file = filepath.Join(p.cells, fmt.Sprintf("cell_%d%s", cell, p.pr.Ext))
		if err := paths.WriteFile(file, []byte(content)); err != nil {
			return fmt.Errorf("cannot write the cell file for %s: %w", p.pr.Name, err)
		}
		msg.WriteString(p.pr.Load(file) + "\n")
	}
	plot := ""
	if p.pr.Plot != nil && file != "" {
		plot = filepath.Join(p.cells, fmt.Sprintf("plot_%d.png", cell))
		if before, after := p.pr.Plot(plot, code); len(before) > 0 {
			load := msg.String()
			msg.Reset()
			msg.WriteString(strings.Join(before, "\n") + "\n" + load + strings.Join(after, "\n") + "\n")
		} else {
			plot = ""
		}
	}
	trailer := p.print("end") + "\n"
	names := (p.pr.Names != "" || p.pr.Vars != nil) && (p.pr.Binds == nil || p.pr.Binds(code))
	if names {
		list := p.pr.Names
		if p.pr.Vars != nil {
			var err error
			if list, err = p.pr.Vars(driver.VarsQuery{}); err != nil {
				return err
			}
		}
		trailer += strings.TrimRight(list, "\n") + "\n" + p.print("names") + "\n"
	}
	p.mu.Lock()
	if p.watch != nil {
		// The cell runs alone: the rest follows its loader's prompt.
		load := msg.String()
		if plot != "" {
			_, after := p.pr.Plot(plot, code)
			load = strings.TrimSuffix(load, strings.Join(after, "\n")+"\n")
			trailer = strings.Join(after, "\n") + "\n" + trailer
		}
		msg.Reset()
		msg.WriteString(load)
		p.trailer, p.asked = trailer, false
		p.tail.Reset()
		p.oweLocked(load)
	} else {
		msg.WriteString(trailer)
	}
	p.listNames = names
	if p.raw != nil {
		p.setEcho(false) // the cell's lines are not the person's typing
	}
	p.cell, p.cellFile, p.plotFile = cell, file, plot
	p.interrupted, p.failed, p.failMsg, p.errLine = false, false, "", ""
	p.line = p.line[:0]
	p.value.Reset()
	p.names.Reset()
	p.mu.Unlock()
	err := p.send(msg.String())
	if err == nil && p.watch != nil {
		p.watch.Wake()
	}
	return err
}

// Interrupt stops the running cell: the profile's own way, or SIGINT (on
// a terminal the Ctrl-C key, which the line discipline or the REPL's line
// editor turns into its interrupt), then SIGINT to the whole group to end
// a child the cell waits on.
func (p *process) Interrupt(attempt int) error {
	p.mu.Lock()
	p.interrupted = true
	own := p.asked && p.asker == p.tree.Leader.PID
	switch {
	case !p.asked || p.watch == nil:
	case own && p.pr.LoadHoldsFile:
		// The REPL's next read says itself whether the cell goes on:
		// its file is open or not.
		defer p.watch.Wake()
	default:
		// A read after the interrupt is a new question.
		defer p.watch.Forget(p.asker)
	}
	p.asked = false
	p.mu.Unlock()
	if own && !p.pr.PTY && !p.pr.LoadHoldsFile {
		// A REPL reading its standard input without a line editor takes
		// SIGINT once the read returns: an empty line ends the read, a
		// moment after the signal (Octave notes it on another thread;
		// sooner, the empty line is taken as the answer first).
		time.AfterFunc(console.InterruptLine, func() { p.send("\n") })
	}
	if p.pr.Interrupt != nil {
		return p.pr.Interrupt(p.tree, attempt)
	}
	if attempt%2 == 1 {
		return p.tree.SignalGroup(syscall.SIGINT)
	}
	if p.pr.PTY {
		return p.send("\x03")
	}
	return proc.Signal(p.tree.Leader, syscall.SIGINT)
}

// readOutput splits the stream at marks and passes each part on.
func (p *process) readOutput(r *os.File) {
	defer close(p.outEOF)
	defer r.Close()
	buf := make([]byte, 256*1024)
	sp := splitter{prefix: p.prefix, prompt: p.prompt, hold: p.running}
	for {
		n, err := r.Read(buf)
		sp.feed(buf[:n], err != nil, p.take, p.marked)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) && !errors.Is(err, syscall.EIO) {
				p.take([]byte(fmt.Sprintf("\n[polyrepl: reading the output failed: %v]\n", err)))
			}
			return
		}
	}
}

// running reports whether a cell runs: only then may a prompt at the end
// of a read be followed by a mark (a prompt while idle answers a person's
// typing, and shows at once).
func (p *process) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cell != 0 || p.look != nil
}

// take passes bytes to where the current mode sends them.
func (p *process) take(b []byte) {
	if len(b) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.mode {
	case modeOutput:
		if p.cell != 0 {
			if p.watch != nil {
				p.tail.Add(b)
			}
			p.outputLocked(p.cellNames.rewrite(b))
		} else { // idle: a person's typing echoes at once
			p.outputLocked(p.cellNames.flush())
			p.outputLocked(b)
		}
	case modeBoot:
		p.early.Keep(b)
	case modeVersion:
		p.versionOut.Write(b[:min(len(b), 256)])
	case modeValue:
		if p.value.Len() < 4<<20 {
			p.value.Write(b[:min(len(b), 4<<20-p.value.Len())])
		}
	case modeNames:
		if p.names.Len() < lookMax {
			p.names.Write(b[:min(len(b), lookMax-p.names.Len())])
		}
	case modeLook:
		p.takeLookLocked(b)
	}
}

// outputLocked passes output on: to a person attached raw, to the error
// scan, to the session.
func (p *process) outputLocked(b []byte) {
	if len(b) == 0 {
		return
	}
	if p.raw != nil {
		select {
		case p.raw <- append([]byte(nil), b...):
		default: // a person's terminal that does not keep up misses output, never the session
		}
	}
	if p.cell != 0 && p.pr.Error != nil && p.errLine == "" {
		p.scanErrors(b)
	} else if p.errLine != "" && len(p.errLine) < 4096 {
		p.errLine += string(b[:min(len(b), 4096-len(p.errLine))])
	}
	if !p.done {
		p.h.Output(b)
	}
}

// marked acts on a mark of kind.
func (p *process) marked(kind string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == modeOutput {
		p.outputLocked(p.cellNames.flush()) // output ends at a mark
	}
	if k, msg, _ := strings.Cut(kind, " "); k == "error" {
		p.failed, p.failMsg = true, msg
		return
	}
	switch kind {
	case "prompt":
		p.promptedLocked()
		if p.lookPrompt {
			p.lookPrompt = false // the person saw the prompt before the look
		} else if p.owed == 0 && p.cell == 0 {
			p.rawPromptLocked()
		}
	case "loaded":
		p.sendTrailerLocked()
	case "asked":
		p.askLocked()
	case "ready":
		if p.pr.Version != "" {
			p.mode = modeVersion
			return
		}
		p.becomeReady()
	case "version":
		p.version = strings.TrimSpace(p.versionOut.String())
		p.becomeReady()
	case "value":
		p.mode = modeValue
	case "end":
		if p.listNames && p.cell != 0 {
			p.mode = modeNames
			return
		}
		p.finish()
	case "names":
		p.finish()
	case "look":
		if p.look != nil {
			p.mode = modeLook
		}
	case "looked":
		if p.mode == modeLook {
			p.mode = modeOutput
		}
		p.lookPrompt = p.watch != nil && p.pr.PromptMark != nil && p.cell == 0
		p.endLookLocked(p.look)
	}
}

func (p *process) becomeReady() {
	p.mode = modeOutput
	if !p.started {
		p.started = true
		close(p.ready)
	}
}

// wait reaps the REPL and reports its exit once its output is read, or
// shortly after if a surviving child still holds the stream open.
func (p *process) wait() {
	driver.Reap(p.cmd, p.exited, p.outEOF, func() {
		p.inMu.Lock()
		if !p.pr.PTY {
			p.in.Close()
		}
		if p.outKeep != nil {
			p.outKeep.Close()
		}
		p.inMu.Unlock()
	}, func(ex driver.Exit) {
		os.RemoveAll(p.cells)
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.raw != nil {
			close(p.raw)
			p.raw = nil
		}
		tell := p.started && !p.done
		p.done = true
		if tell {
			p.h.Exited(ex)
		}
	})
}

func (p *process) earlyBytes() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Clone(p.early.Bytes())
}
