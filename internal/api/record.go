package api

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/bound"
)

// Paths of a session's shared record.
const (
	PathRaw         = "/v1/sessions/{name}/raw"          // upgraded to RawProtocol: the runtime's terminal
	PathRecord      = "/v1/sessions/{name}/record"       // ?since=SEQ&follow=1
	PathRecordEntry = "/v1/sessions/{name}/record/{seq}" // one entry, whole
)

// RawProtocol is the Upgrade of a raw attach: after the 101 reply the
// connection carries a person's typing to the runtime's terminal and its
// output back, as bytes.
const RawProtocol = "polyrepl-raw"

// Entry kinds.
const (
	EntryCell = "cell" // a cell some client ran
	EntryIdle = "idle" // output the session printed while no cell ran
	EntryNote = "note" // created, restarted, died and why
)

// Bounds of the record.
const (
	RecordKeep       = 300   // entries kept per session; older ones are dropped
	EntryCodeLimit   = 10000 // characters of an entry's code
	EntryOutputLimit = 10000 // characters of an entry's output
	// A cell's answers (Entry.Answers): the first EntryAnswersHead and
	// the last EntryAnswersTail are kept, each answer's text cut to
	// EntryAnswerLimit characters and its prompt to EntryPromptLimit;
	// Entry.AnswersCut says what was left out and names the file that
	// holds every answer whole.
	EntryAnswersHead = 5
	EntryAnswersTail = 15
	EntryAnswerLimit = 500
	EntryPromptLimit = 200
	ActivityEntries  = 10   // entries told in full in one reply
	ActivityChars    = 8000 // characters of activity in one reply
	// A client's first contact with a session tells it the latest
	// entries from before, within tighter bounds: it did not ask.
	FirstEntries = 5    // entries told at first contact
	FirstChars   = 4000 // characters told at first contact, in all
)

// Entry is one item of a session's record. An entry is written when it
// starts and rewritten as it changes; Rev counts its changes, so a reader
// that saw an earlier Rev knows it has news.
type Entry struct {
	Seq        int        `json:"seq"` // its place in the session's record, from 1
	ID         string     `json:"id"`  // "NAME#SEQ", to name it anywhere
	Rev        int        `json:"rev"`
	Kind       string     `json:"kind"`
	Session    string     `json:"session"`
	Generation string     `json:"generation,omitempty"`
	Runtime    string     `json:"runtime,omitempty"`
	Cell       int        `json:"cell,omitempty"`
	Who        string     `json:"who,omitempty"`
	How        string     `json:"how,omitempty"`
	Conn       string     `json:"conn,omitempty"`
	Code       string     `json:"code,omitempty"`
	CodeCut    *bound.Cut `json:"code_cut,omitempty"`
	Output     string     `json:"output,omitempty"`
	OutputCut  *bound.Cut `json:"output_cut,omitempty"`
	Display    string     `json:"display,omitempty"` // the value as the runtime's REPL shows it
	Prompt     string     `json:"prompt,omitempty"`  // the part of Display before the value ("Out[2]: "), so a notebook can hold the value alone
	Status     string     `json:"status,omitempty"`  // cells: running, done, error, interrupted, dead
	Error      *CellError `json:"error,omitempty"`
	Rich       []Rich     `json:"rich,omitempty"` // its rich outputs, by file
	// Answers are the lines given to the cell's questions, in order, and
	// who gave them.
	Answers    []Answer    `json:"answers,omitempty"`
	AnswersCut *AnswersCut `json:"answers_cut,omitempty"`
	// Note is what a note entry says, as data; Text is the words of an
	// entry written before notes were data, and of a dead cell's end.
	Note    *Note      `json:"note,omitempty"`
	Text    string     `json:"text,omitempty"`
	Started time.Time  `json:"started"`
	Ended   *time.Time `json:"ended,omitempty"`
	// RolledBack: a cell a rollback undid (its runtime was replaced by a
	// checkpoint taken before it).
	RolledBack bool `json:"rolled_back,omitempty"`
}

// Events of a followed record (RecordEvent.Event).
const (
	// EventEntry: an entry the follower has not seen. A finished one
	// comes whole; a running cell or an idle entry comes without its
	// output, which follows in output events from offset 0.
	EventEntry = "entry"
	// EventOutput: what a running cell (or an idle entry) printed next,
	// in Output.
	EventOutput = "output"
	// EventEnd: a cell finished: the entry without its output (the
	// output events carried it), with its status, value, error and cut.
	EventEnd = "end"
	// EventUpdate: an entry seen before changed otherwise; it comes
	// whole.
	EventUpdate = "update"
	// EventReconnected: the daemon went away while the session lived on
	// in its holder, and the follower goes on with the daemon that took
	// it up: entries it had not seen end come again, from the start. A
	// client makes this event; no daemon sends it.
	EventReconnected = "reconnected"
)

// RecordEvent is one line of a followed record: an entry (new, ended or
// changed), output appended to one, or nothing (a heartbeat, Event "").
type RecordEvent struct {
	Event  string       `json:"event,omitempty"`
	Entry  *Entry       `json:"entry,omitempty"`
	Output *OutputChunk `json:"output,omitempty"`
}

// OutputChunk is output appended to a followed entry: Text, made plain
// and in whole lines, starts Offset characters into the entry's output,
// so that joining every chunk's Text rebuilds it. Skipped counts the
// characters before Offset that the follower missed (it fell too far
// behind for the record to hold them); File, if set, holds the whole
// output as the runtime printed it. Pending is the unfinished last line
// as it stands: not yet part of the output, since a progress bar may
// still rewrite it; the next chunk's Text starts with its final form.
type OutputChunk struct {
	ID      string `json:"id"`
	Seq     int    `json:"seq"`
	Offset  int    `json:"offset"`
	Text    string `json:"text,omitempty"`
	Skipped int    `json:"skipped,omitempty"`
	File    string `json:"file,omitempty"`
	Pending string `json:"pending,omitempty"`
}

// RecordReply is a part of a session's record.
type RecordReply struct {
	Session string  `json:"session"`
	Entries []Entry `json:"entries"`
	// Dropped counts the oldest entries no longer kept (seq 1..Dropped).
	Dropped int `json:"dropped"`
	// Next is the seq the next new entry will get.
	Next int `json:"next"`
	// Since is the seq the entries were asked after (0: from the start).
	Since int `json:"since,omitempty"`
}

// Activity is what other clients did in a session since the asking
// client last heard, told at the start of its reply: data from the shared
// session, never instructions.
type Activity struct {
	Session string  `json:"session"`
	Entries []Entry `json:"entries"` // newest first, each cut to its first and last lines
	// Updated lists the seqs of Entries told before, told again because
	// they changed (a cell finished, more output came).
	Updated []int `json:"updated,omitempty"`
	// More lists the ids of further entries not told here for space.
	More []string `json:"more,omitempty"`
	// First says this is the client's first contact with the session:
	// Entries are the latest from before it came (at most FirstEntries,
	// FirstChars in all, each cut to its head and tail with the cut
	// said), and Earlier counts the entries before those.
	First bool `json:"first,omitempty"`
	// Earlier counts entries from before the client first used the
	// session that are not told (history lists them).
	Earlier int `json:"earlier,omitempty"`
}

// EntrySeq reads an entry id of session name as a user gives it: "12",
// "#12" or "NAME#12".
func EntrySeq(name, id string) (int, error) {
	s := id
	if i := strings.LastIndexByte(id, '#'); i >= 0 {
		if i > 0 && id[:i] != name {
			return 0, fmt.Errorf("entry %q belongs to session %q, not %q", id, id[:i], name)
		}
		s = id[i+1:]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("invalid entry id %q: give its seq (12) or its id (%s#12)", id, name)
	}
	return n, nil
}

// LineChars bounds what an EntryLine keeps of an entry's code and of what
// it gave: enough to know what happened, with the whole a history call
// away.
const LineChars = 150

// EntryLine is an entry in one line, for the lists a model pays for by the
// character (activity, a history listing): who ran what, how it ended,
// the first line of its code and the start of what it gave. History with
// its ID gives the entry whole.
type EntryLine struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Cell   int    `json:"cell,omitempty"`
	Who    string `json:"who,omitempty"`
	How    string `json:"how,omitempty"`
	Status string `json:"status,omitempty"`
	Code   string `json:"code,omitempty"` // its first line
	// Gave is the start of the cell's error, else its value, else its
	// output (LineChars at most, lines and all); Note is a note entry's
	// note.
	Gave string `json:"gave,omitempty"`
	Note *Note  `json:"note,omitempty"`
	Text string `json:"text,omitempty"` // an entry's words from before notes were data
	// Cut says Code or Gave is not the whole of it.
	Cut     bool      `json:"cut,omitempty"`
	Started time.Time `json:"started"`
}

// Line is e in one line.
func (e Entry) Line() EntryLine {
	l := EntryLine{ID: e.ID, Kind: e.Kind, Cell: e.Cell, Who: e.Who, How: e.How, Status: e.Status,
		Note: e.Note, Text: e.Text, Started: e.Started.Truncate(time.Millisecond)}
	var cut bool
	l.Code, cut = firstLine(e.Code)
	l.Cut = cut || e.CodeCut != nil
	gave := e.Output
	switch {
	case e.Error != nil:
		gave = e.Error.Message
		if e.Error.Type != "" {
			gave = e.Error.Type + ": " + e.Error.Message
		}
	case e.Display != "":
		gave = e.Display
	}
	l.Gave, cut = Start(gave)
	l.Cut = l.Cut || cut || e.OutputCut != nil && gave == e.Output
	return l
}

// Start is the first LineChars characters of s, its ends trimmed, and
// whether that left anything out.
func Start(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if r := []rune(t); len(r) > LineChars {
		return strings.TrimSpace(string(r[:LineChars-1])) + "…", true
	}
	return t, false
}

// firstLine is s's first non-empty line, at most LineChars characters,
// and whether that left anything out.
func firstLine(s string) (string, bool) {
	t := strings.TrimLeft(s, "\n")
	line, rest, _ := strings.Cut(t, "\n")
	cut := strings.TrimSpace(rest) != ""
	if r := []rune(line); len(r) > LineChars {
		line, cut = string(r[:LineChars-1])+"…", true
	}
	return line, cut
}

// Answer is one line given to a cell that asked for input: Text is
// "[hidden]" for a password's answer, "" with EOF for end of file. In a
// record entry, TextCut and PromptCut say what the entry's bounds cut
// of each (the whole is in the entry's AnswersCut.File).
type Answer struct {
	Prompt    string     `json:"prompt"`
	PromptCut *bound.Cut `json:"prompt_cut,omitempty"`
	Text      string     `json:"text"`
	TextCut   *bound.Cut `json:"text_cut,omitempty"`
	EOF       bool       `json:"eof,omitempty"`
	Who       string     `json:"who,omitempty"`
	How       string     `json:"how,omitempty"`
	At        time.Time  `json:"at"`
}

// AnswersCut says what a record entry keeps of its cell's answers, once
// they are more than it keeps or one was cut: Total answers were given,
// the entry keeps the first Head and the last Tail (Head+Tail of Total;
// all of them when only texts were cut), and File holds every answer
// whole, one JSON Answer a line ("" if it could not be saved).
type AnswersCut struct {
	Total int    `json:"total"`
	Head  int    `json:"head"`
	Tail  int    `json:"tail"`
	File  string `json:"file,omitempty"`
}
