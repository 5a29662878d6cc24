package proc

import (
	"fmt"
	"os"
	"slices"
	"sync"
)

// Members lists the live processes of the tree: every process whose pgid is
// the leader's pid, every descendant (by ppid chain) of the leader or of any
// such process, and, when withCookie is true, every process owned by our uid
// whose environment (/proc/PID/environ on Linux, sysctl kern.procargs2 on
// macOS) contains the cookie as a whole entry (and their descendants).
// Zombies are excluded. withCookie is slower (reads every environment) and
// is for killing; listing memory uses withCookie=false. A cookie that is not
// a KEY=VALUE string is ignored. It returns nil when the process table
// cannot be read.
func (t Tree) Members(withCookie bool) []Proc {
	ms, _ := t.members(withCookie)
	return ms
}

// members is Members with the scan error kept, for callers such as Kill that
// must not mistake an unreadable process table for an empty tree. The scan
// is shared with the trees asked about at the same time (see shared).
func (t Tree) members(withCookie bool) ([]Proc, error) {
	key := ""
	if withCookie {
		key = cookieKey(t.Cookie)
	}
	x, err := scans.get(key)
	if err != nil {
		return nil, fmt.Errorf("list members of session %v: %w", t.Leader, err)
	}
	return x.members(t.Leader, t.Cookie, os.Getpid(), t.Spare), nil
}

// Table is the process table as one scan read it, without environments:
// the members of many trees are found in it without a scan each (a
// listing of 500 sessions' memory reads /proc once, not 500 times).
type Table struct{ x *index }

// ReadTable scans the process table.
func ReadTable() (*Table, error) {
	es, err := scan("")
	if err != nil {
		return nil, err
	}
	return &Table{newIndex(es)}, nil
}

// RSS is about RSS(ps), as tb saw them: the resident memory its scan
// read of each (Linux's /proc/PID/stat, which sums the kernel's
// per-CPU counts only roughly: a few hundred KB either way), so that
// listing many sessions reads no process twice. A process it did not
// see as it is now (another start time, no memory read, as on macOS, or
// none counted yet, as for one just started) is read afresh.
func (tb *Table) RSS(ps []Proc) uint64 {
	if tb == nil {
		return RSS(ps)
	}
	var total uint64
	var rest []Proc
	for _, p := range ps {
		e, ok := tb.x.byPID[p.PID]
		switch {
		case !ok || e.start != p.Start || !e.rssOK || e.rss == 0:
			rest = append(rest, p)
		case !e.zombie():
			total += e.rss * uint64(os.Getpagesize())
		}
	}
	return total + RSS(rest)
}

// Stopped is Stopped(p) as tb saw p, read afresh if it did not see it.
func (tb *Table) Stopped(p Proc) bool {
	if tb == nil {
		return Stopped(p)
	}
	if e, ok := tb.x.byPID[p.PID]; ok && e.start == p.Start {
		return e.state == 'T'
	}
	return Stopped(p)
}

// MembersIn is Members(false) as tb saw the tree; nil for a nil table.
func (t Tree) MembersIn(tb *Table) []Proc {
	if tb == nil {
		return nil
	}
	return tb.x.members(t.Leader, "", os.Getpid(), t.Spare)
}

// index is one scan's processes, arranged to find a tree's members in
// time proportional to the tree, not the table.
type index struct {
	byPID    map[int]entry // zombies too: a leader's pid is checked against them
	children map[int][]int // live processes by parent
	byPgid   map[int][]int // live processes by process group
	byTag    map[string][]int
}

func newIndex(es []entry) *index {
	x := &index{byPID: make(map[int]entry, len(es)), children: make(map[int][]int, len(es)/4),
		byPgid: make(map[int][]int, len(es)/2), byTag: map[string][]int{}}
	for _, e := range es {
		x.byPID[e.pid] = e
		if e.zombie() {
			continue
		}
		x.children[e.ppid] = append(x.children[e.ppid], e.pid)
		x.byPgid[e.pgid] = append(x.byPgid[e.pgid], e.pid)
		for _, tag := range e.tags {
			x.byTag[tag] = append(x.byTag[tag], e.pid)
		}
	}
	return x
}

// members picks the tree's live processes. self (the calling process) is
// never a member and never a root of descendants, so a daemon that somehow
// carried the cookie could not end up killing its own children of other
// sessions. A cookie counts only if the scan read its key. Spared
// processes (Tree.Spare) and their descendants are left out.
func (x *index) members(leader Proc, cookie string, self int, spare []Proc) []Proc {
	// The group id is ours only while the leader's pid has not been reused:
	// the kernel does not hand out a pid that still names a process group,
	// so if another process now holds it, our group is gone and any group
	// with that id belongs to someone else.
	groupOK := leader.PID > 1
	leaderAlive := false
	if e, ok := x.byPID[leader.PID]; ok {
		groupOK = groupOK && e.start == leader.Start
		leaderAlive = groupOK && !e.zombie()
	}

	in := make(map[int]entry)
	var queue []int
	add := func(pid int) {
		e, ok := x.byPID[pid]
		if _, dup := in[pid]; !ok || dup || pid <= 1 || pid == self || e.zombie() || x.spared(e, leader.PID, spare) {
			return
		}
		in[pid] = e
		queue = append(queue, pid)
	}
	if groupOK {
		for _, pid := range x.byPgid[leader.PID] {
			add(pid)
		}
	}
	if cookie != "" {
		for _, pid := range x.byTag[cookie] {
			add(pid)
		}
	}
	if leaderAlive {
		add(leader.PID)
	}
	for len(queue) > 0 {
		pid := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, c := range x.children[pid] {
			add(c)
		}
	}

	out := make([]Proc, 0, len(in))
	for _, e := range in {
		out = append(out, e.proc())
	}
	slices.SortFunc(out, func(a, b Proc) int { return a.PID - b.PID })
	return out
}

// maxSpareDepth bounds the walk up from a process to a spared ancestor.
const maxSpareDepth = 64

// spared reports whether e is one of spare or descends from one, not
// through the tree's leader: a runtime that is itself a copy of a spared
// process (a session rolled back to a checkpoint, whose copy it is) keeps
// its own tree.
func (x *index) spared(e entry, leader int, spare []Proc) bool {
	for range maxSpareDepth {
		if len(spare) == 0 || e.pid == leader {
			return false
		}
		if slices.Contains(spare, e.proc()) {
			return true
		}
		up, ok := x.byPID[e.ppid]
		if !ok || e.ppid <= 1 {
			return false
		}
		e = up
	}
	return false
}

// scans shares the process table among the trees asked about at once.
var scans shared

// shared runs one scan at a time per key and gives it to every caller
// that asked before it began: each caller still sees the table as it was
// after its call, as a scan of its own would, but 500 sessions ended at
// once (a daemon stopping) cost a scan per round, not 500 scans a round
// with every environment read each time.
type shared struct {
	mu   sync.Mutex
	next map[string]*round // by key: the round not yet begun
	busy map[string]bool   // a scan of that key runs
}

// round is one scan and those waiting for it.
type round struct {
	done chan struct{}
	x    *index
	err  error
}

// get returns a scan of key ("": without environments) begun after the
// call.
func (s *shared) get(key string) (*index, error) {
	s.mu.Lock()
	if s.next == nil {
		s.next, s.busy = map[string]*round{}, map[string]bool{}
	}
	r := s.next[key]
	if r == nil {
		r = &round{done: make(chan struct{})}
		s.next[key] = r
	}
	if !s.busy[key] {
		s.busy[key] = true
		go s.run(key)
	}
	s.mu.Unlock()
	<-r.done
	return r.x, r.err
}

// run scans for each round of key in turn, until none waits.
func (s *shared) run(key string) {
	for {
		s.mu.Lock()
		r := s.next[key]
		delete(s.next, key)
		if r == nil {
			s.busy[key] = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		es, err := scan(key)
		if err == nil {
			r.x = newIndex(es)
		}
		r.err = err
		close(r.done)
	}
}
