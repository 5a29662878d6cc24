package record

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// TestToldDeath: a death is told once to each client (a connection of its
// own is another client), and a new life's death is news again.
func TestToldDeath(t *testing.T) {
	var told Told
	steps := []struct {
		name, gen string
		c         api.Client
		first     bool
	}{
		{"s", "g1", alice, true},
		{"s", "g1", alice, false},
		{"s", "g1", agent, true},
		{"s", "g1", other, true},
		{"t", "g1", alice, true}, // another name
		{"s", "g2", alice, true}, // the next life of s died
		{"s", "g2", alice, false},
		{"s", "g1", agent, true}, // only the last death of s is kept
	}
	for i, st := range steps {
		if got := told.TellDeath(st.name, st.gen, st.c); got != st.first {
			t.Errorf("step %d: TellDeath(%s, %s, %s) = %v, want %v", i, st.name, st.gen, st.c.Label(), got, st.first)
		}
		if !told.HeardDeath(st.name, st.gen, st.c) {
			t.Errorf("step %d: %s has not heard of the death it was told", i, st.c.Label())
		}
	}
	if told.HeardDeath("s", "g2", other) || told.HeardDeath("u", "g1", alice) {
		t.Errorf("a death was heard by a client never told")
	}
}

// TestToldActivity: the record's end-of-life note is left out of the
// activity of a client that heard of the death elsewhere, and told to
// one that did not.
func TestToldActivity(t *testing.T) {
	var told Told
	r, _ := Open(t.TempDir(), "s")
	defer r.Close()
	r.Activity(alice)
	r.Activity(agent)
	r.Activity(other)
	s1 := r.Add(cellBy(other, "1+1"))
	end(r, s1, api.StatusDone)
	ended := api.Note{Kind: api.NoteEnded, Session: "s", Death: &api.Death{By: api.ByExit}}
	r.Add(api.Entry{Kind: api.EntryNote, Generation: "g1", Note: &ended, Started: time.Now()})

	told.TellDeath("s", "g1", alice) // in the reply of the cell it ended
	told.TellDeath("s", "g1", agent)
	a := told.Activity(r, alice)
	if a == nil || len(a.Entries) != 1 || a.Entries[0].Seq != s1 {
		t.Errorf("alice told %+v, want the other cell and not the death she heard of", a)
	}
	// A client told nothing else gets nothing.
	if a := told.Activity(r, agent); a == nil || len(a.Entries) != 1 {
		t.Errorf("agent told %+v, want the other cell only", a)
	}
	r.Activity(agent)
	ended2 := ended
	r.Add(api.Entry{Kind: api.EntryNote, Generation: "g2", Note: &ended2, Started: time.Now()})
	told.TellDeath("s", "g2", agent)
	if a := told.Activity(r, agent); a != nil {
		t.Errorf("agent, who heard of the death, told %+v", a)
	}
	// The other connection heard of neither death: both are its news.
	if a := told.Activity(r, other); a == nil || len(a.Entries) != 2 {
		t.Errorf("other told %+v, want both deaths", a)
	}
}

// TestToldOthers: another session's attention is told once to each
// client when it begins or changes; what is not listed is counted and
// listed later; a dead session's listing is its death told.
func TestToldOthers(t *testing.T) {
	var told Told
	running := func(name string, cell int) api.SessionInfo {
		return api.SessionInfo{Name: name, Generation: "g", State: api.StateRunning, Running: &api.Running{Cell: cell}, Cells: cell}
	}
	unread := func(name string, cells int) api.SessionInfo {
		return api.SessionInfo{Name: name, Generation: "g", State: api.StateIdle, Unread: true, Cells: cells}
	}
	idle := api.SessionInfo{Name: "b", Generation: "g", State: api.StateIdle, Cells: 2}
	dead := api.SessionInfo{Name: "d", Generation: "g", State: api.StateDead, Unread: true}
	names := func(is []api.SessionInfo) string {
		s := ""
		for _, i := range is {
			s += i.Name + " "
		}
		return s
	}
	steps := []struct {
		c        api.Client
		sessions []api.SessionInfo
		want     string
		more     int
	}{
		{alice, []api.SessionInfo{running("b", 1)}, "b ", 0},
		{alice, []api.SessionInfo{running("b", 1)}, "", 0},   // as told
		{agent, []api.SessionInfo{running("b", 1)}, "b ", 0}, // another client
		{alice, []api.SessionInfo{unread("b", 1)}, "b ", 0},  // it ended, uncollected
		{alice, []api.SessionInfo{idle}, "", 0},              // collected: forgotten
		{alice, []api.SessionInfo{running("b", 1)}, "b ", 0}, // so running again is news
		{alice, []api.SessionInfo{running("b", 2)}, "b ", 0}, // another cell
		{alice, []api.SessionInfo{running("a", 1), running("b", 2)}, "a ", 0},
		{alice, []api.SessionInfo{running("s", 1)}, "", 0}, // the asker's own
		{alice, []api.SessionInfo{dead}, "d ", 0},          // its death told with it
		{alice, []api.SessionInfo{dead}, "", 0},            // and not again
		{other, []api.SessionInfo{dead}, "d ", 0},
	}
	for i, st := range steps {
		got, more := told.Others(st.c, "s", st.sessions)
		if names(got) != st.want || more != st.more {
			t.Errorf("step %d: %s told %q and %d more, want %q and %d", i, st.c.Label(), names(got), more, st.want, st.more)
		}
	}
	if !told.HeardDeath("d", "g", alice) || told.HeardDeath("d", "g", agent) {
		t.Errorf("the dead session's listing did not tell its death to alice alone")
	}
	// A client whose death news came elsewhere does not hear of it here.
	told.TellDeath("d", "g", agent)
	if got, _ := told.Others(agent, "s", []api.SessionInfo{dead}); len(got) != 0 {
		t.Errorf("agent heard of the death elsewhere, then told %q", names(got))
	}

	// Past api.MaxOthers, the rest are counted, not marked: later calls
	// list them.
	var many []api.SessionInfo
	for i := range api.MaxOthers + 3 {
		many = append(many, running(fmt.Sprintf("m%03d", i), 1))
	}
	c := api.Client{Who: "many", How: "cli"}
	seen := map[string]bool{}
	for round := 0; round < 3; round++ {
		got, more := told.Others(c, "s", many)
		for _, i := range got {
			if seen[i.Name] {
				t.Errorf("round %d: %s told twice", round, i.Name)
			}
			seen[i.Name] = true
		}
		if want := max(0, api.MaxOthers+3-len(seen)); more != want {
			t.Errorf("round %d: %d more, want %d", round, more, want)
		}
	}
	if len(seen) != len(many) {
		t.Errorf("%d of %d sessions told", len(seen), len(many))
	}
}

// TestToldForgetsSettledClients: a client with nothing in its attention
// keeps nothing in Told, however many clients came and went.
func TestToldForgetsSettledClients(t *testing.T) {
	var told Told
	busy := []api.SessionInfo{{Name: "b", Generation: "g", State: api.StateRunning, Running: &api.Running{Cell: 1}}}
	for i := range 1000 {
		c := api.Client{Who: "agent", How: "mcp", Conn: fmt.Sprintf("mcp-%d", i)}
		told.Others(c, "s", busy)
		told.Others(c, "s", nil)
	}
	told.mu.Lock()
	n := len(told.others)
	told.mu.Unlock()
	if n != 0 {
		t.Errorf("%d clients kept after their attention settled", n)
	}
}

// A client that made a session and sent cells to it has joined: after a
// daemon was killed before it saved the clients' positions, that client
// is told what others did after its last entry as news, never the
// session "before it joined"; a new daemon taking the session up is
// bookkeeping, told to nobody (log shows it), and a client new to the
// session is told the others' entries without it.
func TestJoinedAcrossALostPosition(t *testing.T) {
	bob := api.Client{Who: "bob", How: "cli"}
	dir := t.TempDir()
	r, _ := Open(dir, "s")
	r.Add(api.Entry{Kind: api.EntryNote, Who: "alice", How: "cli", Note: &api.Note{Kind: api.NoteCreated, Session: "s"}, Started: time.Now()})
	end(r, r.Add(cellBy(alice, "x = 1")), api.StatusDone)
	r.Activity(alice)
	bobs := r.Add(cellBy(bob, "y = 2"))
	end(r, bobs, api.StatusDone)
	r.Close()
	os.Remove(filepath.Join(dir, "s.positions.json")) // as a daemon killed before it saved them

	r, _ = Open(dir, "s")
	defer r.Close()
	r.Add(api.Entry{Kind: api.EntryNote, Note: &api.Note{Kind: api.NoteAdopted, Session: "s"}, Started: time.Now()})
	end(r, r.Add(cellBy(alice, "x")), api.StatusDone)
	a := r.Activity(alice)
	if a == nil || a.First || len(a.Entries) != 1 || a.Entries[0].Seq != bobs {
		t.Errorf("alice, who made the session, was told %+v; want bob's cell as news, not a first contact", a)
	}
	if a := r.Activity(alice); a != nil {
		t.Errorf("alice asking again was told %+v, want nothing", a)
	}

	end(r, r.Add(cellBy(agent, "z")), api.StatusDone)
	a = r.Activity(agent)
	if a == nil || !a.First {
		t.Fatalf("a client new to the session was told %+v, want a first contact", a)
	}
	for _, e := range a.Entries {
		if e.Note != nil && e.Note.Kind == api.NoteAdopted {
			t.Errorf("a first contact tells the daemon's adoption: %+v", e)
		}
	}
	end(r, r.Add(cellBy(bob, "w")), api.StatusDone)
	r.Add(api.Entry{Kind: api.EntryNote, Note: &api.Note{Kind: api.NoteAdopted, Session: "s"}, Started: time.Now()})
	if a := r.Activity(agent); a == nil || len(a.Entries) != 1 || a.Entries[0].Who != "bob" {
		t.Errorf("news after an adoption: %+v, want bob's cell alone", a)
	}
}
