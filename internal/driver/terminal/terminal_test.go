package terminal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
)

// onTerminal is bash driven on a pseudo-terminal with a prompt: a real
// REPL that checks the terminal path (no echo, no \r added, prompts
// dropped, Ctrl-C interrupts, long cells arrive whole) without needing a
// runtime that only a terminal serves.
var onTerminal = &Profile{
	Info: driver.Info{Name: "bash-on-a-terminal", Family: "terminal", Ext: ".sh", Needs: "bash", EnvVar: "POLYREPL_TEST_BASH"},
	Args: []string{"--noediting", "--norc", "--noprofile", "-i"},
	PTY:  true,
	Setup: func(Mark) []string {
		return []string{"PS1='>> '; PS2=''; unset PROMPT_COMMAND"}
	},
	Prompt: ">> ",
	Print:  func(head, tail string) string { return fmt.Sprintf("printf '%%s%%s\\n' '%s' '%s'", head, tail) },
	Load:   func(path string) string { return ". " + path },
	Error:  nil,
}

func TestPTY(t *testing.T) {
	p, rec := drivertest.StartExe(t, Driver{P: onTerminal}, "bash")
	drivertest.Cells(t, p, rec, []drivertest.Cell{
		{Code: "echo $((6*7))", Output: "42\n"},
		{Code: "[ -t 0 ] && [ -t 1 ] && echo on a terminal", Output: "on a terminal\n"},
		{Code: "printf no-newline", Output: "no-newline"},
		{Code: "s=" + strings.Repeat("a", 5000) + "\necho ${#s}", Output: "5000\n"},
		{Code: "f() {\n  echo \"héllo $1\"\n}\nf 中文", Output: "héllo 中文\n"},
		{Code: "echo '>> not a prompt'", Output: ">> not a prompt\n"},
	})
	// Nothing comes while idle, such as a prompt after a cell: a process
	// the cell leaves behind prints a mark once the cell is over, and the
	// mark must be all that arrives.
	goFile := filepath.Join(t.TempDir(), "go")
	if r := drivertest.Run(t, p, rec, 7, "(until [ -e '"+goFile+"' ]; do sleep 0.01; done; echo idle-mark) & disown"); r.Status != "done" {
		t.Fatalf("starting the idle marker: %+v, output %q", r, rec.TakeOutput())
	}
	rec.TakeOutput() // the job's number and pid
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if out := drivertest.WaitOutput(t, rec, "idle-mark\n", "the mark printed while idle"); out != "idle-mark\n" {
		t.Errorf("output while idle: %q (a prompt?)", out)
	}
	r := drivertest.Interrupt(t, p, rec, 8, "while :; do :; done", 500*time.Millisecond)
	if r.Status != "interrupted" {
		t.Errorf("interrupt: %s", r.Status)
	}
	rec.TakeOutput()
	if drivertest.Run(t, p, rec, 9, "echo ${#s}"); rec.TakeOutput() != "5000\n" {
		t.Error("the session's state was lost by the interrupt")
	}
}

func TestStartFails(t *testing.T) {
	dir := t.TempDir()
	_, err := Driver{P: onTerminal}.Start(context.Background(), driver.Spec{
		Exe: "false", Cwd: dir, Env: os.Environ(), Cookie: drivertest.Cookie("false"), RuntimeDir: dir,
	}, drivertest.NewRecorder())
	if err == nil || !strings.Contains(err.Error(), "exited with status 1 before it was ready") || !strings.Contains(err.Error(), "$POLYREPL_TEST_BASH") {
		t.Errorf("error %v, want one saying it exited before it was ready and how to choose another", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %d files in the runtime directory", len(entries))
	}
}

func TestErrorMessage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"error: boom\n", "error: boom"},
		{"\n/c/cell_2.hs:1:1: error:\n    Variable not in scope: x\n  |\n1 | x\n  | ^\n", "/c/cell_2.hs:1:1: error:\n    Variable not in scope: x"},
		{"Execution error (ArithmeticException) at user/eval1 (cell_3.clj:1).\nDivide by zero\n", "Execution error (ArithmeticException) at user/eval1 (cell_3.clj:1).\nDivide by zero"},
		{"a\nb\nc\nd\ne\nf\ng\n", "a\nb\nc\nd\ne"},
	} {
		if got := errorMessage(tc.in); got != tc.want {
			t.Errorf("errorMessage(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRaw attaches a person's terminal: their typing is echoed and runs,
// what the runtime prints reaches them and the record as idle output, and
// cells sent meanwhile are neither echoed nor disturbed.
func TestRaw(t *testing.T) {
	p, rec := drivertest.StartExe(t, Driver{P: onTerminal}, "bash")
	raw, ok := p.(driver.RawTerminal)
	if !ok {
		t.Fatal("a process on a terminal offers no raw attach")
	}
	in, out, detach, err := raw.Raw()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := raw.Raw(); err == nil {
		t.Error("a second person could attach raw at once")
	}
	var seen strings.Builder
	read := func(want string) {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for !strings.Contains(seen.String(), want) {
			select {
			case b := <-out:
				seen.Write(b)
			case <-deadline:
				t.Fatalf("the person's terminal shows %q, want %q in it", seen.String(), want)
			}
		}
	}
	in.Write([]byte("echo typed-$((40+2))\r"))
	read("echo typed-$((40+2))\n") // echoed
	read("typed-42\n")
	// The prompt after the answer is idle output too: waiting for it
	// keeps it out of the next cell's output.
	if idle := drivertest.WaitOutput(t, rec, "typed-42\n"+onTerminal.Prompt, "the runtime's answer to typing, as output while idle"); !strings.Contains(idle, "typed-42") {
		t.Errorf("the runtime's answer to typing is not output while idle: %q", idle)
	}
	drivertest.Cells(t, p, rec, []drivertest.Cell{{Code: "echo from-a-cell", Output: "from-a-cell\n"}})
	read("from-a-cell\n")
	if strings.Contains(seen.String(), "cell_1") {
		t.Errorf("the cell's loader line was echoed to the person: %q", seen.String())
	}
	detach()
	if _, ok := <-out; ok {
		for range out {
		}
	}
	if _, _, d, err := raw.Raw(); err != nil {
		t.Errorf("attaching again after a detach: %v", err)
	} else {
		d()
	}
}
