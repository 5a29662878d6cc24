package record

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/paths"
)

// A cell's answers are bounded in its entry as its output is: the entry
// keeps the first api.EntryAnswersHead answers and the last
// api.EntryAnswersTail, each answer's text and prompt cut to head and
// tail, and says what it left out (AnswersCut); once anything is left
// out, every answer is kept whole in a file beside the entry
// (NAME-SEQ.answers.jsonl, one api.Answer a line), removed with it.
// Each answer rewrites the entry as a line of the record's file, so an
// unbounded list made the file grow by the square of the answers (450
// answers of 10,000 characters: 1 GB in 3 s, with 4.5 MB lines).

// markerRoom is what a cut's marker adds to the characters a cut text
// keeps: a text within its limit and this is not cut again.
const markerRoom = 100

// Answer adds an answer to the cell entry seq, within the entry's
// bounds, and saves the entry.
func (r *Record) Answer(seq int, a api.Answer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.getLocked(seq)
	if e == nil {
		return
	}
	r.freshLocked(e)
	r.answerLocked(e, a)
	e.Rev++
	delete(r.dirty, seq)
	r.saveLocked(e)
	r.notifyLocked()
}

func (r *Record) answerLocked(e *api.Entry, a api.Answer) {
	path := r.answersPath(e.Seq)
	kept := cutAnswer(a, path)
	whole := e.AnswersCut == nil
	if whole && len(e.Answers) < api.EntryAnswersHead+api.EntryAnswersTail && kept.TextCut == nil && kept.PromptCut == nil {
		e.Answers = append(e.Answers, a)
		return
	}
	switch {
	case whole:
		// The first cut: the answers so far are whole, and start the file.
		e.AnswersCut = &api.AnswersCut{Total: len(e.Answers)}
		if r.writeAnswers(e.Seq, append(e.Answers[:len(e.Answers):len(e.Answers)], a), true) == nil {
			e.AnswersCut.File = path
		}
	case e.AnswersCut.File == path:
		if r.writeAnswers(e.Seq, []api.Answer{a}, false) != nil {
			e.AnswersCut.File = "" // it no longer holds them all
		}
	}
	if e.AnswersCut.File == "" {
		kept = cutAnswer(a, "")
	}
	e.Answers = append(e.Answers, kept)
	e.AnswersCut.Total++
	e.Answers = keepAnswers(e.Answers, e.AnswersCut)
}

// keepAnswers keeps the first and last answers of all within an entry's
// bounds, and says so in cut.
func keepAnswers(all []api.Answer, cut *api.AnswersCut) []api.Answer {
	head, tail := api.EntryAnswersHead, api.EntryAnswersTail
	if len(all) > head+tail {
		all = append(all[:head], all[len(all)-tail:]...)
	}
	for i := range all {
		all[i] = cutAnswer(all[i], cut.File)
	}
	cut.Total = max(cut.Total, len(all))
	cut.Head = min(len(all), head)
	cut.Tail = len(all) - cut.Head
	return all
}

// cutAnswer cuts an answer's text and prompt to an entry's bounds,
// naming file as where the whole is.
func cutAnswer(a api.Answer, file string) api.Answer {
	a.Text, a.TextCut = cutText(a.Text, a.TextCut, api.EntryAnswerLimit, file)
	a.Prompt, a.PromptCut = cutText(a.Prompt, a.PromptCut, api.EntryPromptLimit, file)
	return a
}

// cutText cuts s to head and tail within limit characters, unless it is
// within them (with a cut's marker, if cut already).
func cutText(s string, cut *bound.Cut, limit int, file string) (string, *bound.Cut) {
	room := limit
	if cut != nil {
		room += markerRoom
	}
	if len(s) <= room || utf8.RuneCountInString(s) <= room {
		return s, cut
	}
	short, c := bound.HeadTail(s, limit)
	if cut != nil {
		c.Total = max(c.Total, cut.Total)
	}
	c.File = file
	return short, c
}

// answersPath is where entry seq's answers are kept whole once its
// entry leaves some out: beside its whole output, removed with it.
func (r *Record) answersPath(seq int) string {
	return filepath.Join(filepath.Dir(r.path), "output", fmt.Sprintf("%s-%d.answers.jsonl", r.name, seq))
}

// writeAnswers adds answers to entry seq's file of answers, or starts
// it with them.
func (r *Record) writeAnswers(seq int, answers []api.Answer, start bool) error {
	path := r.answersPath(seq)
	if err := paths.EnsurePrivateDir(filepath.Dir(path)); err != nil {
		return err
	}
	flag := os.O_WRONLY | os.O_APPEND | os.O_CREATE
	if start {
		flag |= os.O_TRUNC
	}
	f, err := paths.OpenFile(path, flag)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, a := range answers {
		if err == nil {
			err = enc.Encode(a)
		}
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// boundLoaded holds an entry read from a record's file to the bounds
// the record keeps its entries in, as every text from a file on disk
// is: a record written before answers were bounded has entries with
// thousands of them (their whole is saved to the entry's file now), and
// a line may have been written by anyone. It reports whether it changed
// the entry.
func (r *Record) boundLoaded(e *api.Entry) bool {
	changed := false
	clamp := func(s string, cut *bound.Cut, limit int) (string, *bound.Cut) {
		t, c := cutText(s, cut, limit, "")
		if c != cut {
			changed = true
			if cut != nil {
				c.File = cut.File
			}
		}
		return t, c
	}
	e.Code, e.CodeCut = clamp(e.Code, e.CodeCut, api.EntryCodeLimit)
	e.Output, e.OutputCut = clamp(e.Output, e.OutputCut, api.EntryOutputLimit)
	e.Display, _ = clamp(e.Display, nil, api.ValueLimit+markerRoom)
	e.Text, _ = clamp(e.Text, nil, api.EntryOutputLimit)
	if x := e.Error; x != nil {
		x.Message, x.MessageCut = clamp(x.Message, x.MessageCut, api.ErrorLimit)
		x.Traceback, x.TracebackCut = clamp(x.Traceback, x.TracebackCut, api.ErrorLimit)
	}
	over := len(e.Answers) > api.EntryAnswersHead+api.EntryAnswersTail
	for _, a := range e.Answers {
		if b := cutAnswer(a, ""); b.TextCut != a.TextCut || b.PromptCut != a.PromptCut {
			over = true
		}
	}
	if !over {
		return changed
	}
	if e.AnswersCut == nil {
		// Every answer is whole here: the file gets them all.
		e.AnswersCut = &api.AnswersCut{Total: len(e.Answers)}
		if r.writeAnswers(e.Seq, e.Answers, true) == nil {
			e.AnswersCut.File = r.answersPath(e.Seq)
		}
	}
	e.Answers = keepAnswers(e.Answers, e.AnswersCut)
	return true
}
