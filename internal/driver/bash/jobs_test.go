package bash

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
)

// interruptCell runs code, waits for its mark, and interrupts it through
// the session's whole escalation (SIGINT, SIGINT, the wake signal), each
// attempt given a moment: the attempts that were not needed are sent all
// the same, so each reaches the jobs of the earlier cells.
func (s *session) interruptCell(t *testing.T, code string) (driver.Result, string) {
	t.Helper()
	s.n++
	if err := s.p.Run(s.n, "echo started-mark; "+code); err != nil {
		t.Fatal(err)
	}
	drivertest.WaitOutput(t, s.rec, "started-mark\n", fmt.Sprintf("%q never started", code))
	for attempt := 0; attempt < 3; attempt++ {
		if err := s.p.Interrupt(attempt); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r := s.wait(t, 10*time.Second)
	return r, s.rec.TakeOutput()
}

// TestInterruptSparesJobs: an interrupt reaches only the cell. The
// background jobs earlier cells started — a command, a function, a
// { …; } group, a subshell, another shell, a Python server — and what
// they run live on through every step of the escalation, though the
// commands of a function's or a group's job do not ignore SIGINT.
func TestInterruptSparesJobs(t *testing.T) {
	s := start(t)
	jobs := `sleep 300 & j1=$!
f() { sleep 300; }; f & j2=$!
{ sleep 300; } & j3=$!
( while :; do sleep 1; done ) & j4=$!
sh -c 'sleep 300' & j5=$!`
	names := "j1 j2 j3 j4 j5"
	if py, err := exec.LookPath("python3"); err == nil {
		jobs += "\n" + py + " -m http.server 0 --bind 127.0.0.1 >/dev/null 2>&1 & j6=$!"
		names += " j6"
	}
	s.ok(t, jobs)
	for _, code := range []string{"sleep 100", "while :; do :; done", "sleep 100 | cat", "g() { sleep 100; }; g"} {
		if r, _ := s.interruptCell(t, code); r.Status != "interrupted" {
			t.Errorf("%q: %+v", code, r)
		}
	}
	// A job's own children too: the group's sleep and the function's are
	// the ones that die of a SIGINT that reaches them.
	out := s.ok(t, `for j in `+names+`; do
	if kill -0 ${!j} 2>/dev/null; then echo "$j alive"; else wait ${!j}; echo "$j died: $?"; fi
done`)
	want := ""
	for _, j := range strings.Fields(names) {
		want += j + " alive\n"
	}
	if out != want {
		t.Errorf("background jobs after the interrupts:\n%s\nwant all alive", out)
	}
	// A cell with a job of its own is interrupted too. (That job is the
	// cell's: a SIGINT that lands before its child has set SIGINT aside
	// ends it, as at a terminal without job control.)
	if r, _ := s.interruptCell(t, "sleep 300 & sleep 100"); r.Status != "interrupted" {
		t.Errorf("a cell with its own job: %+v", r)
	}
}
