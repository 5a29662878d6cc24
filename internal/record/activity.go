package record

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
)

// position is where one client is in a record: what it has been told (or
// sent itself), by seq, at which rev, and when it last asked.
type position struct {
	told map[int]int
	seen time.Time
	// low is the lowest seq told may still hold (0: not known, as after
	// a load): entries dropped since are forgotten by seq, not by a walk
	// of the whole map on every call.
	low int
}

// clientKey identifies a client across its calls: its label, how it
// comes, and its connection (one MCP server) if it has one.
func clientKey(c api.Client) string { return c.How + "\x00" + c.Who + "\x00" + c.Conn }

// own reports whether e came from client c.
func own(e *api.Entry, c api.Client) bool {
	return e.Who == c.Who && e.How == c.How && e.Conn == c.Conn && (e.Who != "" || e.How != "")
}

// bookkeeping reports whether e is polyrepl's own bookkeeping, kept in
// the record for people (log shows it) and never told to a client as
// activity: a new daemon taking the session up is nobody's doing in it.
func bookkeeping(e *api.Entry) bool {
	return e.Kind == api.EntryNote && e.Note != nil && e.Note.Kind == api.NoteAdopted
}

// joinedLocked is the index of c's last own entry among those read from
// the record's file, or -1. A client with an entry there (it made the
// session or sent cells to it) joined before this record was opened:
// if its position is not known (a daemon was killed before saving it),
// it was lost, and this is not the client's first contact.
func (r *Record) joinedLocked(c api.Client) int {
	for i := len(r.entries) - 1; i >= 0; i-- {
		if e := r.entries[i]; e.Seq < r.loadedBelow && own(e, c) {
			return i
		}
	}
	return -1
}

// Activity tells client c what happened in the record since it last
// heard: other clients' entries and output printed while idle, new ones
// and ones told before that changed since, newest first, within the
// bounds of one reply. Its own entries and polyrepl's bookkeeping are
// never told. It returns nil if there is nothing to tell.
func (r *Record) Activity(c api.Client) *api.Activity {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := clientKey(c)
	p := r.pos[key]
	a := &api.Activity{Session: r.name}
	r.positionsChangedLocked()
	if last := -1; p == nil {
		last = r.joinedLocked(c)
		if last >= 0 {
			// A client that joined before, whose position was lost: it
			// heard what came up to its last entry (that entry's reply
			// told it), and what came after is news, never what came
			// "before it joined".
			p = &position{told: map[int]int{}, seen: time.Now()}
			r.pos[key] = p
			for _, e := range r.entries[:last+1] {
				p.told[e.Seq] = e.Rev
			}
		}
	}
	if p == nil {
		// First contact: the client is told what is there, the latest
		// entries within tighter bounds than news (it did not ask), and
		// how many came before them.
		p = &position{told: map[int]int{}, seen: time.Now()}
		r.pos[key] = p
		var before []*api.Entry
		for _, e := range r.entries {
			r.freshLocked(e)
			p.told[e.Seq] = e.Rev
			if !own(e, c) && !bookkeeping(e) {
				before = append(before, e)
			}
		}
		if len(before) == 0 {
			return nil
		}
		a.First = true
		a.Entries = firstBrief(before[max(0, len(before)-api.FirstEntries):])
		a.Earlier = len(before) - len(a.Entries)
		return a
	}
	p.seen = time.Now()
	var news []*api.Entry
	var updated []int
	for _, e := range r.entries {
		// Most entries are as told: a lookup, no write. An entry's Rev
		// moves with every change, its text included (freshLocked only
		// makes that text from its clip), so only news is made fresh.
		rev, seen := p.told[e.Seq]
		if seen && rev == e.Rev {
			continue
		}
		p.told[e.Seq] = e.Rev
		switch {
		case own(e, c), bookkeeping(e):
		case !seen:
			r.freshLocked(e)
			news = append(news, e)
		case rev < e.Rev:
			r.freshLocked(e)
			news = append(news, e)
			updated = append(updated, e.Seq)
		}
	}
	if len(r.entries) > 0 {
		p.forgetBelow(r.entries[0].Seq)
	}
	if len(news) == 0 {
		return nil
	}
	budget := api.ActivityChars
	for i := len(news) - 1; i >= 0; i-- {
		e := brief(*news[i])
		size := len([]rune(e.Code)) + len([]rune(e.Output)) + len([]rune(e.Display)) + len([]rune(e.Text)) + 80
		if len(a.Entries) >= api.ActivityEntries || size > budget {
			a.More = append(a.More, e.ID)
			continue
		}
		budget -= size
		a.Entries = append(a.Entries, e)
	}
	for _, seq := range updated {
		for _, e := range a.Entries {
			if e.Seq == seq {
				a.Updated = append(a.Updated, seq)
			}
		}
	}
	return a
}

// forgetBelow drops what p was told of entries below seq, which the
// record no longer keeps.
func (p *position) forgetBelow(seq int) {
	if p.low == 0 || seq-p.low > len(p.told) {
		for s := range p.told { // not known, or fewer told than dropped: walk
			if s < seq {
				delete(p.told, s)
			}
		}
	} else {
		for s := p.low; s < seq; s++ {
			delete(p.told, s)
		}
	}
	p.low = max(p.low, seq)
}

// brief cuts an entry for telling: code and output to their first and
// last lines, each line to a readable width.
func brief(e api.Entry) api.Entry {
	e.Code = lines(e.Code, 3, 2)
	e.Output = lines(e.Output, 3, 3)
	e.Display = lines(e.Display, 2, 1)
	if e.Error != nil {
		er := *e.Error
		er.Traceback, er.TracebackCut = "", nil
		er.Message, er.MessageCut = lines(er.Message, 2, 1), nil
		e.Error = &er
	}
	e.CodeCut, e.OutputCut = nil, nil
	e.Answers, e.AnswersCut = nil, answersLeft(e)
	return e
}

// answersLeft says an entry's answers are not told: how many there
// were, and where they all are if a file holds them (history shows the
// entry's).
func answersLeft(e api.Entry) *api.AnswersCut {
	if len(e.Answers) == 0 {
		return nil
	}
	c := &api.AnswersCut{Total: len(e.Answers)}
	if e.AnswersCut != nil {
		c.Total, c.File = e.AnswersCut.Total, e.AnswersCut.File
	}
	return c
}

// lineWidth bounds each line told.
const lineWidth = 200

// lines keeps the first head and last tail lines of s, saying how many
// were left out between.
func lines(s string, head, tail int) string {
	if s == "" {
		return ""
	}
	trail := strings.HasSuffix(s, "\n")
	ls := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(ls) > head+tail+1 {
		cut := len(ls) - head - tail
		ls = append(append(ls[:head:head], fmt.Sprintf("[… %d more lines …]", cut)), ls[len(ls)-tail:]...)
	}
	for i, l := range ls {
		if r := []rune(l); len(r) > lineWidth {
			ls[i] = string(r[:lineWidth-1]) + "…"
		}
	}
	out := strings.Join(ls, "\n")
	if trail {
		out += "\n"
	}
	return out
}

// firstBrief cuts the entries told at first contact, newest first, to
// api.FirstChars in all: each gets a share of the room (what a short one
// leaves goes to the others), its code and output cut to their head and
// tail with the cut said.
func firstBrief(es []*api.Entry) []api.Entry {
	sizes := make([]int, len(es))
	for i, e := range es {
		sizes[i] = size(*e)
	}
	room := share(sizes, max(api.FirstChars-entryOverhead*len(es), 0))
	out := make([]api.Entry, 0, len(es))
	for i := len(es) - 1; i >= 0; i-- {
		out = append(out, fit(*es[i], room[i]))
	}
	return out
}

// entryOverhead is what an entry's header and labels take when told.
const entryOverhead = 80

// size is the characters an entry takes when told.
func size(e api.Entry) int {
	n := utf8.RuneCountInString(e.Code) + utf8.RuneCountInString(e.Output) + utf8.RuneCountInString(e.Display) + utf8.RuneCountInString(e.Text)
	if e.Error != nil {
		n += utf8.RuneCountInString(e.Error.Type) + utf8.RuneCountInString(e.Error.Message)
	}
	if e.Note != nil {
		n += 200 // its words, written at the edges
	}
	return n
}

// share divides room between texts of sizes: none gets more than it
// needs, and what one does not need goes to the others, evenly.
func share(sizes []int, room int) []int {
	got := make([]int, len(sizes))
	order := make([]int, len(sizes))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return sizes[order[a]] < sizes[order[b]] })
	for k, i := range order {
		each := room / (len(order) - k)
		got[i] = min(sizes[i], each)
		room -= got[i]
	}
	return got
}

// fit cuts an entry to room characters: the value and the error to their
// first and last lines, the code and the output to their head and tail.
func fit(e api.Entry, room int) api.Entry {
	e.Answers, e.AnswersCut = nil, answersLeft(e)
	e.Display = lines(e.Display, 2, 1)
	if e.Error != nil {
		er := *e.Error
		er.Traceback, er.TracebackCut = "", nil
		er.Message, er.MessageCut = lines(er.Message, 2, 1), nil
		e.Error = &er
	}
	rest := room - utf8.RuneCountInString(e.Display) - utf8.RuneCountInString(e.Text)
	if e.Error != nil {
		rest -= utf8.RuneCountInString(e.Error.Message)
	}
	rest = max(rest, minTold)
	code, output := utf8.RuneCountInString(e.Code), utf8.RuneCountInString(e.Output)
	codeRoom := min(code, max(rest/3, rest-output))
	e.Code, e.CodeCut = cutTo(e.Code, e.CodeCut, codeRoom)
	e.Output, e.OutputCut = cutTo(e.Output, e.OutputCut, max(rest-codeRoom, minTold))
	return e
}

// firstLinesKept bounds the lines told at each end of a text cut at
// first contact: a few hundred short lines would bury the rest.
const firstLinesKept = 10

// firstLines is the first n lines of s, each with its newline.
func firstLines(s string, n int) string {
	i := 0
	for k := 0; k < n; k++ {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return s
		}
		i += j + 1
	}
	return s[:i]
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	i := len(strings.TrimSuffix(s, "\n"))
	for k := 0; k < n; k++ {
		j := strings.LastIndexByte(s[:i], '\n')
		if j < 0 {
			return s
		}
		i = j
	}
	return s[i+1:]
}

// minTold is the least of a text told: a line or two.
const minTold = 120

// cutTo bounds s, a text the record may have cut already (had), to limit
// characters; the cut counts what the whole text had.
func cutTo(s string, had *bound.Cut, limit int) (string, *bound.Cut) {
	total := utf8.RuneCountInString(s)
	if total <= limit {
		return s, had
	}
	if had != nil {
		total = had.Total
	}
	r := []rune(s)
	h := limit / 2
	t, cut := bound.LineCut(string(r[:h]), string(r[len(r)-(limit-h):]), total)
	if head, tail, ok := strings.Cut(t, "\n[… "); ok {
		_, tail, _ = strings.Cut(tail, " cut …]\n")
		if !strings.HasSuffix(head, "\n") && strings.Contains(head, "\n") {
			head += "\n"
		}
		t, cut = bound.JoinCut(firstLines(head, firstLinesKept), lastLines(tail, firstLinesKept), total)
	}
	if had != nil {
		cut.File = had.File
	}
	return t, cut
}
