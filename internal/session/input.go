package session

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// hidden stands for an answer to a password prompt wherever the answer
// would be shown or kept.
const hidden = "[hidden]"

// Input answers the question the named session's running cell asks,
// then waits for the cell as Wait does.
func (m *Manager) Input(ctx context.Context, name string, req api.InputRequest, prog Progress) (api.CellResult, error) {
	timeout, err := Timeout(req.Timeout, req.Client)
	if err != nil {
		return api.CellResult{}, err
	}
	if len(req.Text) > api.MaxAnswerBytes {
		return api.CellResult{}, badRequest("put the data in a file and read it from the cell", "the answer is %d bytes; the limit is %d bytes (2 MiB); nothing was sent", len(req.Text), api.MaxAnswerBytes)
	}
	if strings.ContainsAny(req.Text, "\r\n") {
		return api.CellResult{}, badInput("", "send each line with its own input", "an answer is one line, and this one has a line break")
	}
	s, err := m.lookup(name, req.Generation, req.Client)
	if err != nil {
		return api.CellResult{}, err
	}
	if s.isDead() {
		return api.CellResult{}, s.deadError(req.Client)
	}
	r, err := s.Input(ctx, req.Text, req.EOF, req.Secret, timeout, req.Client, prog, progressEvery(req.Progress))
	if err == nil {
		r.Notes = append(r.Notes, m.othersNotes(name, req.Client)...)
		m.tell(&r, name, req.Client)
	}
	return r, err
}

// Input gives the running cell's question its answer — text, or end of
// file — and collects the cell: the rest of it, or its next question.
// The answer is echoed into the cell's output as a terminal would show
// it, except a password's, or one its sender says is secret.
func (s *Session) Input(ctx context.Context, text string, eof, secret bool, timeout time.Duration, asker api.Client, prog Progress, every time.Duration) (api.CellResult, error) {
	s.mu.Lock()
	c := s.cur
	if c == nil || c.finished() || c.prompt == nil {
		s.mu.Unlock()
		err := &Error{api.ErrorReply{Code: api.CodeNoInput, Error: fmt.Sprintf("no cell of session %q waits for input: the answer was not sent", s.Name)}}
		if c != nil && !c.finished() {
			err.Next = []api.Action{{Do: api.DoWait, Session: s.Name}}
		}
		return api.CellResult{}, err
	}
	q := c.prompt
	if eof && q.NoEOF {
		s.mu.Unlock()
		hint := "answer with a line, or interrupt the cell"
		if how := s.facts().ConsoleLines; how != "" {
			hint = "answer with a line (" + how + "), or interrupt the cell"
		}
		return api.CellResult{}, &Error{api.ErrorReply{Code: api.CodeBadRequest, Field: api.FieldEOF,
			Error: fmt.Sprintf("session %q: cell %d waits on the runtime's own console, where end of file would end the session; nothing was sent", s.Name, c.n),
			Hint:  hint}}
	}
	c.prompt = nil
	p := s.p
	s.mu.Unlock()
	secret = (secret || q.Password) && !eof
	// The echo goes first: what the cell prints once answered follows it.
	echo := text + "\n"
	switch {
	case eof && q.Shown:
		echo = ""
	case eof:
		echo = "\n"
	case secret:
		echo = hidden + "\n"
	}
	if !q.Shown {
		echo = q.Text + echo
	}
	kept := text
	if secret {
		kept = hidden
	}
	s.rec.Answer(c.seq, api.Answer{Prompt: q.Text, Text: kept, EOF: eof, Who: asker.Who, How: asker.How, At: time.Now()})
	// The holder writes the echo to the cell's log, its output's one
	// copy, and the daemon hears it as the cell's output.
	if err := p.AnswerShown(text, eof, echo); err != nil {
		s.mu.Lock()
		if c.prompt == nil && !c.finished() {
			c.prompt = q // still asked: the answer did not reach it
		}
		s.mu.Unlock()
		return api.CellResult{}, s.holderError("the answer could not be given to the cell", err, asker)
	}
	return s.collect(ctx, c, timeout, asker, prog, every)
}
