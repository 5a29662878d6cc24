package proc

import (
	"fmt"
	"os"
	"slices"
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
// must not mistake an unreadable process table for an empty tree.
func (t Tree) members(withCookie bool) ([]Proc, error) {
	cookie := ""
	if withCookie {
		cookie = t.Cookie
	}
	es, err := scan(cookie)
	if err != nil {
		return nil, fmt.Errorf("list members of session %v: %w", t.Leader, err)
	}
	return selectMembers(es, t.Leader, os.Getpid()), nil
}

// selectMembers picks the tree's live processes out of one scan. self (the
// calling process) is never a member and never a root of descendants, so a
// daemon that somehow carried the cookie could not end up killing its own
// children of other sessions.
func selectMembers(es []entry, leader Proc, self int) []Proc {
	// The group id is ours only while the leader's pid has not been reused:
	// the kernel does not hand out a pid that still names a process group,
	// so if another process now holds it, our group is gone and any group
	// with that id belongs to someone else.
	groupOK := leader.PID > 1
	leaderAlive := false
	for _, e := range es {
		if e.pid == leader.PID {
			groupOK = groupOK && e.start == leader.Start
			leaderAlive = groupOK && !e.zombie()
			break
		}
	}

	children := make(map[int][]int, len(es)/4)
	in := make(map[int]entry)
	var queue []int
	add := func(e entry) {
		if _, ok := in[e.pid]; ok || e.pid <= 1 || e.pid == self || e.zombie() {
			return
		}
		in[e.pid] = e
		queue = append(queue, e.pid)
	}
	byPID := make(map[int]entry, len(es))
	for _, e := range es {
		if e.zombie() {
			continue
		}
		byPID[e.pid] = e
		children[e.ppid] = append(children[e.ppid], e.pid)
	}
	for _, e := range byPID {
		if (groupOK && e.pgid == leader.PID) || e.cookie || (leaderAlive && e.pid == leader.PID) {
			add(e)
		}
	}
	for len(queue) > 0 {
		pid := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, c := range children[pid] {
			add(byPID[c])
		}
	}

	out := make([]Proc, 0, len(in))
	for _, e := range in {
		out = append(out, e.proc())
	}
	slices.SortFunc(out, func(a, b Proc) int { return a.PID - b.PID })
	return out
}
