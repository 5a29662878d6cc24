package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/limit"
	"golang.org/x/sys/unix"
)

// What the runtime tells a session, through the holder that keeps it (a
// Session is its holder.Handler, called from one goroutine, in order):
// output, a cell's result, the runtime's end, or its holder's.

// Output implements holder.Handler: output of the running cell, or
// output printed while none ran.
func (s *Session) Output(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cur; c != nil && !c.finished() {
		c.out.write(p)
		s.rec.Output(c.seq, p)
		if len(p) >= recentMax {
			s.recent = append(s.recent[:0], p[len(p)-recentMax:]...)
		} else {
			if len(s.recent)+len(p) > recentMax {
				s.recent = append(s.recent[:0], s.recent[len(s.recent)+len(p)-recentMax:]...)
			}
			s.recent = append(s.recent, p...)
		}
		return
	}
	s.idleUnread = true
	if s.quietAsked {
		s.idle.Write(p)
	}
	switch {
	case s.idleSeq == 0 && s.adoptIdle != 0:
		s.idleSeq, s.adoptIdle = s.adoptIdle, 0
		s.rec.Output(s.idleSeq, p)
	case s.idleSeq == 0:
		s.idleSeq = s.rec.Add(api.Entry{Kind: api.EntryIdle, Generation: s.Generation, Runtime: s.Runtime,
			Started: time.Now(), Output: string(p)})
		// The holder keeps the output until the next cell; a daemon that
		// takes the session up goes on with this entry.
		after := 0
		if s.cur != nil {
			after = s.cur.n
		}
		if s.p != nil {
			s.p.IdleEntry(after, s.idleSeq)
		}
	default:
		s.rec.Output(s.idleSeq, p)
	}
}

// LogCut implements holder.Handler: the cell's whole-output file holds
// its output only up to byte at; replies read the rest from what the
// daemon holds of its end, and say what is missing.
func (s *Session) LogCut(cell int, at int64, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cur; c != nil && c.n == cell {
		err := errors.New(why)
		c.out.cut(at, err)
		s.rec.WholeFailed(c.seq, err)
	}
}

// InputAsked implements driver.Asker: the running cell waits for a line
// of input; whoever waits for the cell is answered at once.
func (s *Session) InputAsked(q driver.Prompt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cur; c != nil && c.n == q.Cell && !c.finished() {
		q = boundQuestion(q)
		c.prompt = &q
		s.notifyLocked()
	}
}

// CellDone implements holder.Handler: a cell's result, with the files the
// runtime saved (a whole error or value, figures) taken over by the
// record. A daemon that takes a session up may be told a result an
// earlier one had already taken over: taking over is idempotent.
func (s *Session) CellDone(r driver.Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cur
	if c == nil || c.n != r.Cell || c.finished() {
		if r.ErrorFile != "" {
			os.Remove(r.ErrorFile)
		}
		return
	}
	c.prompt = nil
	c.ended = r.At
	if c.ended.IsZero() {
		c.ended = time.Now()
	}
	var whole string
	if r.Error, whole = boundError(r.Error, api.ErrorLimit, r.MessageTotal, r.TracebackTotal); whole != "" {
		// A runtime that cut its error itself said how long it was (the
		// cut counts from that) and saved the whole: its file is taken
		// over, since the text here is not the whole.
		// Saved under the cell's record entry, which points at it as
		// long as it is kept; the reply points at the same file.
		var path string
		var err error
		switch {
		case r.ErrorFile != "":
			path, err = s.rec.KeepWholeError(c.seq, r.ErrorFile)
		case r.ErrorSaveErr != "":
			err = fmt.Errorf("the runtime could not save it: %s", r.ErrorSaveErr)
		case r.MessageTotal > 0 || r.TracebackTotal > 0:
			err = fmt.Errorf("the runtime cut it and saved no whole")
		default:
			path, err = s.rec.SaveWholeError(c.seq, whole)
		}
		if err != nil {
			c.errSaveErr = err
		} else {
			for _, cut := range []*bound.Cut{r.Error.MessageCut, r.Error.TracebackCut} {
				if cut != nil {
					cut.File = path
				}
			}
		}
	}
	switch {
	case r.ValueFile != "" && r.ValueCut != nil:
		if path, err := s.rec.KeepWholeValue(c.seq, r.ValueFile); err != nil {
			c.valueSaveErr = err
		} else {
			r.ValueCut.File = path
		}
	case r.ValueFile != "":
		os.Remove(r.ValueFile)
	case r.ValueSaveErr != "":
		c.valueSaveErr = fmt.Errorf("the runtime could not save it: %s", r.ValueSaveErr)
	}
	held, over := s.rec.RichBytes(), false
	for i := range r.Rich {
		x := &r.Rich[i]
		if held+x.Bytes > api.RichBudget {
			os.Remove(x.File)
			x.File = ""
			if over {
				continue
			}
			over = true
			c.richErrs = append(c.richErrs, fmt.Errorf("the session's figures already take %s, its budget is %s; older ones are freed as their entries leave the record",
				bytesIn(held), bytesIn(api.RichBudget)))
			continue
		}
		held += x.Bytes
		path, err := s.rec.KeepRich(c.seq, i+1, x.File, filepath.Ext(x.File))
		if err != nil {
			c.richErrs = append(c.richErrs, err)
			x.File = ""
			continue
		}
		x.File = path
	}
	r.Rich = slices.DeleteFunc(r.Rich, func(x api.Rich) bool { return x.File == "" })
	c.result = &r
	c.status = r.Status
	if n := s.limit.OOMKills() - c.ooms; n > 0 {
		// The kernel killed a child of the runtime, the largest process
		// of the group; the runtime lives on, and only saw a child die.
		c.oomNote = &api.Note{Kind: api.NoteChildOOM, Session: s.Name, Cell: c.n, Count: n, Limit: s.limit.Describe(), Cap: s.limit.Over() == limit.OverCap}
	}
	display, prompt := "", ""
	if r.Value != "" {
		display = s.facts().Display(c.n, r.ValueName, r.Value)
		if p := s.facts().Display(c.n, r.ValueName, ""); strings.HasPrefix(display, p) {
			prompt = p
		}
	}
	// The entry gets its own copy of the time: a pointer into the cell
	// would keep the whole cell, its output buffers with it, for as long
	// as the record keeps the entry.
	ended := c.ended
	s.rec.Update(c.seq, func(e *api.Entry) {
		e.Status, e.Ended, e.Display, e.Prompt, e.Error, e.Rich = r.Status, &ended, display, prompt, r.Error, r.Rich
	})
	s.lastActive = c.ended
	names := boundNames(r.Names)
	changed := names != nil && !slices.Equal(names, s.names)
	if changed {
		s.names, s.namesTotal = names, len(r.Names)
	}
	if s.state == Running {
		s.state = Idle
	}
	s.notifyLocked()
	if changed {
		go s.m.noteNames(s)
	}
}

// Exited implements holder.Handler: the runtime process ended, by our
// hand or not, at the time its holder reaped it.
func (s *Session) Exited(e driver.Exit) {
	s.mu.Lock()
	d := s.dying
	if d == nil {
		d = deathFromExit(e, s.facts().Exit)
		switch {
		case e.Signal == int(syscall.SIGKILL) && s.limit.OOMKilled():
			d.By = api.ByMemory
			if s.limit.Over() == limit.OverCap {
				d.By = api.ByMemoryCap
			}
			d.Cause = "killed by the kernel for going over " + s.limit.OverWords()
		case s.limit != nil && e.Signal != 0:
			d.Cause += fmt.Sprintf("; it had a memory limit of %s, and an allocation beyond it may have ended it", s.limit.Describe())
		}
	}
	s.endLocked(d)
}

// HolderLost implements holder.Handler: the holder that kept the runtime
// ended first, so no exit of the runtime will be told; the session is
// dead, and what is left of its tree is ended.
func (s *Session) HolderLost(cause string) {
	s.mu.Lock()
	d := s.dying
	if d == nil {
		d = &api.Death{By: api.ByHolder, At: time.Now(), Cause: cause + "; the runtime was ended with it"}
	}
	s.endLocked(d)
}

// endLocked marks the session dead of d, and the cell it ran with it,
// then writes the death down outside the lock (which it lets go).
func (s *Session) endLocked(d *api.Death) {
	s.limit.Release()
	s.death = d
	s.state = Dead
	if c := s.cur; c != nil && !c.finished() {
		c.status = api.StatusDead
		c.ended = d.At
		ended := c.ended // the entry's own (see CellDone)
		s.rec.Update(c.seq, func(e *api.Entry) {
			e.Status, e.Ended, e.Text = api.StatusDead, &ended, "the session died during this cell: "+d.Cause
		})
	}
	s.notifyLocked()
	s.mu.Unlock()
	// Ending what is left of the tree and writing the death down take
	// time and the disk: not in the event's handler, which holds up the
	// holder's next events. Until they are done, kill, restart and a new
	// life of the name wait on exited.
	go func() {
		s.m.died(s, d)
		close(s.exited)
	}()
}

// deathFromExit says how the runtime ended; how names the way a cell ends
// it itself ("os._exit()"), if known.
func deathFromExit(e driver.Exit, how string) *api.Death {
	at := e.At
	if at.IsZero() {
		at = time.Now()
	}
	d := &api.Death{At: at, ExitCode: e.Code, Signal: e.Signal, By: api.ByExit}
	switch {
	case e.Signal == int(syscall.SIGKILL):
		d.By = api.BySignal
		// Who sent it is not known here: the kernel's out-of-memory
		// killer, a person, a supervisor. The words say what the records
		// show and where to look, and guess no sender.
		d.Cause = "killed by signal 9 (SIGKILL); polyrepl did not send it as far as its records show (the kernel's log, `dmesg`, says whether its out-of-memory killer did)"
	case e.Signal != 0:
		d.By = api.BySignal
		d.Cause = fmt.Sprintf("killed by signal %d (%s)", e.Signal, unixSignalName(e.Signal))
	case e.Err != nil:
		d.Cause = fmt.Sprintf("lost: %v", e.Err)
	default:
		if how == "" {
			how = "its own exit"
		}
		d.Cause = fmt.Sprintf("the runtime exited with status %d (%s, a fatal error or a crash)", e.Code, how)
	}
	return d
}

func unixSignalName(sig int) string {
	return fmt.Sprintf("%s, %s", unix.SignalName(syscall.Signal(sig)), syscall.Signal(sig))
}
