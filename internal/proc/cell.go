package proc

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"
)

// Children lists the leader's live children, read when a runtime's cell
// begins: what a shell runs then is its background jobs, which an
// interrupt of the cell must leave alone (SignalGroupSparing). It is nil
// when the leader is gone or the table cannot be read.
func (t Tree) Children() []Proc {
	if pids, ok := childPIDs(t.Leader); ok {
		out := make([]Proc, 0, len(pids))
		for _, pid := range pids {
			if s, err := procStat(pid); err == nil && !s.zombie() && s.ppid == t.Leader.PID {
				out = append(out, Proc{PID: pid, Start: s.start})
			}
		}
		return out
	}
	x, err := scans.get("")
	if err != nil {
		return nil
	}
	if e, ok := x.byPID[t.Leader.PID]; !ok || e.start != t.Leader.Start {
		return nil
	}
	var out []Proc
	for _, pid := range x.children[t.Leader.PID] {
		out = append(out, x.byPID[pid].proc())
	}
	return out
}

// SignalGroupSparing is SignalGroup less the processes in spare and their
// descendants: an interrupt of a shell's cell that reaches the cell's
// commands but not the background jobs earlier cells started (a job whose
// child has not yet set SIGINT aside, or a job of a function or a { …; }
// group, whose commands do not ignore it, would die of it). With nothing
// to spare alive it is SignalGroup, one kill(2) reaching even a process
// forked a moment ago; otherwise each process of the leader's group and
// each descendant of the leader is signalled by itself (Signal, its start
// time checked), so one forked after the table was read is not: the
// caller's escalation sends again.
func (t Tree) SignalGroupSparing(sig unix.Signal, spare []Proc) error {
	var live []Proc
	for _, p := range spare {
		if p != t.Leader && Alive(p) {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return t.SignalGroup(sig)
	}
	if err := checkGroup(t.Leader.PID); err != nil {
		return err
	}
	// One by one. The leader first, and the table read after it: a shell
	// forking a pipeline's parts has them all by then, and their signals
	// come before it waits for them (bash takes a SIGINT that came while
	// it waited for a command that then ended normally as handled by the
	// command, and `sleep 100 | cat` whose cat was missed ends normally
	// at the end of its input). Then the latest started first, for the
	// same reason: a pipeline's readers before its writers.
	if err := Signal(t.Leader, sig); err != nil {
		return err
	}
	es, err := scan("")
	if err != nil {
		return fmt.Errorf("signal %v to process group %d: %w", sig, t.Leader.PID, err)
	}
	var errs []error
	for _, p := range sparingTargets(newIndex(es), t.Leader, live) {
		errs = append(errs, Signal(p, sig))
	}
	return errors.Join(errs...)
}

// sparingTargets picks, from one scan, the processes SignalGroupSparing
// signals after the leader: every descendant of the leader (if it is
// still the same process) and every process of its group, less the spared
// processes (if still the same) and everything under them; the latest
// started first.
func sparingTargets(x *index, leader Proc, spare []Proc) []Proc {
	if e, ok := x.byPID[leader.PID]; !ok || e.start != leader.Start || e.zombie() {
		return nil
	}
	spared := map[int]bool{}
	var queue []int
	for _, p := range spare {
		if e, ok := x.byPID[p.PID]; ok && e.start == p.Start && !spared[p.PID] {
			spared[p.PID] = true
			queue = append(queue, p.PID)
		}
	}
	for len(queue) > 0 {
		pid := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, c := range x.children[pid] {
			if !spared[c] && c != leader.PID { // a copy of a spared process keeps its own tree
				spared[c] = true
				queue = append(queue, c)
			}
		}
	}
	in := map[int]bool{}
	var out []Proc
	add := func(pid int) {
		e, ok := x.byPID[pid]
		if !ok || in[pid] || spared[pid] || e.zombie() || pid <= 1 {
			return
		}
		in[pid] = true
		out = append(out, e.proc())
		queue = append(queue, pid)
	}
	add(leader.PID)
	for _, pid := range x.byPgid[leader.PID] {
		add(pid)
	}
	for len(queue) > 0 {
		pid := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, c := range x.children[pid] {
			add(c)
		}
	}
	out = out[1:] // the leader, signalled already
	slices.SortFunc(out, func(a, b Proc) int {
		if a.Start != b.Start {
			return cmp.Compare(b.Start, a.Start)
		}
		return b.PID - a.PID
	})
	return out
}
