package session

import (
	"sync"

	"github.com/polyrepl/polyrepl/internal/api"
)

// told remembers which clients have heard of a session's last death, so
// that each death is told once to each client: in the reply of the cell
// it ended, in a refusal, in a note about other sessions or when the
// name starts afresh — whichever reaches the client first — and not
// again as the record's activity.
//
// Only the last death of each name is kept: an earlier life's loss is
// cleared when the name starts afresh, so nothing is left to tell of it.
// Its lock is a leaf: it is taken under Session.mu and never holds
// another.
type told struct {
	mu     sync.Mutex
	deaths map[string]*toldDeath // by session name
}

type toldDeath struct {
	generation string
	clients    map[string]bool // by clientKey
}

// clientKey tells clients apart as the record does: by label, route and
// connection.
func clientKey(c api.Client) string { return c.How + "\x00" + c.Who + "\x00" + c.Conn }

// first marks the death of generation gen of name as told to c, and says
// whether this is the first time.
func (t *told) first(name, gen string, c api.Client) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.deaths == nil {
		t.deaths = map[string]*toldDeath{}
	}
	d := t.deaths[name]
	if d == nil || d.generation != gen {
		d = &toldDeath{generation: gen, clients: map[string]bool{}}
		t.deaths[name] = d
	}
	k := clientKey(c)
	if d.clients[k] {
		return false
	}
	d.clients[k] = true
	return true
}

// has says whether c has heard of the death of generation gen of name.
func (t *told) has(name, gen string, c api.Client) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.deaths[name]
	return d != nil && d.generation == gen && d.clients[clientKey(c)]
}

// othersTold remembers, for each client, what it was last told of each
// other session that needs attention (a cell running, a result nobody
// collected), so that a note mentions it when that begins or changes —
// a cell starts, ends uncollected — and not on every call while it lasts.
type othersTold struct {
	mu   sync.Mutex
	told map[string]map[string]string // clientKey → session → what was told
}

// news reports whether what (a key of the session's state) is news to c
// about session name, and remembers it told.
func (o *othersTold) news(c api.Client, name, what string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.told == nil {
		o.told = map[string]map[string]string{}
	}
	k := clientKey(c)
	if o.told[k] == nil {
		o.told[k] = map[string]string{}
	}
	if o.told[k][name] == what {
		return false
	}
	o.told[k][name] = what
	return true
}

// isNews reports whether what is news to c about session name, without
// remembering it told.
func (o *othersTold) isNews(c api.Client, name, what string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.told[clientKey(c)][name] != what
}

// settled forgets what c was told of sessions not in attention, so that
// the next cell running there is news again.
func (o *othersTold) settled(c api.Client, attention map[string]bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for name := range o.told[clientKey(c)] {
		if !attention[name] {
			delete(o.told[clientKey(c)], name)
		}
	}
}
