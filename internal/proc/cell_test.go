package proc

import (
	"fmt"
	"slices"
	"testing"
)

// sparingTargets reaches the leader's descendants and its group, and
// leaves out the spared processes (if still the same) with everything
// under them.
func TestSparingTargets(t *testing.T) {
	// 10 leader; 11 a job of an earlier cell with child 12 and grandchild
	// 13; 14 the cell's command with child 15; 16 an orphan of the group;
	// 17 another group's process; 18 a zombie of the group; 20 a job whose
	// pid was reused (start differs).
	es := []entry{
		{stat: stat{pid: 10, state: 'S', ppid: 1, pgid: 10, start: 100}},
		{stat: stat{pid: 11, state: 'S', ppid: 10, pgid: 10, start: 110}},
		{stat: stat{pid: 12, state: 'S', ppid: 11, pgid: 10, start: 120}},
		{stat: stat{pid: 13, state: 'S', ppid: 12, pgid: 10, start: 130}},
		{stat: stat{pid: 14, state: 'S', ppid: 10, pgid: 10, start: 140}},
		{stat: stat{pid: 15, state: 'R', ppid: 14, pgid: 10, start: 150}},
		{stat: stat{pid: 16, state: 'S', ppid: 1, pgid: 10, start: 160}},
		{stat: stat{pid: 17, state: 'S', ppid: 1, pgid: 17, start: 170}},
		{stat: stat{pid: 18, state: 'Z', ppid: 10, pgid: 10, start: 180}},
		{stat: stat{pid: 20, state: 'S', ppid: 10, pgid: 10, start: 999}},
	}
	x := newIndex(es)
	pids := func(ps []Proc) []int {
		var out []int
		for i, p := range ps {
			if i > 0 && ps[i-1].Start < p.Start {
				t.Errorf("%v signalled before %v, which started later", ps[i-1], p)
			}
			out = append(out, p.PID)
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		leader Proc
		spare  []Proc
		want   []int
	}{
		{Proc{10, 100}, nil, []int{11, 12, 13, 14, 15, 16, 20}},
		{Proc{10, 100}, []Proc{{11, 110}}, []int{14, 15, 16, 20}},
		{Proc{10, 100}, []Proc{{11, 110}, {20, 200}}, []int{14, 15, 16, 20}},
		{Proc{10, 100}, []Proc{{11, 111}}, []int{11, 12, 13, 14, 15, 16, 20}},
		{Proc{10, 100}, []Proc{{16, 160}, {14, 140}}, []int{11, 12, 13, 20}},
		{Proc{10, 101}, nil, nil},
	} {
		if got := pids(sparingTargets(x, c.leader, c.spare)); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("leader %v sparing %v: %v, want %v", c.leader, c.spare, got, c.want)
		}
	}
}
