package record

import (
	"fmt"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// position is where one client is in a record: what it has been told (or
// sent itself), by seq, at which rev, and when it last asked.
type position struct {
	told map[int]int
	seen time.Time
}

// clientKey identifies a client across its calls: its label, how it
// comes, and its connection (one MCP server) if it has one.
func clientKey(c api.Client) string { return c.How + "\x00" + c.Who + "\x00" + c.Conn }

// own reports whether e came from client c.
func own(e *api.Entry, c api.Client) bool {
	return e.Who == c.Who && e.How == c.How && e.Conn == c.Conn && (e.Who != "" || e.How != "")
}

// Activity tells client c what happened in the record since it last
// heard: other clients' entries and output printed while idle, new ones
// and ones told before that changed since, newest first, within the
// bounds of one reply. Its own entries are never told. It returns nil if
// there is nothing to tell.
func (r *Record) Activity(c api.Client) *api.Activity {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := clientKey(c)
	p := r.pos[key]
	a := &api.Activity{Session: r.name}
	r.positionsChangedLocked()
	if p == nil {
		// First contact: what came before is history, not news.
		p = &position{told: map[int]int{}, seen: time.Now()}
		r.pos[key] = p
		for _, e := range r.entries {
			p.told[e.Seq] = e.Rev
			if !own(e, c) && e.Kind != api.EntryNote {
				a.Earlier++
			}
		}
		if a.Earlier == 0 {
			return nil
		}
		return a
	}
	p.seen = time.Now()
	var news []*api.Entry
	var updated []int
	for _, e := range r.entries {
		r.freshLocked(e)
		rev, seen := p.told[e.Seq]
		p.told[e.Seq] = e.Rev
		switch {
		case own(e, c):
		case !seen:
			news = append(news, e)
		case rev < e.Rev:
			news = append(news, e)
			updated = append(updated, e.Seq)
		}
	}
	if len(r.entries) > 0 {
		for seq := range p.told {
			if seq < r.entries[0].Seq {
				delete(p.told, seq)
			}
		}
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

// brief cuts an entry for telling: code and output to their first and
// last lines, each line to a readable width.
func brief(e api.Entry) api.Entry {
	e.Code = lines(e.Code, 3, 2)
	e.Output = lines(e.Output, 3, 3)
	e.Display = lines(e.Display, 2, 1)
	if e.Error != nil {
		er := *e.Error
		er.Traceback = ""
		er.Message = lines(er.Message, 2, 1)
		e.Error = &er
	}
	e.CodeCut, e.OutputCut = nil, nil
	return e
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
