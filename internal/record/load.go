package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/paths"
)

// A record's file is read line by line, each line one state of an
// entry, the last line of a seq winning. The loader takes every line it
// can and never stops at one it cannot: a line too long, not an entry,
// or whose seq does not follow the entries before it is left out, the
// lines after it are read, and the record says so in a note entry
// (api.NoteUnread), with the file as it was kept aside.
//
// Seqs. A new entry's first line has the next seq, and every later line
// of it comes after that one, so a file's seqs start at its first
// entry's (where the last compaction left them) and each line's seq is
// at most one past the highest before it. A line whose seq could not be
// read may have been the next new entry, so it lets the next seq move on
// by one; a seq further on, or before the first, is refused: it numbers
// nothing and drops nothing (a planted {"seq":2147483647} once made the
// record drop every entry and remove their output files). The next seq
// is past every seq the file may have given, so none is given twice.
const (
	// maxLine bounds a line of a record file. A bounded entry takes far
	// less (well under 1 MiB); records written before answers were
	// bounded have lines of a few MB, which still load, bounded as they
	// do.
	maxLine = 8 << 20
	// maxSeq bounds a seq: the largest integer every JSON reader keeps
	// exact. No record reaches it; a line claiming more is refused.
	maxSeq = 1 << 53
	// prefixLen is how much of an over-long line is kept: enough for
	// the seq it begins with.
	prefixLen = 64
)

// loaded is what a record's file held: its entries and what was left out.
type loaded struct {
	bySeq  map[int]*api.Entry
	size   map[int]int // bytes of the line each entry was read from
	base   int         // the file's first seq (0: none yet)
	headed bool        // the file starts with a compaction's header
	hi     int         // the highest seq the file may have given
	lines  int         // lines read
	count  int         // lines left out
	left   []api.RecordLine
	noNL   bool // the last line has no newline (cut off by a crash)
}

// scan reads a record's lines from rd.
func scan(rd io.Reader) *loaded {
	l := &loaded{bySeq: map[int]*api.Entry{}, size: map[int]int{}}
	br := bufio.NewReaderSize(rd, 64<<10)
	var buf []byte
	for {
		line, n, long, nl, err := readLine(br, buf)
		if err == io.EOF {
			break
		}
		l.lines++
		if cap(line) > cap(buf) {
			buf = line[:0]
		}
		if err != nil {
			l.leave(api.RecordLine{Line: l.lines, Bytes: n, Why: api.UnreadError, Err: err.Error()})
			break
		}
		l.noNL = !nl
		if n == 0 {
			continue // a blank line holds nothing
		}
		if l.lines == 1 && l.header(line) {
			continue
		}
		l.take(line, n, long)
	}
	return l
}

// take reads one line of n bytes (its first prefixLen if long).
func (l *loaded) take(line []byte, n int, long bool) {
	bad := api.RecordLine{Line: l.lines, Bytes: n}
	var e api.Entry
	known := false
	switch {
	case long:
		bad.Why, bad.Limit = api.UnreadLong, maxLine
		bad.Seq, known = prefixSeq(line)
	case json.Unmarshal(line, &e) != nil:
		bad.Why = api.UnreadMalformed
		bad.Seq, known = prefixSeq(line)
	case e.Seq <= 0:
		bad.Why, known = api.UnreadMalformed, true // no entry's: it claims none
	case !l.follows(e.Seq):
		bad.Why, bad.Seq, known = api.UnreadSeq, e.Seq, true
		if e.Seq > l.hi {
			bad.After = l.hi // past the next seq; else before the first
		}
	default:
		l.claim(e.Seq)
		l.bySeq[e.Seq] = &e
		l.size[e.Seq] = n
		return
	}
	switch {
	case known && bad.Seq > 0 && l.follows(bad.Seq):
		l.claim(bad.Seq) // its entry may be newer than any line read
	case !known && (l.base > 0 || l.headed):
		l.hi++ // it may have been the next entry
	}
	l.leave(bad)
}

// headerPrefix starts the line a compaction writes first: the next seq
// the record had, which lines left out at an earlier load may have
// moved past its last entry's. An older loader skips it (seq 0).
const headerPrefix = `{"seq":0,"next":`

// header reads the file's first line if it is a header.
func (l *loaded) header(line []byte) bool {
	if !bytes.HasPrefix(line, []byte(headerPrefix)) {
		return false
	}
	var h struct{ Next int }
	if json.Unmarshal(line, &h) != nil || h.Next < 1 || h.Next > maxSeq+1 {
		return false
	}
	l.hi, l.headed = h.Next-1, true
	return true
}

// follows says whether a line may have seq: any as the file's first
// entry, then from that one to one past the highest seq before.
func (l *loaded) follows(seq int) bool {
	switch {
	case seq <= 0 || seq > maxSeq:
		return false
	case l.base == 0:
		return true
	}
	return seq >= l.base && seq <= l.hi+1
}

func (l *loaded) claim(seq int) {
	if l.base == 0 {
		l.base = seq
	}
	l.hi = max(l.hi, seq)
}

func (l *loaded) leave(bad api.RecordLine) {
	l.count++
	if len(l.left) < api.RecordLinesTold {
		l.left = append(l.left, bad)
	}
}

// readLine reads the next line of br, without its newline: whole if it
// has at most maxLine bytes, else its first prefixLen bytes (long); n
// counts its bytes, nl says it ended with a newline. buf is reused. err
// is io.EOF after the last line.
func readLine(br *bufio.Reader, buf []byte) (line []byte, n int, long, nl bool, err error) {
	line = buf[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if err == nil {
			chunk, nl = chunk[:len(chunk)-1], true
		}
		switch {
		case long:
		case len(line)+len(chunk) > maxLine:
			long = true
			line = line[:min(len(line), prefixLen)]
			line = append(line, chunk[:min(len(chunk), prefixLen-len(line))]...)
		default:
			line = append(line, chunk...)
		}
		switch {
		case err == nil:
			return line, n - 1, long, true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && n == 0:
			return nil, 0, false, false, io.EOF
		case err == io.EOF:
			return line, n, long, false, nil
		default:
			return line, n, long, false, err
		}
	}
}

// prefixSeq reads the seq a line begins with, as the record writes
// it ({"seq":N,…}): known if the line begins so, with the seq (maxSeq+1
// if larger).
func prefixSeq(line []byte) (int, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"seq":`))
	if !ok || len(rest) == 0 || rest[0] < '0' || rest[0] > '9' {
		return 0, false
	}
	n := 0
	for _, c := range rest {
		if c < '0' || c > '9' {
			break
		}
		n = min(n*10+int(c-'0'), maxSeq+1)
	}
	return n, true
}

// load reads the record's file: its last api.RecordKeep entries, the
// next seq, what was left out. A missing file is an empty record.
func (r *Record) load() (*loaded, error) {
	f, err := paths.OpenFile(r.path, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the record of %q: %w", r.name, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		r.modTime, r.size = fi.ModTime(), fi.Size()
	}
	l := scan(f)
	seqs := make([]int, 0, len(l.bySeq))
	for seq := range l.bySeq {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	// The entries kept are the last RecordKeep the file holds, not a
	// range of seqs: lines left out move the next seq on, and must not
	// drop the entries before them.
	k := max(len(seqs)-api.RecordKeep, 0)
	for _, seq := range seqs[:k] {
		r.removeOutput(l.bySeq[seq]) // dropped: more entries came after it
	}
	for _, seq := range seqs[k:] {
		e := l.bySeq[seq]
		if r.boundLoaded(e) {
			r.lost = true // compact: the file holds it unbounded
		}
		r.entries = append(r.entries, e)
		r.live += int64(l.size[seq]) + 1
	}
	r.next = l.hi + 1
	r.dropped = r.next - 1
	if len(r.entries) > 0 {
		r.dropped = r.entries[0].Seq - 1
	}
	r.lines, r.noNL = l.lines, l.noNL
	return l, nil
}

// unread reports the lines of the record's file left out at load: the
// file as it was is kept aside (NAME.jsonl.unread-TIME, never read as a
// record) and a fresh one written from the entries read, so the lines
// are told once; a note entry says which, and so does the error, for
// the daemon's log.
func (r *Record) unread(l *loaded) error {
	n := api.Note{Kind: api.NoteUnread, Session: r.name, Count: l.count, Lines: l.left}
	aside, err := r.setAside()
	if err != nil {
		n.Err = err.Error()
		r.lost = false // not rewritten now: the lines left out are still there to see
	} else {
		n.File = aside
		r.mu.Lock()
		r.compactLocked()
		r.mu.Unlock()
	}
	r.Add(api.Entry{Kind: api.EntryNote, Note: &n, Started: time.Now()})
	var b strings.Builder
	fmt.Fprintf(&b, "the record of %q: %d lines of %s left out (", r.name, l.count, r.path)
	for i, bad := range l.left {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "line %d, %d bytes: %s", bad.Line, bad.Bytes, bad.Why)
		if bad.Seq > 0 {
			fmt.Fprintf(&b, " (seq %d)", bad.Seq)
		}
	}
	if l.count > len(l.left) {
		b.WriteString(", …")
	}
	b.WriteString("); ")
	if err != nil {
		fmt.Fprintf(&b, "the file could not be kept aside: %v", err)
	} else {
		fmt.Fprintf(&b, "the file as it was is kept in %s", aside)
	}
	return errors.New(b.String())
}

// linkFile is os.Link, which a test makes fail.
var linkFile = os.Link

// setAside moves the record's file to a new name beside it, never over
// another file.
func (r *Record) setAside() (string, error) {
	base := r.path + ".unread-" + time.Now().UTC().Format("20060102T150405Z")
	path := base
	for i := 2; ; i++ {
		err := linkFile(r.path, path)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			return "", fmt.Errorf("cannot keep %s aside: %w", r.path, err)
		}
		path = fmt.Sprintf("%s-%d", base, i)
	}
	if err := os.Remove(r.path); err != nil {
		os.Remove(path)
		return "", fmt.Errorf("cannot keep %s aside: %w", r.path, err)
	}
	return path, nil
}
