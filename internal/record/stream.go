package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/plain"
)

// A followed entry's output goes out as it grows (api.OutputChunk), not
// as the whole entry again on every change: each live entry keeps a
// stream of what it printed, made plain in whole lines, of which the
// latest streamWindow bytes are held for followers that lag behind.
// A finished entry's stream is kept a little longer (the last
// finishedStreams), so a follower still reading it gets its end.
const (
	streamWindow    = 512 << 10
	streamPartMax   = 16 << 10 // an unfinished line longer than this is let out as it stands
	finishedStreams = 4
	chunkMax        = 64 << 10 // bytes of text in one chunk
)

// stream is the plain text of an entry's output, in whole lines, as a
// window over its latest part.
type stream struct {
	win   []byte // plain text of whole lines, the latest of them
	chars int    // characters in win
	at    int    // characters before win[0]
	end   int    // characters in all whole lines let out so far
	part  []byte // raw bytes of the unfinished last line
	final bool   // the entry finished: part was let out, nothing follows
	// A place in win already found (hintChar characters after at, at
	// byte hintByte): followers read on from where they were, so a read
	// need not count from the start of the window.
	hintChar, hintByte int
}

func (s *stream) write(p []byte) {
	// A newline further back than streamPartMax from p's end is not
	// looked for: all of p but a character it did not finish goes out
	// then (a line that long would go out as it stands anyway).
	from := max(len(p)-streamPartMax, 0)
	if i := bytes.LastIndexByte(p[from:], '\n'); i >= 0 {
		s.let(p[:from+i+1])
		s.part = append(s.part, p[from+i+1:]...)
		return
	}
	if len(s.part)+len(p) <= streamPartMax {
		s.part = append(s.part, p...)
		return
	}
	// A line longer than streamPartMax goes out as it stands, but for a
	// character p's end began and did not finish.
	n := len(p)
	for n > 0 && !utf8.RuneStart(p[n-1]) {
		n--
	}
	if n > 0 && !utf8.FullRune(p[n-1:]) {
		n--
	}
	if n == 0 {
		// The unfinished character began in part.
		s.part = append(s.part, p...)
		k := len(s.part)
		for k > 0 && !utf8.RuneStart(s.part[k-1]) {
			k--
		}
		if k > 0 && !utf8.FullRune(s.part[k-1:]) {
			k--
		}
		rest := append([]byte(nil), s.part[k:]...)
		s.part = s.part[:k]
		s.let(nil)
		s.part = append(s.part, rest...)
		return
	}
	s.let(p[:n])
	s.part = append(s.part, p[n:]...)
}

// let makes part and then q plain text of the stream, and empties part.
// A large write is not copied whole: only what the window keeps of it.
func (s *stream) let(q []byte) {
	if plain.Simple(s.part) && plain.Simple(q) {
		s.add(s.part, len(s.part))
		s.add(q, len(q))
	} else {
		text := plain.Text(strings.ToValidUTF8(string(s.part)+string(q), "\uFFFD"))
		s.add([]byte(text), utf8.RuneCountInString(text))
	}
	s.part = s.part[:0]
}

// add puts plain text t of chars characters at the end of the window;
// past streamWindow the window keeps about its latest half, from the
// start of a line.
func (s *stream) add(t []byte, chars int) {
	s.end += chars
	if len(s.win)+len(t) <= streamWindow {
		s.win = append(s.win, t...)
		s.chars += chars
		return
	}
	// k is where the kept text begins in win followed by t.
	k := len(s.win) + len(t) - streamWindow/2
	if k < len(s.win) {
		if i := bytes.IndexByte(s.win[k:], '\n'); i >= 0 {
			k += i + 1
		} else if i := bytes.IndexByte(t, '\n'); i >= 0 {
			k = len(s.win) + i + 1
		} else {
			for k < len(s.win) && !utf8.RuneStart(s.win[k]) {
				k++ // not in the middle of a character
			}
		}
	} else if i := bytes.IndexByte(t[k-len(s.win):], '\n'); i >= 0 {
		k += i + 1
	} else {
		for k < len(s.win)+len(t) && !utf8.RuneStart(t[k-len(s.win)]) {
			k++ // not in the middle of a character
		}
	}
	if k <= len(s.win) {
		dropped := plain.RuneCount(s.win[:k])
		s.at += dropped
		n := copy(s.win, s.win[k:])
		s.win = append(s.win[:n], t...)
		s.chars += chars - dropped
	} else {
		kt := k - len(s.win)
		dropped := kt // t's characters are its bytes when it is ASCII
		if chars != len(t) {
			dropped = plain.RuneCount(t[:kt])
		}
		s.at += s.chars + dropped
		s.win = append(s.win[:0], t[kt:]...)
		s.chars = chars - dropped
	}
	if cap(s.win) > 2*streamWindow {
		s.win = append([]byte(nil), s.win...)
	}
	s.hintChar, s.hintByte = 0, 0
}

// finish lets out the unfinished last line: the entry ended.
func (s *stream) finish() {
	if len(s.part) > 0 {
		s.let(nil)
	}
	s.final = true
}

// read returns the text from character offset from on (at most chunkMax
// bytes of it), where it starts (later than from when the window no
// longer holds what came between), and the unfinished last line.
func (s *stream) read(from int) (text string, at int, pending string) {
	from = min(max(from, s.at), s.end)
	off, n := 0, from-s.at
	if n >= s.hintChar {
		off, n = s.hintByte, n-s.hintChar
	}
	for ; n > 0 && off < len(s.win); n-- {
		_, w := utf8.DecodeRune(s.win[off:])
		off += w
	}
	s.hintChar, s.hintByte = from-s.at, off
	rest := s.win[off:]
	if len(rest) > chunkMax {
		k := chunkMax
		if i := bytes.LastIndexByte(rest[:k], '\n'); i >= 0 {
			k = i + 1
		}
		for k < len(rest) && !utf8.RuneStart(rest[k]) {
			k++
		}
		return string(rest[:k]), from, ""
	}
	if !s.final {
		pending = plain.Text(strings.ToValidUTF8(string(s.part), "\uFFFD"))
	}
	return string(rest), from, pending
}

// Stream returns what entry seq printed from character offset from on,
// for a follower: ok is false if the record holds no stream of it (it is
// not a cell or an idle entry, or it finished long ago). A chunk with no
// Text and the same Pending as before has nothing new.
func (r *Record) Stream(seq, from int) (c api.OutputChunk, final, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cl := r.clips[seq]
	if cl == nil {
		return api.OutputChunk{}, false, false
	}
	text, at, pending := cl.stream.read(from)
	c = api.OutputChunk{ID: fmt.Sprintf("%s#%d", r.name, seq), Seq: seq, Offset: at, Text: text, Skipped: at - from, Pending: pending}
	if c.Skipped > 0 && cl.path != "" && cl.fileErr == nil {
		c.File = cl.path
	}
	end := at + utf8.RuneCountInString(text)
	return c, cl.stream.final && end >= cl.stream.end, true
}

// outputPath is where entry seq's whole output is saved once it outgrows
// the entry: beside the record, removed when the entry is dropped.
func (r *Record) outputPath(seq int) string {
	return filepath.Join(filepath.Dir(r.path), "output", fmt.Sprintf("%s-%d.txt", r.name, seq))
}

// removeOutput removes the whole-output file of a dropped entry, and its
// whole error's, value's, answers' and figures': only the ones this
// record would have made for it, wherever the entry says.
func (r *Record) removeOutput(e *api.Entry) {
	if (e.OutputCut != nil && e.OutputCut.File == r.outputPath(e.Seq)) || e.Kind == api.EntryCell {
		// A cell's holder writes its whole output there once it is past
		// the bytes held in memory, whether or not the entry was cut.
		os.Remove(r.outputPath(e.Seq))
	}
	if e.Error != nil && (e.Error.MessageCut != nil || e.Error.TracebackCut != nil) {
		os.Remove(r.errorPath(e.Seq))
	}
	if e.Seq < r.loadedBelow || r.values[e.Seq] {
		os.Remove(r.valuePath(e.Seq))
		delete(r.values, e.Seq)
	}
	if e.AnswersCut != nil && e.AnswersCut.File == r.answersPath(e.Seq) {
		os.Remove(e.AnswersCut.File)
	}
	// A figure's file is named by the entry: only one the record made
	// for this entry is removed (a line planted in the record's file
	// named output/../../anything).
	own := fmt.Sprintf("%s-%d.rich-", r.name, e.Seq)
	for _, x := range e.Rich {
		f := filepath.Clean(x.File)
		if filepath.Dir(f) == filepath.Join(filepath.Dir(r.path), "output") && strings.HasPrefix(filepath.Base(f), own) {
			os.Remove(f)
		}
	}
}

// spill starts the whole-output file of clip c: what it holds so far
// (all of it: a clip drops nothing before its entry is over the limit),
// and from now on every write.
func (c *clip) spill() {
	if err := paths.EnsurePrivateDir(filepath.Dir(c.path)); err != nil {
		c.fileErr = err
		return
	}
	f, err := paths.OpenFile(c.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		c.fileErr = err
		return
	}
	c.f, c.w = f, bufio.NewWriterSize(f, 32<<10)
	c.save(c.head)
	c.save(c.tail)
}

// save adds p to the whole-output file, reopening it if it was closed.
func (c *clip) save(p []byte) {
	if c.fileErr != nil || len(p) == 0 {
		return
	}
	if c.f == nil {
		f, err := paths.OpenFile(c.path, os.O_WRONLY|os.O_APPEND)
		if err != nil {
			c.fileErr = err
			return
		}
		c.f, c.w = f, bufio.NewWriterSize(f, 32<<10)
	}
	if _, err := c.w.Write(p); err != nil {
		c.fileErr = err
	}
}

// closeFile flushes and closes the whole-output file, if open; a later
// write opens it again.
func (c *clip) closeFile() {
	if c.f == nil {
		return
	}
	if err := c.w.Flush(); err != nil && c.fileErr == nil {
		c.fileErr = err
	}
	c.f.Close()
	c.f, c.w = nil, nil
}

// flushFile makes the whole-output file hold all written so far, so a
// path given in a reply can be read at once.
func (c *clip) flushFile() {
	if c.w != nil {
		if err := c.w.Flush(); err != nil && c.fileErr == nil {
			c.fileErr = err
		}
	}
}

// errorPath is where entry seq's whole error is saved when it outgrows
// the bound: beside its whole output, removed with it.
func (r *Record) errorPath(seq int) string {
	return filepath.Join(filepath.Dir(r.path), "output", fmt.Sprintf("%s-%d.error.txt", r.name, seq))
}

// valuePath is where entry seq's whole value is kept when the runtime
// cut it: beside its whole output, removed with it.
func (r *Record) valuePath(seq int) string {
	return filepath.Join(filepath.Dir(r.path), "output", fmt.Sprintf("%s-%d.value.txt", r.name, seq))
}

// KeepWholeValue takes over the whole of entry seq's value, which a
// runtime cut and saved in a file of its own (src), as KeepWholeError
// does an error.
func (r *Record) KeepWholeValue(seq int, src string) (string, error) {
	r.mu.Lock()
	r.values[seq] = true
	r.mu.Unlock()
	if taken(src, r.valuePath(seq)) {
		return r.valuePath(seq), nil
	}
	defer os.Remove(src)
	f, err := paths.OpenFile(src, os.O_RDONLY)
	if err != nil {
		return "", fmt.Errorf("cannot read the whole value the runtime saved: %w", err)
	}
	defer f.Close()
	return r.saveWhole(r.valuePath(seq), "value", f)
}

// KeepRich takes over rich output i of entry seq, a file the runtime
// saved (src), beside the entry's whole output: kept and removed with
// the entry. The runtime's files sit in the runtime directory, which may
// be on another filesystem than the state: then it is copied.
func (r *Record) KeepRich(seq, i int, src, ext string) (string, error) {
	path := filepath.Join(filepath.Dir(r.path), "output", fmt.Sprintf("%s-%d.rich-%d%s", r.name, seq, i, ext))
	if taken(src, path) {
		return path, nil
	}
	if err := paths.EnsurePrivateDir(filepath.Dir(path)); err != nil {
		os.Remove(src)
		return "", err
	}
	// Made the daemon's own where it lies (a rename in one directory),
	// then moved, or copied across filesystems.
	own := src + ".own"
	err := paths.TakeFile(src, own)
	if err == nil {
		defer os.Remove(own)
		if err = os.Rename(own, path); errors.Is(err, syscall.EXDEV) {
			var f *os.File
			if f, err = paths.OpenFile(own, os.O_RDONLY); err == nil {
				_, err = r.saveWhole(path, "figure", f)
				f.Close()
			}
		}
	}
	if err != nil {
		return "", err
	}
	return path, nil
}

// SaveWholeError saves the whole of entry seq's error, which the entry
// and the reply hold cut, and returns its file's path: kept as long as
// the entry, as a cut entry's whole output is.
func (r *Record) SaveWholeError(seq int, text string) (string, error) {
	return r.saveWhole(r.errorPath(seq), "error", strings.NewReader(text))
}

// KeepWholeError takes over a whole error a runtime saved in a file of
// its own (src, in the daemon's runtime directory): copied, as SaveWholeError
// saves one, then src removed. It streams, since a cell's error can be
// tens of megabytes.
func (r *Record) KeepWholeError(seq int, src string) (string, error) {
	if taken(src, r.errorPath(seq)) {
		return r.errorPath(seq), nil
	}
	defer os.Remove(src)
	f, err := paths.OpenFile(src, os.O_RDONLY)
	if err != nil {
		return "", fmt.Errorf("cannot read the whole error the runtime saved: %w", err)
	}
	defer f.Close()
	return r.saveWhole(r.errorPath(seq), "error", f)
}

// taken reports whether a runtime's file src was taken over as dst
// already: a daemon taking a session up from its holder is told again a
// result an earlier daemon had recorded, files and all.
func taken(src, dst string) bool {
	_, serr := os.Lstat(src)
	_, derr := os.Lstat(dst)
	return errors.Is(serr, fs.ErrNotExist) && derr == nil
}

// saveWhole writes a whole text, kind saying what it is, to path.
func (r *Record) saveWhole(path, kind string, text io.Reader) (string, error) {
	if err := paths.EnsurePrivateDir(filepath.Dir(path)); err != nil {
		return "", err
	}
	f, err := paths.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("cannot save the whole %s in %s: %w", kind, path, err)
	}
	return path, nil
}
