package e2e

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

// TestDeathAndLossReports checks that losses are reported: a session that
// exits is reported dead with its status; the next exec under its name
// opens with what was lost (how, the names, where the code is) and only
// that exec does; a worker killed from outside is reported with its signal
// by wait and by the next exec; wait and interrupt on a killed session say
// how it died.
func TestDeathAndLossReports(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	transcript := filepath.Join(e.stateDir(), "doomed.py")

	e.must(0, "exec", "doomed", "alpha_name = 1\nbeta_name = 2")
	out, errOut, code := e.run("exec", "doomed", "import os\nos._exit(3)")
	if code != 1 {
		t.Errorf("os._exit(3): exit %d, want 1\n%s%s", code, out, errOut)
	}
	wantContains(t, "os._exit(3) reply", out+errOut, "status 3", "alpha_name", "beta_name", transcript)

	// Each client hears of a death once: the one whose cell died heard it
	// in that reply, so bob's exec is the one that says what was lost.
	r := e.runJSON("--label", "bob", "exec", "doomed", "1")
	if r.code != 0 || r.Status != "done" || r.Cell != 1 || len(r.Notes) == 0 || r.Notes[0].Kind != "lost" {
		t.Fatalf("exec after a death: want status done in cell 1, opening with a lost note: %v", r)
	}
	wantContains(t, "loss note", r.Notes[0].Text, "status 3", "alpha_name", "beta_name", transcript)
	if len(r.notesOf("created")) != 1 {
		t.Errorf("exec after a death: want a created note too: %v", r)
	}
	r = e.runJSON("--label", "bob", "exec", "doomed", "2")
	if len(r.notesOf("lost")) != 0 {
		t.Errorf("the loss was reported again on a later exec: %v", r)
	}

	r = e.runJSON("exec", "doomed", "import os\nos._exit(5)")
	if r.code != 1 || r.Status != "dead" {
		t.Errorf("os._exit(5) --json: want exit 1, status dead: %v", r)
	}
	wantContains(t, "os._exit(5) --json", r.String(), "status 5")

	// A signal from outside: kill -9 of the worker.
	e.must(0, "exec", "doomed", "delta_name = 4")
	s := e.session("doomed")
	if err := syscall.Kill(s.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", s.PID, err)
	}
	if !waitFor(10*time.Second, func() bool { return e.session("doomed").State == "dead" }) {
		t.Errorf("sessions still shows doomed alive 10 s after kill -9 of its worker: %+v", e.session("doomed"))
	}
	out, errOut, code = e.run("wait", "doomed")
	if code != 1 {
		t.Errorf("wait after kill -9: exit %d, want 1\n%s%s", code, out, errOut)
	}
	wantContains(t, "wait after kill -9", out+errOut, "signal 9", "delta_name")
	r = e.runJSON("--label", "bob", "exec", "doomed", "1")
	lost := strings.Join(r.notesOf("lost"), "\n")
	wantContains(t, "loss note after kill -9", lost, "signal 9", "delta_name", transcript)
	report(t, "4 Faults", "the runtime is SIGKILLed in the middle of a cell",
		"the cell is reported dead with signal 9; the next exec starts fresh and opens with: %q", lost)

	// polyrepl kill, then wait and interrupt.
	e.must(0, "exec", "doomed", "epsilon_name = 5")
	out, _ = e.must(0, "kill", "doomed")
	wantContains(t, "kill", out, "epsilon_name")
	// The killer was told what was lost by kill; a client that was not
	// is told it by its first refusal.
	for _, c := range []struct {
		label, cmd string
		want       []string
	}{
		{"", "wait", []string{"killed by "}},
		{"carol", "interrupt", []string{"killed by ", "epsilon_name"}},
		{"carol", "wait", []string{"killed by "}},
	} {
		args := []string{c.cmd, "doomed"}
		if c.label != "" {
			args = append([]string{"--label", c.label}, args...)
		}
		out, errOut, code := e.run(args...)
		if code != 1 {
			t.Errorf("%s on a killed session: exit %d, want 1\n%s%s", c.cmd, code, out, errOut)
		}
		wantContains(t, c.cmd+" on a killed session by "+c.label, out+errOut, c.want...)
		if c.label == "" || c.cmd == "wait" {
			if strings.Contains(out+errOut, "epsilon_name") {
				t.Errorf("%s by %q told the loss again: %s%s", c.cmd, c.label, out, errOut)
			}
		}
	}
}

// TestKillEndsWholeTree checks that kill, restart and stop end every
// process of a session — children, double-forked grandchildren, children
// in a new session, children ignoring SIGTERM — and that restart leaves a
// fresh namespace and stop says which sessions it ended.
func TestKillEndsWholeTree(t *testing.T) {
	needPython(t)
	t.Parallel()
	spawners := []struct{ name, code string }{
		{"Popen", "import subprocess\np = subprocess.Popen(['sleep', '1000'])"},
		{"double fork", "import os\nos.system('(sleep 1000 &)')"},
		{"setsid", "os.system('setsid sleep 1000 &')"},
		{"ignores TERM", `os.system("sh -c 'trap \"\" TERM; sleep 1000' &")`},
	}
	for _, how := range []string{"kill", "restart", "stop"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			name := "tree-" + how
			e.must(0, "exec", name, "x = 1")
			for _, sp := range spawners {
				if out, errOut, code := e.run("exec", name, sp.code, "-t", "20"); code != 0 {
					t.Fatalf("%s: exit %d\n%s%s", sp.name, code, out, errOut)
				}
			}
			gen := e.session(name).Generation
			sleeps := func() int {
				n := 0
				for _, p := range e.generation(gen) {
					if p.Cmdline == "sleep 1000" {
						n++
					}
				}
				return n
			}
			if !waitFor(10*time.Second, func() bool { return sleeps() >= len(spawners) }) {
				t.Fatalf("want %d `sleep 1000` processes of generation %s, found:%s", len(spawners), gen, proctest.Describe(e.generation(gen)))
			}

			args := []string{how, name}
			if how == "stop" {
				args = []string{"stop"}
			}
			out, _ := e.must(0, args...)
			// The command returns once the tree is verified gone.
			left := e.generation(gen)
			if len(left) > 0 {
				t.Errorf("after %s, processes of generation %s remain:%s", how, gen, proctest.Describe(left))
			}
			report(t, "1 Load and floods", "a cell's children that outlive it, double-fork, setsid or ignore SIGTERM, then `"+how+"`",
				"%d children ended with the session; %d processes of it left (checked by its cookie)", len(spawners), len(left))
			switch how {
			case "restart":
				s := e.session(name)
				if s.Generation == gen || s.State != "idle" {
					t.Errorf("after restart: want a new idle generation, got %+v", s)
				}
				out, errOut, code := e.run("exec", name, "x")
				if code != 1 || !strings.Contains(out+errOut, "NameError") {
					t.Errorf("after restart, x is still defined: exit %d\n%s%s", code, out, errOut)
				}
			case "stop":
				wantContains(t, "stop", out, name)
			}
		})
	}
}
