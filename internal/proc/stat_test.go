package proc

import (
	"errors"
	"slices"
	"testing"
)

func TestParseStat(t *testing.T) {
	tail := " 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 12345 23 24\n"
	cases := []struct {
		line string
		want stat
	}{
		{"42 (sleep) S 7 9" + tail, stat{pid: 42, state: 'S', ppid: 7, pgid: 9, start: 12345, rss: 24, rssOK: true}},
		{"42 (sleep) S 7 9 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 12345\n", stat{pid: 42, state: 'S', ppid: 7, pgid: 9, start: 12345}},
		{"42 (a b) c) Z 7 9" + tail, stat{pid: 42, state: 'Z', ppid: 7, pgid: 9, start: 12345, rss: 24, rssOK: true}},
		{"42 ()) ) R 1 42" + tail, stat{pid: 42, state: 'R', ppid: 1, pgid: 42, start: 12345, rss: 24, rssOK: true}},
		{"42 (() S 0 0" + tail, stat{pid: 42, state: 'S', ppid: 0, pgid: 0, start: 12345, rss: 24, rssOK: true}},
	}
	for _, c := range cases {
		got, err := parseStat([]byte(c.line))
		if err != nil || got != c.want {
			t.Errorf("parseStat(%q) = %+v, %v; want %+v", c.line, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "42 sleep S 1 1", "42 (sleep) S 1", "x (sleep) S 1 1" + tail, "42 (sleep) S x 1" + tail} {
		if _, err := parseStat([]byte(bad)); !errors.Is(err, errStatFormat) {
			t.Errorf("parseStat(%q) error = %v; want errStatFormat", bad, err)
		}
	}
}

func TestHasEntry(t *testing.T) {
	env := []byte("A=1\x00K=v\x00B=2\x00")
	for want, ok := range map[string]bool{"K=v": true, "A=1": true, "B=2": true, "K=": false, "K=vv": false, "=v": false} {
		if got := hasEntry(env, []byte(want)); got != ok {
			t.Errorf("hasEntry(%q) = %v; want %v", want, got, ok)
		}
	}
	if !hasEntry([]byte("A=1\x00K=v"), []byte("K=v")) {
		t.Error("entry without trailing NUL not found")
	}
}

func TestEntriesUnder(t *testing.T) {
	for _, c := range []struct {
		env, key string
		want     []string
	}{
		{"A=1\x00K=v\x00B=2\x00", "K=", []string{"K=v"}},
		{"A=1\x00K=v\x00K=w", "K=", []string{"K=v", "K=w"}},
		{"KK=v\x00K\x00=K=v", "K=", nil},
		{"K=\x00", "K=", []string{"K="}},
		{"", "K=", nil},
	} {
		if got := entriesUnder([]byte(c.env), []byte(c.key)); !slices.Equal(got, c.want) {
			t.Errorf("entriesUnder(%q, %q) = %q; want %q", c.env, c.key, got, c.want)
		}
	}
	for c, want := range map[string]string{"": "", "K=v": "K=", "POLYREPL_SESSION=ab": "POLYREPL_SESSION=", "=v": "", "Kv": ""} {
		if got := cookieKey(c); got != want {
			t.Errorf("cookieKey(%q) = %q; want %q", c, got, want)
		}
	}
}

func TestValidCookie(t *testing.T) {
	for c, ok := range map[string]bool{"": true, "K=v": true, "K=": true, "=v": false, "Kv": false, "K=\x00": false} {
		if err := validCookie(c); (err == nil) != ok {
			t.Errorf("validCookie(%q) = %v; want ok=%v", c, err, ok)
		}
	}
}

// TestSelectMembers checks the membership rules on a synthetic scan,
// including cases that are hard to produce with real processes.
func TestSelectMembers(t *testing.T) {
	const self = 999
	e := func(pid, ppid, pgid int, start uint64, state byte, cookie bool) entry {
		x := entry{stat: stat{pid: pid, ppid: ppid, pgid: pgid, start: start, state: state}}
		if cookie {
			x.tags = []string{"K=v"}
		} else if pid%2 == 0 {
			x.tags = []string{"K=other"} // another session's cookie
		}
		return x
	}
	leader := Proc{PID: 100, Start: 5}
	base := []entry{
		e(1, 0, 1, 1, 'S', false),
		e(self, 1, self, 2, 'S', true),     // the caller: never a member
		e(1000, self, self, 3, 'S', false), // caller's child: not reached through the caller
		e(101, 100, 100, 6, 'S', false),    // group member and child
		e(102, 101, 102, 7, 'S', false),    // left the group, descendant
		e(103, 1, 100, 8, 'S', false),      // double-forked, still in group
		e(104, 1, 104, 9, 'S', true),       // setsid and double-forked: cookie only
		e(105, 104, 105, 10, 'S', false),   // child of a cookie process
		e(106, 101, 100, 11, 'Z', false),   // zombie
		e(200, 1, 200, 12, 'S', false),     // unrelated
		e(201, 200, 100, 13, 'S', false),   // unrelated pgid? impossible, but must be found by group
	}
	cases := []struct {
		name   string
		es     []entry
		leader Proc
		want   []int
		spare  []Proc
	}{
		{"leader alive", append(base, e(100, self, 100, 5, 'S', false)), leader, []int{100, 101, 102, 103, 104, 105, 201}, nil},
		{"leader zombie", append(base, e(100, self, 100, 5, 'Z', false)), leader, []int{101, 102, 103, 104, 105, 201}, nil},
		{"leader gone", base, leader, []int{101, 102, 103, 104, 105, 201}, nil},
		{"leader pid reused", append(base, e(100, 1, 100, 50, 'S', false)), leader, []int{104, 105}, nil},
		{"no leader", base, Proc{}, []int{104, 105}, nil},
		// A fork another session adopted: its own group, the leader's
		// cookie, and children of its own; none of them is the tree's.
		{"spared fork", append(base, e(100, self, 100, 5, 'S', false),
			e(110, 100, 110, 20, 'S', true), e(111, 110, 110, 21, 'S', false), e(112, 111, 112, 22, 'S', true)),
			leader, []int{100, 101, 102, 103, 104, 105, 201}, []Proc{{PID: 110, Start: 20}}},
		// A runtime rolled back to a checkpoint is the checkpoint's copy:
		// the checkpoint (spared) is its parent, and it and its children
		// are the tree's all the same; another checkpoint it took is not.
		{"leader under a spared checkpoint", append(base[:len(base):len(base)], e(90, self, 90, 4, 'T', true), e(100, 90, 100, 5, 'S', true),
			e(120, 100, 120, 30, 'T', true)),
			leader, []int{100, 101, 102, 103, 104, 105, 201}, []Proc{{PID: 90, Start: 4}, {PID: 120, Start: 30}}},
		{"a spared pid reused", append(base, e(100, self, 100, 5, 'S', false), e(110, 100, 110, 20, 'S', true)),
			leader, []int{100, 101, 102, 103, 104, 105, 110, 201}, []Proc{{PID: 110, Start: 19}}},
	}
	for _, c := range cases {
		got := newIndex(c.es).members(c.leader, "K=v", self, c.spare)
		var pids []int
		for _, p := range got {
			pids = append(pids, p.PID)
		}
		if len(pids) != len(c.want) {
			t.Errorf("%s: members %v; want %v", c.name, pids, c.want)
			continue
		}
		for i := range pids {
			if pids[i] != c.want[i] {
				t.Errorf("%s: members %v; want %v", c.name, pids, c.want)
				break
			}
		}
	}
}
