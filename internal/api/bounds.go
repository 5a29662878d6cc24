package api

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/bound"
)

// Bounds on what enters the daemon from outside besides a cell's output,
// value and error (OutputLimit, ValueLimit, ErrorLimit): questions and
// their answers, clients' labels, the lists a reply tells of other
// sessions. Each is held where it enters, and the cut is said.
const (
	// MaxAnswerBytes bounds one answer to a cell's question, as
	// MaxCodeBytes bounds its code: a longer one is refused, never cut.
	MaxAnswerBytes = MaxCodeBytes
	// PromptLimit bounds the text of a cell's question, in characters:
	// a longer prompt keeps its head and tail, the cut said between
	// them, and Prompt.Total says how long it was. Every worker cuts its
	// own prompts there, so that its event stays small; the daemon cuts
	// whatever a runtime sends (a kernel's input_request, a terminal's
	// prompt).
	PromptLimit = 2000
	// PromptBrief bounds a prompt where a listing shows it (sessions,
	// the note about other sessions, a refused exec), in characters.
	PromptBrief = 200
	// LabelLimit bounds a client's label (--label, $POLYREPL_LABEL, an
	// MCP client's name), in characters; How and Conn, which polyrepl's
	// own clients fill with a few letters, get TagLimit.
	LabelLimit = 100
	TagLimit   = 64
	// RefusalLimit bounds the text of a refusal and of its hint, in
	// characters: a refusal may quote what it refuses (a path, a name, a
	// runtime's words at its start), and a request may be megabytes.
	RefusalLimit = 4000
	// MaxOthers bounds the sessions a note about other sessions lists;
	// the rest are counted (Note.Count) and told in a later reply.
	MaxOthers = 10
	// NameLimit bounds one name of a session's namespace, in characters,
	// and MaxNames how many a session keeps; ListedNames how many a
	// listing of sessions carries (SessionInfo.NamesTotal counts all).
	NameLimit   = 200
	MaxNames    = 1000
	ListedNames = 100
)

// Clip holds s to limit characters: s itself if it fits, else its first
// limit characters and, in brackets, what was cut ("[label cut: 3,000,000
// characters in all; showing the first 100]"). what names the text.
// Invalid UTF-8 becomes U+FFFD, as every bounded text does.
//
// A text Clip already cut for the same limit and noun is returned as it
// is, so that a client that bounds a text where it enters (the MCP
// server, a client's name) and the daemon that bounds it again at its
// own door say the cut once, with the whole text's length.
func Clip(s string, limit int, what string) string {
	if len(s) <= limit && utf8.ValidString(s) {
		return s
	}
	if clipped(s, limit, what) {
		return s
	}
	v := strings.ToValidUTF8(s, "\uFFFD")
	n := utf8.RuneCountInString(v)
	if n <= limit {
		return v
	}
	head := v
	i := 0
	for k := range v {
		if i == limit {
			head = v[:k]
			break
		}
		i++
	}
	return head + "… " + bound.Cut{Total: n, Head: limit}.Describe(what)
}

// clipped reports whether s is exactly what Clip makes of a longer text
// for limit and what.
func clipped(s string, limit int, what string) bool {
	mark := "… [" + what + " cut: "
	i := strings.LastIndex(s, mark)
	if i < 0 || !utf8.ValidString(s) {
		return false
	}
	head, rest := s[:i], s[i+len(mark):]
	j := strings.Index(rest, " character")
	if j <= 0 {
		return false
	}
	total, err := strconv.Atoi(strings.ReplaceAll(rest[:j], ",", ""))
	h := utf8.RuneCountInString(head)
	return err == nil && h <= limit && total > h &&
		s == head+"… "+bound.Cut{Total: total, Head: h}.Describe(what)
}

// Bounded returns c with its label held to LabelLimit and its other
// strings to TagLimit, so that a client's label of any length costs every
// reply and record that names it at most that much.
func (c Client) Bounded() Client {
	c.Who = Clip(c.Who, LabelLimit, "label")
	c.How = Clip(c.How, TagLimit, "route")
	c.Conn = Clip(c.Conn, TagLimit, "connection")
	return c
}

// BoundPrompt holds a question's text to limit characters, keeping its
// head and tail with the cut said between them; total is how long the
// runtime said the whole was (0 if it did not cut it), and the result's
// total says how long it was when either cut it (0 when nothing was cut).
// A text that a worker cut already, at PromptLimit, fits: the marker it
// put in is not counted against the limit; cut again (to PromptBrief),
// its marker counts what the whole lost.
func BoundPrompt(text string, total, limit int) (string, int) {
	const room = 64 // the marker a worker put into a prompt it cut
	if t, cut := bound.HeadTail(text, limit+room); cut == nil {
		return t, total
	}
	t, cut := bound.HeadTail(text, limit)
	if total <= cut.Total {
		return t, cut.Total
	}
	lost := bound.Marker(cut.Total - cut.Head - cut.Tail)
	return strings.Replace(t, lost, bound.Marker(total-cut.Head-cut.Tail), 1), total
}
