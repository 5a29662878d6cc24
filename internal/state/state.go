// Package state owns the daemon's files under the state directory
// ($XDG_STATE_HOME/polyrepl/<host>/): each session's transcript, the notes
// kept when a session dies (so the next call under its name can say what
// was lost), the markers of live sessions (so a daemon that was killed can
// be found out by the next one), and spooled output too long for a reply.
// Directories are 0700 and files 0600: transcripts hold whatever secrets
// were in the code.
package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// Dir is an opened state directory.
type Dir struct {
	Path string
}

// Open creates (or checks) the state directory and its subdirectories.
func Open(path string) (*Dir, error) {
	// Parents up to .../polyrepl are ours to create private; the base
	// ($XDG_STATE_HOME) is the user's and may be shared with other tools.
	if err := paths.EnsurePrivateDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if err := paths.EnsurePrivateDir(path); err != nil {
		return nil, err
	}
	d := &Dir{Path: path}
	for _, sub := range []string{"lost", "live", "output", "records"} {
		if err := paths.EnsurePrivateDir(filepath.Join(path, sub)); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// RecordDir is where the sessions' shared records are kept.
func (d *Dir) RecordDir() string { return filepath.Join(d.Path, "records") }

// OutputDir is where output too long for a reply is saved whole.
func (d *Dir) OutputDir() string { return filepath.Join(d.Path, "output") }

// TranscriptPath is the file every cell of a session is appended to. The
// extension is the runtime's, so editors highlight it.
func (d *Dir) TranscriptPath(name, ext string) string {
	return filepath.Join(d.Path, name+ext)
}

// Transcript is a session's transcript, open for appending: each cell is
// one write, with no open and close on the path of every cell that
// follows another. A transcript quiet for FileIdle closes its file, so an
// idle session holds no descriptor for it; the next cell opens it again.
type Transcript struct {
	path string

	mu     sync.Mutex
	f      *os.File
	last   time.Time   // the last write
	timer  *time.Timer // closes f once it is quiet
	closed bool
}

// FileIdle is how long a file the daemon appends to (a transcript, a
// record) stays open after its last write: cells that follow each other
// pay no open each, and 500 idle sessions hold no descriptor for them.
const FileIdle = 5 * time.Second

// OpenTranscript opens (creating it 0600) the transcript at path.
func OpenTranscript(path string) (*Transcript, error) {
	f, err := paths.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("cannot open the transcript: %w", err)
	}
	t := &Transcript{path: path, f: f}
	t.mu.Lock()
	t.wroteLocked()
	t.mu.Unlock()
	return t, nil
}

// Append adds one entry: a comment line with the header, then the code.
func (t *Transcript) Append(comment, header, code string) error {
	var b strings.Builder
	b.Grow(len(header) + len(code) + 8)
	b.WriteString(comment + " " + header + "\n")
	b.WriteString(code)
	if code != "" && !strings.HasSuffix(code, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("\n")
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return fmt.Errorf("cannot append to the transcript %s: the session has ended", t.path)
	}
	if t.f == nil {
		f, err := paths.OpenFile(t.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
		if err != nil {
			return fmt.Errorf("cannot open the transcript: %w", err)
		}
		t.f = f
	}
	t.wroteLocked()
	if _, err := t.f.WriteString(b.String()); err != nil {
		return fmt.Errorf("cannot append to the transcript %s: %w", t.path, err)
	}
	return nil
}

// wroteLocked notes a write, and that the file closes once quiet.
func (t *Transcript) wroteLocked() {
	t.last = time.Now()
	if t.timer == nil {
		t.timer = time.AfterFunc(FileIdle, t.closeIdle)
	}
}

// closeIdle closes the file if it has been quiet for FileIdle, or looks
// again when it will have been.
func (t *Transcript) closeIdle() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timer == nil {
		return // closed meanwhile
	}
	if t.f == nil {
		t.timer = nil
		return
	}
	if wait := FileIdle - time.Since(t.last); wait > 0 {
		t.timer.Reset(wait)
		return
	}
	t.timer = nil
	t.f.Close()
	t.f = nil
}

// Close closes the transcript for good.
func (t *Transcript) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	if t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.f = nil
	return err
}

// Life describes one life of a session: written while it lives (live/) and
// kept when it dies (lost/) with how it died.
type Life struct {
	Name       string     `json:"name"`
	Generation string     `json:"generation"`
	Runtime    string     `json:"runtime"`
	Version    string     `json:"version"`
	Exe        string     `json:"exe"`
	PID        int        `json:"pid"`
	Start      uint64     `json:"start"` // the leader's start time, to re-check the pid
	Cookie     string     `json:"cookie"`
	Cwd        string     `json:"cwd"`
	Created    time.Time  `json:"created"`
	Cells      int        `json:"cells"`
	Names      []string   `json:"names"`
	Transcript string     `json:"transcript"`
	Death      *api.Death `json:"death,omitempty"`
	// Dying is a kill, restart or stop under way: written before the
	// session's tree is signalled, so that a daemon that ends in the
	// middle of it leaves its successor the death's real cause, not a
	// signal from nowhere.
	Dying *api.Death `json:"dying,omitempty"`
	// Holder is the process that keeps the runtime, so that a daemon
	// that finds no holder to take the session up from can tell why.
	Holder proc.Proc `json:"holder"`
	// Socket is where the holder listens: beside the socket of the
	// daemon that started it, which a later daemon's may not be (its
	// clients' XDG_RUNTIME_DIR differs).
	Socket string `json:"socket,omitempty"`
	// Spawn is how the life was started, without its environment (the
	// caller's, secrets and all, which the next life takes from its own
	// caller): a life after a kill or a death starts as this one did
	// unless its call asks otherwise, across a daemon restart too.
	Spawn *api.Spawn `json:"spawn,omitempty"`
}

// SaveLive records a live session, replacing an earlier record of it.
func (d *Dir) SaveLive(l Life) error {
	return writeJSON(filepath.Join(d.Path, "live", l.Name+".json"), l)
}

// Live returns the live record of name, or nil if there is none.
func (d *Dir) Live(name string) (*Life, error) {
	b, err := os.ReadFile(filepath.Join(d.Path, "live", name+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the live record of %s: %w", name, err)
	}
	var l Life
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("cannot read the live record of %s: %w", name, err)
	}
	return &l, nil
}

// RemoveLive forgets a live record.
func (d *Dir) RemoveLive(name string) error {
	err := os.Remove(filepath.Join(d.Path, "live", name+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Lives lists the live records, e.g. those a killed daemon left behind.
func (d *Dir) Lives() ([]Life, error) { return readAll(filepath.Join(d.Path, "live")) }

// SaveLoss keeps the note of a session's death until the next exec under
// its name reports it.
func (d *Dir) SaveLoss(l Life) error {
	return writeJSON(filepath.Join(d.Path, "lost", l.Name+".json"), l)
}

// Loss returns the death note for name, or nil if there is none.
func (d *Dir) Loss(name string) (*Life, error) {
	b, err := os.ReadFile(filepath.Join(d.Path, "lost", name+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the death note of %s: %w", name, err)
	}
	var l Life
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("cannot read the death note of %s: %w", name, err)
	}
	return &l, nil
}

// ClearLoss removes a death note once it has been reported.
func (d *Dir) ClearLoss(name string) error {
	err := os.Remove(filepath.Join(d.Path, "lost", name+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode %s: %w", path, err)
	}
	return paths.WriteFile(path, b)
}

func readAll(dir string) ([]Life, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot list %s: %w", dir, err)
	}
	var out []Life
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var l Life
		if json.Unmarshal(b, &l) == nil && l.Name != "" {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
