// Package record keeps each session's shared record: the append-only log
// of every cell from every client, output printed while no cell ran, and
// notes (created, restarted, died and why). Entries are written when they
// start and rewritten as they change; every client has a position in each
// record, so a reply can tell it what the others did since it last heard.
// Told keeps what each client was told beyond one record: each name's
// last death and the other sessions that need its attention.
//
// A record is persisted as JSON lines under the state directory (0600),
// one line per change of an entry, the last line of a seq winning; it is
// compacted to the entries kept (api.RecordKeep) as it grows, and read
// back by the next daemon, which takes every line it can (Open). Writes
// of a running cell's output are spaced out (saveEvery); its start and
// end are written at once. A cell entry's whole output is the file its
// session's holder writes (WholeElsewhere): the record points at it and
// removes it with the entry, and writes no copy.
package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/plain"
)

// saveEvery spaces out the writes of a running cell's output.
const saveEvery = 2 * time.Second

// fileIdle is how long the record's file stays open after its last write
// (state.FileIdle, for the same reasons): entries that follow each other
// pay no open each, and an idle session holds no descriptor for it.
const fileIdle = 5 * time.Second

// Record is one session name's record, across the lives of the session.
type Record struct {
	name string
	path string

	mu    sync.Mutex
	f     *os.File
	lines int   // lines in the file, for compaction
	size  int64 // bytes in the file
	live  int64 // bytes its entries took when last compacted (or loaded)
	// lost: a line could not be written whole, or the file holds an
	// entry unbounded: the next save rewrites the file.
	lost    bool
	noNL    bool      // the file ends without a newline (a crash cut its last line)
	modTime time.Time // when the file was last written before it was loaded
	entries []*api.Entry
	next    int // the seq of the next new entry
	dropped int // entries dropped from the front
	clips   map[int]*clip
	// finished lists the seqs of finished entries whose clips keep
	// their streams, oldest first.
	finished []int
	dirty    map[int]bool // entries changed since last saved
	timer    *time.Timer
	// lastSave is the last write to f, and closer closes f once it has
	// been quiet for fileIdle.
	lastSave time.Time
	closer   *time.Timer
	changed  chan struct{}
	saveErr  error
	pos      map[string]*position
	posPath  string // where positions are kept, so a new daemon knows them
	posSave  bool   // positions changed since last saved
	closed   bool   // let go by the daemon: a follower finds the name's record afresh
	// values are the entries whose whole value this record saved, and
	// loadedBelow the first seq after those read from the file, whose
	// whole values it cannot know of: a dropped entry's value file is
	// removed only if one may exist, not with a failed unlink per cell.
	values      map[int]bool
	loadedBelow int
}

// Exists reports whether session name has a record in dir.
func Exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name+".jsonl"))
	return err == nil
}

// Open reads the record of session name from dir, or starts one. Its
// cells that a daemon left running stay so until EndStale says which
// still run. The record is usable even with an error: a file it cannot
// open starts it empty; lines it cannot read are left out, the rest
// read, and a note entry and the error say which.
func Open(dir, name string) (*Record, error) {
	r := &Record{
		name: name, path: filepath.Join(dir, name+".jsonl"), next: 1,
		clips: map[int]*clip{}, dirty: map[int]bool{}, changed: make(chan struct{}),
		pos: map[string]*position{}, posPath: filepath.Join(dir, name+".positions.json"),
		values: map[int]bool{}, loadedBelow: math.MaxInt,
	}
	l, err := r.load()
	if err != nil {
		r.entries, r.next, r.dropped = nil, 1, 0
		return r, err
	}
	r.loadedBelow = r.next
	r.loadPositions()
	switch {
	case l != nil && l.count > 0:
		return r, r.unread(l)
	case r.lost || r.size > 4*r.live+compactSlack:
		// Entries bounded as they loaded, or a file grown far past its
		// entries (as records did before answers were bounded).
		r.mu.Lock()
		r.compactLocked()
		r.mu.Unlock()
	}
	return r, nil
}

// EndStale marks dead the cells a daemon left running that no session
// runs now (all but the entry keep, which a session taken up from its
// holder goes on with; 0 for none): their daemon and runtime ended
// before they did.
func (r *Record) EndStale(keep int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	end := r.modTime
	for _, e := range r.entries {
		if e.Status != api.StatusRunning || e.Seq == keep || r.clips[e.Seq] != nil {
			continue
		}
		ended := end
		e.Status, e.Ended, e.Rev = api.StatusDead, &ended, e.Rev+1
		e.Text = "the daemon ended before this cell finished; its last output is below"
		r.saveLocked(e)
	}
}

// Rewrite empties entry seq's output, to be written again whole: a
// daemon taking up a session its holder kept is sent the output of the
// cell in flight (or of the stretch between cells) from its start, so
// the entry holds it once, whatever an earlier daemon had saved of it.
// A cell entry is running again until its result comes. It reports
// whether the record has the entry.
//
// A cell's whole output is its holder's (elsewhere): the record reads the
// cell's output again for the entry, and leaves the file as it is.
func (r *Record) Rewrite(seq int, elsewhere bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.getLocked(seq)
	if e == nil {
		return false
	}
	if c := r.clips[seq]; c != nil {
		c.closeFile()
		delete(r.clips, seq)
	}
	c := &clip{wholePath: r.outputPath(seq), elsewhere: elsewhere}
	if !elsewhere && e.OutputCut != nil && e.OutputCut.File == c.wholePath {
		// Its whole-output file is written again from the start.
		c.path = c.wholePath
		c.spill()
	}
	r.clips[seq] = c
	e.Output, e.OutputCut = "", nil
	if e.Kind == api.EntryCell {
		e.Status, e.Ended, e.Display, e.Prompt, e.Error, e.Rich, e.Text = api.StatusRunning, nil, "", "", nil, nil, ""
	}
	e.Rev++
	r.saveLocked(e)
	r.notifyLocked()
	return true
}

// Closed reports whether the record was let go (the session died and
// nobody held it): a follower opens the name's record again, which the
// next life writes to.
func (r *Record) Closed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// Changed is closed at the next change of the record.
func (r *Record) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

func (r *Record) notifyLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// Add appends an entry, giving it its seq and id, saves it and returns its
// seq. A cell entry's output then grows with Output.
func (r *Record) Add(e api.Entry) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.Seq, e.Rev, e.Session = r.next, 1, r.name
	e.ID = fmt.Sprintf("%s#%d", r.name, e.Seq)
	e.Code, e.CodeCut = bound.HeadTail(e.Code, api.EntryCodeLimit)
	for seq, c := range r.clips {
		c.closeFile() // output goes to the new entry now; one reopens if not
		if old := r.getLocked(seq); e.Kind == api.EntryCell && old != nil && old.Kind == api.EntryIdle && !c.done {
			// A cell ends the output printed while idle before it: saved
			// now, for the holder lets go of that output as the cell runs.
			r.freshLocked(old)
			r.finishClipLocked(seq, c)
			old.Rev++
			r.saveLocked(old)
		}
	}
	if e.Kind == api.EntryCell || e.Kind == api.EntryIdle {
		c := &clip{wholePath: r.outputPath(e.Seq)}
		c.Write([]byte(e.Output))
		r.clips[e.Seq] = c
		e.Output, e.OutputCut = c.text()
	}
	r.next++
	r.entries = append(r.entries, &e)
	if len(r.entries) > api.RecordKeep {
		old := r.entries[0]
		r.dropClipLocked(old.Seq)
		r.removeOutput(old)
		r.entries[0] = nil // or the array would keep it until it grows again
		r.entries = r.entries[1:]
		r.dropped = old.Seq
	}
	r.saveLocked(&e)
	r.notifyLocked()
	return e.Seq
}

// WholeElsewhere says that cell entry seq's whole output is written by
// the session's holder (its output log) to the file the entry points at
// once cut, and returns that file: the record never writes it, and
// removes it with the entry.
func (r *Record) WholeElsewhere(seq int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.clips[seq]
	if c == nil {
		return ""
	}
	c.elsewhere = true
	return c.wholePath
}

// WholeFailed says that entry seq's whole output could not be written
// (why): its entry no longer points at a file missing part of it.
func (r *Record) WholeFailed(seq int, why error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.clips[seq]; c != nil && c.fileErr == nil {
		c.fileErr = why
		c.stale = true
		r.dirtyLocked(seq)
	}
}

// Output adds what a running cell (or an idle entry) printed.
func (r *Record) Output(seq int, p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, c := r.getLocked(seq), r.clips[seq]
	if e == nil || c == nil || c.done {
		return
	}
	// The entry's text is made from the clip when someone reads or saves
	// it, not on every write: a cell may print in many small pieces.
	c.Write(p)
	c.stale = true
	e.Rev++
	r.dirtyLocked(seq)
	r.notifyLocked()
}

// Update changes an entry (a cell ended) and saves it at once.
// RichBytes is the size of the rich outputs (figures, images) the
// record's entries keep, which a session's budget bounds.
func (r *Record) RichBytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for _, e := range r.entries {
		for _, x := range e.Rich {
			n += x.Bytes
		}
	}
	return n
}

func (r *Record) Update(seq int, f func(e *api.Entry)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.getLocked(seq)
	if e == nil {
		return
	}
	r.freshLocked(e)
	f(e)
	e.Rev++
	if c := r.clips[seq]; c != nil && e.Status != api.StatusRunning && e.Kind == api.EntryCell && !c.done {
		r.finishClipLocked(seq, c) // its output is final
	}
	delete(r.dirty, seq)
	r.saveLocked(e)
	r.notifyLocked()
}

// finishClipLocked lets go of a finished entry's clip but for its
// stream, which is kept for followers until finishedStreams later
// entries have finished.
func (r *Record) finishClipLocked(seq int, c *clip) {
	c.closeFile()
	c.stream.finish()
	c.done, c.head, c.tail, c.scratch = true, nil, nil, nil
	r.finished = append(r.finished, seq)
	for len(r.finished) > finishedStreams {
		delete(r.clips, r.finished[0])
		r.finished = r.finished[1:]
	}
}

// dropClipLocked lets go of entry seq's clip, closing its file.
func (r *Record) dropClipLocked(seq int) {
	if c := r.clips[seq]; c != nil {
		c.closeFile()
		delete(r.clips, seq)
	}
}

// freshLocked brings an entry's output up to date with its clip.
func (r *Record) freshLocked(e *api.Entry) {
	if c := r.clips[e.Seq]; c != nil && c.stale && !c.done {
		e.Output, e.OutputCut = c.text()
		c.stale = false
	}
}

// getLocked finds entry seq. Seqs rise through the entries, with gaps
// where a record's file had lines its loader left out.
func (r *Record) getLocked(seq int) *api.Entry {
	if len(r.entries) == 0 {
		return nil
	}
	i := seq - r.entries[0].Seq
	if i < 0 || i >= len(r.entries) || r.entries[i].Seq != seq {
		i = sort.Search(len(r.entries), func(i int) bool { return r.entries[i].Seq >= seq })
		if i == len(r.entries) || r.entries[i].Seq != seq {
			return nil
		}
	}
	return r.entries[i]
}

// Since returns copies of the entries after seq, the number dropped and
// the next seq.
func (r *Record) Since(seq int) (entries []api.Entry, dropped, next int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		if e.Seq > seq {
			r.freshLocked(e)
			entries = append(entries, *e)
		}
	}
	return entries, r.dropped, r.next
}

// Get returns a copy of one entry.
func (r *Record) Get(seq int) (api.Entry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.getLocked(seq); e != nil {
		r.freshLocked(e)
		return *e, true
	}
	return api.Entry{}, false
}

// SaveError is the last error saving the record, or nil.
func (r *Record) SaveError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.saveErr
}

// dirtyLocked marks an entry to save at the next flush.
func (r *Record) dirtyLocked(seq int) {
	r.dirty[seq] = true
	r.flushSoonLocked()
}

// positionsChangedLocked marks the positions to save at the next flush.
func (r *Record) positionsChangedLocked() {
	r.posSave = true
	r.flushSoonLocked()
}

func (r *Record) flushSoonLocked() {
	if r.timer == nil {
		r.timer = time.AfterFunc(saveEvery, r.flush)
	}
}

// flush saves the entries changed since their last save, and the
// clients' positions.
func (r *Record) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.timer = nil
	for seq := range r.dirty {
		if e := r.getLocked(seq); e != nil {
			r.saveLocked(e)
		}
	}
	if r.posSave {
		r.savePositionsLocked()
	}
}

// Close saves what is pending and closes the file.
func (r *Record) Close() error {
	r.flush()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	if r.closer != nil {
		r.closer.Stop()
		r.closer = nil
	}
	for _, c := range r.clips {
		c.closeFile()
	}
	r.closed = true
	r.notifyLocked() // followers of this record look for the next one
	if r.f != nil {
		err := r.f.Close()
		r.f = nil
		return err
	}
	return nil
}

// compactSlack is what a record's file may hold beyond four times its
// entries before it is compacted.
const compactSlack = 1 << 20

// saveLocked appends one line for e, compacting the file when it holds
// far more lines than entries, or far more bytes than they take: an
// entry's line is bounded, so the file stays within a few times its
// entries whatever changes them.
func (r *Record) saveLocked(e *api.Entry) {
	r.freshLocked(e)
	delete(r.dirty, e.Seq)
	if r.lost || r.lines > 4*api.RecordKeep || r.size > 4*r.live+compactSlack {
		r.compactLocked()
		return
	}
	if r.f == nil {
		f, err := paths.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
		if err != nil {
			r.saveErr = fmt.Errorf("cannot save the record of %q: %w", r.name, err)
			r.lost = true // this line is missing: the next save writes them all
			return
		}
		r.f = f
	}
	r.lastSave = time.Now()
	if r.closer == nil {
		r.closer = time.AfterFunc(fileIdle, r.closeIdle)
	}
	b, _ := json.Marshal(e)
	b = append(b, '\n')
	if r.noNL {
		// A crash cut the last line: this one must not join it.
		b = append([]byte{'\n'}, b...)
	}
	n, err := r.f.Write(b)
	r.size += int64(n)
	if err != nil {
		// Part of a line may be in the file: the next save writes it
		// whole, so no entry's line (a new seq) goes missing.
		r.saveErr = fmt.Errorf("cannot save the record of %q: %w", r.name, err)
		r.lost = true
		return
	}
	r.lines++
	r.noNL = false
	r.saveErr = nil
}

// closeIdle closes the file if it has been quiet for fileIdle, or looks
// again when it will have been.
func (r *Record) closeIdle() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closer == nil {
		return // closed meanwhile
	}
	if wait := fileIdle - time.Since(r.lastSave); r.f != nil && wait > 0 {
		r.closer.Reset(wait)
		return
	}
	r.closer = nil
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

// compactLocked rewrites the file with the entries kept, one line each;
// a file at its place that the record would refuse to open (a planted
// link) is left as it is.
func (r *Record) compactLocked() {
	if _, err := os.Lstat(r.path); err == nil {
		if err := paths.CheckFile(r.path); err != nil {
			r.saveErr = fmt.Errorf("cannot save the record of %q: %w", r.name, err)
			r.lost = true
			return
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s%d}\n", headerPrefix, r.next)
	for _, e := range r.entries {
		r.freshLocked(e)
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := paths.WriteFile(r.path, b.Bytes()); err != nil {
		r.saveErr = fmt.Errorf("cannot save the record of %q: %w", r.name, err)
		r.lost = true
		return
	}
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	r.lines = len(r.entries) + 1
	r.size, r.live = int64(b.Len()), int64(b.Len())
	r.lost, r.noNL = false, false
	r.dirty = map[int]bool{}
	r.saveErr = nil
}

// clip keeps the head and the tail of a growing output within the entry
// limit, and counts its characters; once the output outgrows the entry it
// saves the whole of it to a file (path), so a cut entry says where the
// rest is. Its stream is what followers read as it grows.
type clip struct {
	head, tail []byte
	dropped    bool   // bytes between head and tail were let go
	total      int    // characters (runes) counted so far
	pend       []byte // an incomplete UTF-8 sequence at the end, not yet counted
	scratch    []byte
	stale      bool // written to since its entry's text was made
	done       bool // the entry finished: only the stream is kept

	stream stream
	// wholePath is where the whole output goes once it outgrows the
	// entry, and path that file once it did. elsewhere: the session's
	// holder writes that file (a cell's output log), not the clip.
	wholePath string
	path      string
	elsewhere bool
	f         *os.File
	w         *bufio.Writer
	fileErr   error
}

// Bytes kept at each end: a character is at most 4 bytes.
const (
	headChars = api.EntryOutputLimit / 2
	tailChars = api.EntryOutputLimit - headChars
)

// count counts the characters of p as part of the whole stream: a
// character split between two writes counts once.
func (c *clip) count(p []byte) {
	if len(c.pend) > 0 {
		c.scratch = append(append(c.scratch[:0], c.pend...), p...)
		p, c.pend = c.scratch, c.pend[:0]
	}
	k := 0
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				k = len(p) - i
			}
			break
		}
	}
	c.total += plain.RuneCount(p[:len(p)-k])
	c.pend = append(c.pend, p[len(p)-k:]...)
}

// chars is the number of characters written: an unfinished sequence at
// the end counts as its bytes, as it would if the stream ended there.
func (c *clip) chars() int { return c.total + len(c.pend) }

func (c *clip) Write(p []byte) {
	c.count(p)
	c.stream.write(p)
	if c.path == "" && c.wholePath != "" && c.chars() > api.EntryOutputLimit {
		// Before p goes into the head and tail, which let bytes go once
		// the output is over the limit: until now they hold all of it.
		c.path = c.wholePath
		if !c.elsewhere {
			c.spill()
		}
	}
	if c.path != "" && !c.elsewhere {
		c.save(p)
	}
	if room := 4*headChars - len(c.head); room > 0 {
		n := min(room, len(p))
		c.head = append(c.head, p[:n]...)
		p = p[n:]
	}
	if len(p) == 0 {
		return
	}
	if len(p) > 8*tailChars {
		// As below, without copying the whole of a large write first.
		c.tail, c.dropped = append(c.tail[:0], p[len(p)-4*tailChars:]...), true
		return
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 8*tailChars {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-4*tailChars:]...)
		c.dropped = true
	}
}

// firstRunes is the first n characters of p, made valid UTF-8.
func firstRunes(p []byte, n int) string {
	if !plain.Simple(p) {
		r := []rune(strings.ToValidUTF8(string(p), "\uFFFD"))
		return string(r[:min(n, len(r))])
	}
	return string(p[:min(n, len(p))])
}

// lastRunes is the last n characters of p, made valid UTF-8.
func lastRunes(p []byte, n int) string {
	if !plain.Simple(p) {
		r := []rune(strings.ToValidUTF8(string(p), "\uFFFD"))
		return string(r[max(len(r)-n, 0):])
	}
	return string(p[max(len(p)-n, 0):])
}

// text is the output within the limit, made plain, and its cut if it was
// cut (counting the characters printed).
func (c *clip) text() (string, *bound.Cut) {
	s, cut := c.bounded()
	if cut != nil && c.path != "" && c.fileErr == nil {
		c.flushFile()
		cut.File = c.path
	}
	return plain.Text(s), cut
}

func (c *clip) bounded() (string, *bound.Cut) {
	if !c.dropped {
		return bound.HeadTailLines(string(c.head)+string(c.tail), api.EntryOutputLimit)
	}
	return bound.LineCut(firstRunes(c.head, headChars), lastRunes(c.tail, tailChars), c.chars())
}
