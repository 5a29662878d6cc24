package mcp

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
)

// Some clients pass a model both a tool result's text and its structured
// content, so whatever the two both carry is paid twice (issue 40: a
// trivial answer was ~80 characters of text and ~240 of structured
// content, its output, value and traceback in both; now ~45 of
// structured content). The text is what
// the model reads: output, value, error, notes and other clients'
// activity, in words. The structured content keeps only the facts a
// program acts on that the text lacks or says loosely: the session, the
// cell and its status (not its time: a client times its call), the
// generation when it is news to the
// connection, the error's type, where the whole of a cut text and each
// figure are (files), each note's kind with its next steps, and the ids
// of the entries the text told. No output, value, display, traceback or
// code is in it: the history tool with an id gives an entry whole.

// cellFacts is a cell result (exec, wait, input, interrupt) as
// structured content.
type cellFacts struct {
	Session    string      `json:"session"`
	Generation string      `json:"generation,omitempty"` // when the connection had not been given it
	Cell       int         `json:"cell"`
	Status     string      `json:"status"`
	Error      *errorFacts `json:"error,omitempty"`
	OutputCut  *bound.Cut  `json:"output_cut,omitempty"`
	ValueCut   *bound.Cut  `json:"value_cut,omitempty"`
	Rich       []richFacts `json:"rich,omitempty"`
	RichMore   int         `json:"rich_more,omitempty"`
	Prompt     *promptFact `json:"prompt,omitempty"`
	Notes      []noteFacts `json:"notes,omitempty"`
	// Activity lists the ids of the other clients' entries the text
	// told (newest first), and of those it left out for space.
	Activity *activityFacts `json:"activity,omitempty"`
}

// errorFacts is a cell's error without its words: its type, and where
// the whole message and traceback are when they were cut.
type errorFacts struct {
	Type         string     `json:"type,omitempty"`
	MessageCut   *bound.Cut `json:"message_cut,omitempty"`
	TracebackCut *bound.Cut `json:"traceback_cut,omitempty"`
}

// richFacts is a rich output by its file: its plain form, if any, is in
// the text.
type richFacts struct {
	MIME   string `json:"mime"`
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
	File   string `json:"file"`
}

// promptFact is what a program answering a question must know that the
// prompt's words do not say; nil when neither holds.
type promptFact struct {
	Password bool `json:"password,omitempty"`
	NoEOF    bool `json:"no_eof,omitempty"`
}

// noteFacts is a note as its kind and next steps; its words are in the
// text. Session and Cell are set only when they are not the reply's.
type noteFacts struct {
	Kind    string       `json:"kind"`
	Session string       `json:"session,omitempty"`
	Cell    int          `json:"cell,omitempty"`
	File    string       `json:"file,omitempty"` // a file the note points to (unread output, a transcript)
	Next    []api.Action `json:"next,omitempty"`
}

// activityFacts is which entries of other clients a reply told: their
// ids, the seqs of those told before and told again because they
// changed, and the ids of those left out for space.
type activityFacts struct {
	Told    []string `json:"told"`
	Updated []int    `json:"updated,omitempty"`
	More    []string `json:"more,omitempty"`
}

// cellOf is r as structured content; gen is the generation to give
// ("" when the connection has it).
func cellOf(r api.CellResult, gen string) cellFacts {
	out := cellFacts{Session: r.Session, Generation: gen, Cell: r.Cell, Status: r.Status,
		OutputCut: r.OutputCut, ValueCut: r.ValueCut, Rich: richOf(r.Rich), RichMore: r.RichMore,
		Error: errorOf(r.Error), Notes: noteFactsOf(r.Notes, r.Session, r.Cell)}
	if p := r.Prompt; p != nil && (p.Password || p.NoEOF) {
		out.Prompt = &promptFact{Password: p.Password, NoEOF: p.NoEOF}
	}
	if a := r.Activity; a != nil && (len(a.Entries) > 0 || len(a.More) > 0) {
		af := &activityFacts{Told: []string{}, Updated: a.Updated, More: a.More}
		for _, e := range a.Entries {
			af.Told = append(af.Told, e.ID)
		}
		out.Activity = af
	}
	return out
}

func errorOf(e *api.CellError) *errorFacts {
	if e == nil {
		return nil
	}
	return &errorFacts{Type: e.Type, MessageCut: e.MessageCut, TracebackCut: e.TracebackCut}
}

func richOf(rich []api.Rich) []richFacts {
	var out []richFacts
	for _, x := range rich {
		out = append(out, richFacts{MIME: x.MIME, Width: x.Width, Height: x.Height, File: x.File})
	}
	return out
}

// noteFactsOf keeps of each note its kind, what it is about when that is
// not the reply's own session and cell, the file it names and its next
// steps.
func noteFactsOf(notes []api.Note, session string, cell int) []noteFacts {
	var out []noteFacts
	for _, n := range notes {
		f := noteFacts{Kind: n.Kind, Next: n.Next, File: n.File}
		if n.Session != session {
			f.Session = n.Session
		}
		if n.Cell != cell {
			f.Cell = n.Cell
		}
		if f.File == "" {
			f.File = n.Transcript
		}
		out = append(out, f)
	}
	return out
}

// recordFacts is a history listing as structured content: where the
// record stands (the seq after its last entry, for since; the oldest
// entries no longer kept); the entries are the text's lines.
type recordFacts struct {
	Session string `json:"session"`
	Next    int    `json:"next"`
	Dropped int    `json:"dropped,omitempty"`
	Since   int    `json:"since,omitempty"`
}

// entryFacts is one entry asked for whole by id: the text shows its
// code, output, value and error; here are its identity and files.
type entryFacts struct {
	Session    string      `json:"session"`
	ID         string      `json:"id"`
	Kind       string      `json:"kind"`
	Generation string      `json:"generation,omitempty"`
	Cell       int         `json:"cell,omitempty"`
	Status     string      `json:"status,omitempty"`
	Error      *errorFacts `json:"error,omitempty"`
	CodeCut    *bound.Cut  `json:"code_cut,omitempty"`
	OutputCut  *bound.Cut  `json:"output_cut,omitempty"`
	Rich       []richFacts `json:"rich,omitempty"`
	Note       *noteFacts  `json:"note,omitempty"`
}

func entryOf(session string, e api.Entry) entryFacts {
	out := entryFacts{Session: session, ID: e.ID, Kind: e.Kind, Generation: e.Generation, Cell: e.Cell, Status: e.Status,
		Error: errorOf(e.Error), CodeCut: e.CodeCut, OutputCut: e.OutputCut, Rich: richOf(e.Rich)}
	if e.Note != nil {
		n := noteFactsOf([]api.Note{*e.Note}, session, e.Cell)[0]
		out.Note = &n
	}
	return out
}

// sessionFacts is a session as a listing's structured content: its
// name, its state and, when news to the connection, its generation; the
// rest is in the text.
type sessionFacts struct {
	Name       string `json:"name"`
	Generation string `json:"generation,omitempty"`
	State      string `json:"state"`
}

type sessionsFacts struct {
	Sessions []sessionFacts `json:"sessions"`
}

// lifeFacts is what kill, restart and fork did, as structured content:
// the session, its generation when news (restart's and fork's new one;
// kill's ended one), its state, the transcript of a life that ended, and
// the notes' kinds.
type lifeFacts struct {
	Session    string      `json:"session"`
	Generation string      `json:"generation,omitempty"`
	State      string      `json:"state"`
	Transcript string      `json:"transcript,omitempty"`
	Notes      []noteFacts `json:"notes,omitempty"`
}

func lifeOf(session string, info api.SessionInfo, notes []api.Note, gen string) lifeFacts {
	out := lifeFacts{Session: session, Generation: gen, State: info.State, Notes: noteFactsOf(notes, session, 0)}
	if info.State == api.StateDead {
		out.Transcript = info.Transcript
	}
	return out
}

// checkpointFacts is what checkpoint and rollback did, as structured
// content: the checkpoint's label and the cell it was taken after (the
// next cell after a rollback is one more), and the notes' kinds.
type checkpointFacts struct {
	Session string      `json:"session"`
	Label   string      `json:"label"`
	Cell    int         `json:"cell"`
	Notes   []noteFacts `json:"notes,omitempty"`
}

// varsFacts is a vars reply as structured content: how the look was
// taken; the names are the text's lines.
type varsFacts struct {
	Session    string `json:"session"`
	Generation string `json:"generation,omitempty"`
	Look       string `json:"look"`
	Cell       int    `json:"cell,omitempty"`
	Total      int    `json:"total"`
}

// runtimeFacts is one runtime asked for by name: whether a session of
// it can start, and the executable it would.
type runtimeFacts struct {
	Name  string `json:"name"`
	Found bool   `json:"found"`
	Forks bool   `json:"forks,omitempty"`
}

// structuredOf is a tool's result as structured content (see above);
// news gives a session's generation when the connection was not given
// it before, and "" when it was.
func structuredOf(v any, news func(session, gen string) string) any {
	switch v := v.(type) {
	case api.CellResult:
		return cellOf(v, news(v.Session, v.Generation))
	case api.RecordReply:
		return recordFacts{Session: v.Session, Next: v.Next, Dropped: v.Dropped, Since: v.Since}
	case wholeEntry:
		if len(v.Entries) == 1 {
			return entryOf(v.Session, v.Entries[0])
		}
		return recordFacts{Session: v.Session, Next: v.Next, Dropped: v.Dropped}
	case api.SessionsReply:
		out := sessionsFacts{Sessions: []sessionFacts{}}
		for _, si := range v.Sessions {
			out.Sessions = append(out.Sessions, sessionFacts{Name: si.Name, Generation: news(si.Name, si.Generation), State: si.State})
		}
		return out
	case api.KillReply:
		return lifeOf(v.Session, v.Info, v.Notes, news(v.Session, v.Info.Generation))
	case api.ForkReply:
		return lifeOf(v.Session, v.Info, v.Notes, news(v.Session, v.Info.Generation))
	case api.CheckpointReply:
		return checkpointFacts{Session: v.Session, Label: v.Checkpoint.Label, Cell: v.Checkpoint.Cell, Notes: noteFactsOf(v.Notes, v.Session, 0)}
	case api.RollbackReply:
		return checkpointFacts{Session: v.Session, Label: v.Checkpoint.Label, Cell: v.Checkpoint.Cell, Notes: noteFactsOf(v.Notes, v.Session, 0)}
	case api.VarsReply:
		return varsFacts{Session: v.Session, Generation: news(v.Session, v.Generation), Look: v.Look, Cell: v.Cell, Total: v.Total}
	case api.RuntimeInfo:
		return runtimeFacts{Name: v.Name, Found: v.Found, Forks: v.Forks}
	}
	return v
}

// toldLimit bounds the sessions whose generation a connection is
// remembered to have been given; past it the memory starts again, and a
// generation is given once more.
const toldLimit = 4096

// generationNews is gen if this connection was not given it for session
// before (then it is remembered), else "". A call without a connection
// is always given it.
func (s *Server) generationNews(req *mcp.CallToolRequest, session, gen string) string {
	if gen == "" || req == nil || req.Session == nil {
		return gen
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.told == nil {
		s.told = map[*mcp.ServerSession]map[string]string{}
	}
	told := s.told[req.Session]
	if told == nil {
		// Forgotten when the connection ends: a server that outlives
		// its connections keeps nothing of them.
		go func(ss *mcp.ServerSession) {
			ss.Wait()
			s.mu.Lock()
			delete(s.told, ss)
			s.mu.Unlock()
		}(req.Session)
	}
	if _, ok := told[session]; told == nil || (!ok && len(told) >= toldLimit) {
		told = map[string]string{}
		s.told[req.Session] = told
	}
	if told[session] == gen {
		return ""
	}
	told[session] = gen
	return gen
}
