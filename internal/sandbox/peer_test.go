package sandbox

import (
	"testing"

	"github.com/polyrepl/polyrepl/internal/proc"
)

func TestPlace(t *testing.T) {
	leader := proc.Proc{PID: 100, Start: 7}
	holder := proc.Proc{PID: 90, Start: 5}
	marks := []Mark{
		{Leader: proc.Proc{PID: 300, Start: 1}, Holder: proc.Proc{PID: 290, Start: 1}, Cookie: "POLYREPL_SESSION=other"},
		{Leader: leader, Holder: holder, Cookie: "POLYREPL_SESSION=g1"},
	}
	link := func(pid int, start uint64, ppid, pgid, sid int) Link {
		return Link{Proc: proc.Proc{PID: pid, Start: start}, PPID: ppid, PGID: pgid, SID: sid}
	}
	shell := link(50, 1, 1, 50, 50) // a person's shell: nobody's session
	for _, c := range []struct {
		name string
		peer Peer
		want int
		how  string
	}{
		{"a person's shell", Peer{PID: 60, Chain: []Link{link(60, 9, 50, 60, 50), shell}}, -1, ""},
		{"the runtime itself", Peer{PID: 100, Chain: []Link{link(100, 7, 90, 100, 90)}}, 1, "is the session's runtime"},
		{"a child of the runtime in a group of its own", Peer{PID: 120, Chain: []Link{link(120, 9, 100, 120, 120), link(100, 7, 90, 100, 90)}}, 1, "descends from the session's runtime"},
		{"a pid reused: the start time differs", Peer{PID: 61, Chain: []Link{link(61, 9, 100, 61, 61), link(100, 8, 1, 77, 77)}}, -1, ""},
		{"double-forked, env cleared: its group", Peer{PID: 130, Chain: []Link{link(130, 9, 1, 100, 90)}}, 1, "process group"},
		{"double-forked and setpgid: its process session", Peer{PID: 131, Chain: []Link{link(131, 9, 1, 131, 90)}}, 1, "process session"},
		{"a terminal runtime's session", Peer{PID: 132, Chain: []Link{link(132, 9, 1, 132, 100)}}, 1, "process session"},
		{"double-forked and setsid: the cookie", Peer{PID: 140, Cookie: "POLYREPL_SESSION=g1", Chain: []Link{link(140, 9, 1, 140, 140)}}, 1, "cookie"},
		{"another session's cookie", Peer{PID: 141, Cookie: "POLYREPL_SESSION=other", Chain: []Link{link(141, 9, 1, 141, 141)}}, 0, "cookie"},
		{"a cookie of no session", Peer{PID: 142, Cookie: "POLYREPL_SESSION=gone", Chain: []Link{link(142, 9, 1, 142, 142)}}, -1, ""},
		{"ancestry wins over a cookie", Peer{PID: 150, Cookie: "POLYREPL_SESSION=other", Chain: []Link{link(150, 9, 100, 150, 150), link(100, 7, 90, 100, 90)}}, 1, "runtime"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, how := c.peer.Place(marks)
			if got != c.want {
				t.Fatalf("Place = %d (%s); want %d", got, how, c.want)
			}
			if c.want >= 0 && !contains(how, c.how) {
				t.Fatalf("Place said %q; want %q in it", how, c.how)
			}
		})
	}
	// A zero mark (a session whose runtime is not known yet) matches
	// nothing, not every process whose group is 0.
	if got, _ := (Peer{PID: 5, Chain: []Link{link(5, 1, 0, 0, 0)}}).Place([]Mark{{}}); got != -1 {
		t.Fatalf("a zero mark placed a peer: %d", got)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestConfined(t *testing.T) {
	c := Confined("/w")
	if c.Sandbox.Policy != "read-only" || c.Sandbox.Network != "off" || len(c.Sandbox.Readable)+len(c.Sandbox.Writable) != 0 || c.Cwd != "/w" {
		t.Fatalf("Confined = %+v", c)
	}
	if _, err := Normal(&c.Sandbox); err != nil {
		t.Fatalf("Confined is not Normal: %v", err)
	}
}
