package record

import (
	"fmt"
	"sync"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Told is what each client was told beyond one record's entries, for all
// the names of a daemon: a record's position (Activity) says which of its
// entries a client heard; Told says the rest, which outlives a record
// let go when its session dies and spans every session:
//
//   - the last death of each name, told once to each client: in the
//     reply of the cell it ended, in a refusal, in a note about other
//     sessions or when the name starts afresh — whichever reaches the
//     client first — and not again as the record's activity;
//   - the other sessions that need a client's attention (a cell
//     running, a result nobody collected), told when that begins or
//     changes, not on every call while it lasts.
//
// A session asks it what a client needs to be told and says what it
// told; it keeps no session state of its own. Only the last death of
// each name is kept: an earlier life's loss is cleared when the name
// starts afresh, so nothing is left to tell of it. It is held in memory:
// after a daemon restart a client may hear of a death once more.
//
// Its lock is a leaf: it is taken under a session's and never held
// while another is taken (Activity reads the record before it takes it).
type Told struct {
	mu     sync.Mutex
	deaths map[string]*toldDeath        // by session name
	others map[string]map[string]string // clientKey → session → what was told
}

type toldDeath struct {
	generation string
	clients    map[string]bool // by clientKey
}

// TellDeath marks the death of generation gen of name as told to c, and
// reports whether c had not heard of it: the caller tells it when true.
// Asking and marking are one step, so two replies racing to the same
// client tell a death once.
func (t *Told) TellDeath(name, gen string, c api.Client) bool {
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

// HeardDeath reports whether c has heard of the death of generation gen
// of name.
func (t *Told) HeardDeath(name, gen string, c api.Client) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.deaths[name]
	return d != nil && d.generation == gen && d.clients[clientKey(c)]
}

// Activity is r.Activity(c) without the deaths c has heard of already
// (told in a reply, a refusal or a note): nil if nothing else is left.
func (t *Told) Activity(r *Record, c api.Client) *api.Activity {
	a := r.Activity(c)
	if a == nil || len(a.Entries) == 0 {
		return a
	}
	kept := a.Entries[:0]
	for _, e := range a.Entries {
		if e.Kind == api.EntryNote && e.Note != nil && e.Note.Kind == api.NoteEnded && t.HeardDeath(r.name, e.Generation, c) {
			continue
		}
		kept = append(kept, e)
	}
	a.Entries = kept
	if len(a.Entries) == 0 && a.Earlier == 0 {
		return nil
	}
	return a
}

// Others picks, of sessions (every one but the asker's own, at a glance),
// those to tell c about: the ones that need its attention — a cell
// running, a result nobody collected, a death with a cell nobody
// collected that c has not heard of — and whose state is news to c. It
// returns at most api.MaxOthers of them, marked told (a dead one's death
// with it), and counts the others that are news, which are not marked:
// a later call lists them. What c was told of a session that needs no
// attention now is forgotten, so that the next cell running there is
// news again; the asker's own session (except) is neither told nor
// forgotten.
func (t *Told) Others(c api.Client, except string, sessions []api.SessionInfo) (tell []api.SessionInfo, more int) {
	k := clientKey(c)
	attention := map[string]bool{except: true}
	for _, i := range sessions {
		if i.Name == except {
			continue
		}
		var what string
		switch {
		case i.Running != nil:
			what = fmt.Sprintf("running %s %d", i.Generation, i.Running.Cell)
		case i.State == api.StateDead && i.Unread:
			if t.HeardDeath(i.Name, i.Generation, c) {
				continue
			}
			what = "dead " + i.Generation
		case i.Unread:
			what = fmt.Sprintf("unread %s %d", i.Generation, i.Cells)
		default:
			continue
		}
		attention[i.Name] = true
		if len(tell) == api.MaxOthers {
			if t.isNews(k, i.Name, what) {
				more++
			}
			continue
		}
		if !t.news(k, i.Name, what) {
			continue
		}
		if i.State == api.StateDead {
			t.TellDeath(i.Name, i.Generation, c)
		}
		tell = append(tell, i)
	}
	t.settled(k, attention)
	return tell, more
}

// news reports whether what (a key of a session's state) is news to the
// client of key k about session name, and remembers it told.
func (t *Told) news(k, name, what string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.others == nil {
		t.others = map[string]map[string]string{}
	}
	if t.others[k] == nil {
		t.others[k] = map[string]string{}
	}
	if t.others[k][name] == what {
		return false
	}
	t.others[k][name] = what
	return true
}

// isNews is news without remembering it told.
func (t *Told) isNews(k, name, what string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.others[k][name] != what
}

// settled forgets what the client of key k was told of sessions not in
// attention, and the client itself once nothing is left: a client that
// went away keeps nothing here.
func (t *Told) settled(k string, attention map[string]bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for name := range t.others[k] {
		if !attention[name] {
			delete(t.others[k], name)
		}
	}
	if len(t.others[k]) == 0 {
		delete(t.others, k)
	}
}
