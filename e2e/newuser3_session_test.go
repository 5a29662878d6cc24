package e2e

// What a new user tripped on, round three (issue 35), for the sessions'
// lives and records: a name keeps its runtime across a kill (5), each
// kill reports its own facts (13), a notebook shows a value once with
// all its forms (9), and a client's own session is never news from
// "before it joined", nor polyrepl's own restarts news to anyone (14).

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/testenv"
)

// After `kill rr` (an R session), `exec rr` with no runtime named starts
// R again, as the life before it was started (its directory too), and
// says so, across a daemon restart as well; the notebook export says R.
// A call that names another runtime gets it, and the creation line says
// which it replaced.
func TestNewUser3AKilledNameKeepsItsRuntime(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "r", "apt-get install r-base-core")
	dir := filepath.Join(e.home, "work")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	e.must(0, "exec", "rr", "--runtime", "r", "--cwd", dir, `x <- 1; cat("one\n")`)
	e.must(0, "kill", "rr")
	e.must(0, "stop") // the death note, not the daemon's memory, keeps the spawn

	out, errOut := e.must(0, "exec", "rr", `cat("x\n"); cat(getwd(), "\n")`)
	both := out + errOut
	wantContains(t, "exec after a kill", both, "Created session 'rr' again, started as the life before it (r ", "cwd "+dir)
	wantContains(t, "exec after a kill", out, "x\n", dir)
	wantLacks(t, "exec after a kill", both, "python", "NameError")

	path := filepath.Join(e.home, "rr.ipynb")
	e.must(0, "export", "rr", "--format", "ipynb", "-o", path)
	var nb struct {
		Metadata struct {
			Language struct {
				Name string `json:"name"`
			} `json:"language_info"`
		} `json:"metadata"`
		Cells []struct {
			Type     string `json:"cell_type"`
			Metadata struct {
				Polyrepl struct {
					Runtime string `json:"runtime"`
				} `json:"polyrepl"`
			} `json:"metadata"`
		} `json:"cells"`
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &nb); err != nil {
		t.Fatalf("the export is not JSON: %v", err)
	}
	if !strings.EqualFold(nb.Metadata.Language.Name, "r") {
		t.Errorf("the notebook's language is %q, want R's", nb.Metadata.Language.Name)
	}
	for i, c := range nb.Cells {
		if c.Type == "code" && c.Metadata.Polyrepl.Runtime != "r" {
			t.Errorf("code cell %d is labelled %q, want r", i, c.Metadata.Polyrepl.Runtime)
		}
	}

	e.must(0, "kill", "rr")
	out, errOut = e.must(0, "exec", "rr", "--runtime", "python", "1 + 1")
	wantContains(t, "exec naming another runtime after a kill", out+errOut,
		"Created session 'rr' (python ", "It replaces the r session of that name.")
	wantContains(t, "exec naming another runtime after a kill", out, "2")
	if i := e.session("rr"); i.Runtime != "python" {
		t.Errorf("after naming python the session is %s", i.Runtime)
	}

	// --python names a Python as --runtime python does: after a kill of an
	// R session it must not start R with a Python executable.
	e.must(0, "kill", "rr")
	e.must(0, "exec", "rr", "--runtime", "r", "1 + 1")
	e.must(0, "kill", "rr")
	out, errOut = e.must(0, "exec", "rr", "--python", python, "1 + 1")
	wantContains(t, "exec --python after a kill of an R session", out+errOut,
		"Created session 'rr' (python ", "It replaces the r session of that name.")
}

// kill reports its own facts: a kill of a session that had died already
// ended nothing, and says that death (its time, its cause), exiting 1 as
// the help says a dead session does; a kill of the next life reports that
// life's kill, and a kill after it that kill's time and cause.
func TestNewUser3KillOfTheDeadSaysItsDeath(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(1, "exec", "d", "import os; os._exit(3)")
	out, errOut, code := e.run("kill", "d")
	if code != 1 {
		t.Errorf("kill of a session that exited: status %d, want 1 (it had died)", code)
	}
	wantContains(t, "kill of a session that exited", errOut, "status 3")
	wantLacks(t, "kill of a session that exited", out+errOut, "Killed session", "killed by")

	e.must(0, "exec", "d", "print(1)")
	killed, _ := e.must(0, "kill", "d", "--json")
	var k struct {
		Info struct {
			Death struct {
				Cause string    `json:"cause"`
				At    time.Time `json:"at"`
			} `json:"death"`
		} `json:"info"`
	}
	if err := json.Unmarshal([]byte(killed), &k); err != nil || !strings.Contains(k.Info.Death.Cause, "killed by") {
		t.Fatalf("kill --json: %v\n%s", err, killed)
	}
	time.Sleep(1100 * time.Millisecond) // so a second's time would differ from the first's
	again, _, code := e.run("kill", "d", "--json")
	var refusal struct {
		Code  string `json:"code"`
		Death struct {
			Cause string    `json:"cause"`
			At    time.Time `json:"at"`
		} `json:"death"`
	}
	if err := json.Unmarshal([]byte(again), &refusal); err != nil || code != 1 || refusal.Code != "dead" {
		t.Fatalf("kill of a killed session: status %d, %v\n%s", code, err, again)
	}
	if !refusal.Death.At.Equal(k.Info.Death.At) || refusal.Death.Cause != k.Info.Death.Cause {
		t.Errorf("kill after a kill says the death at %s (%s), want the kill's own at %s (%s)",
			refusal.Death.At, refusal.Death.Cause, k.Info.Death.At, k.Info.Death.Cause)
	}
}

// A DataFrame's value is one notebook output, as Jupyter writes it: an
// execute_result whose bundle holds text/plain and text/html, with the
// cell's execution count; nbformat finds the notebook valid. The
// Markdown export shows the value once, its HTML linked with it.
func TestNewUser3NotebookShowsADataFrameOnce(t *testing.T) {
	needPython(t)
	t.Parallel()
	py := testenv.NeedPythonModule(t, "pandas", "Debian: apt-get install python3-pandas")
	e := newEnv(t)
	e.must(0, "exec", "df", `import pandas as pd; pd.DataFrame({"a": [1, 2], "b": [30, 4000 + 321]})`)
	path := filepath.Join(e.home, "df.ipynb")
	e.must(0, "export", "df", "--format", "ipynb", "-o", path)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		Cells []struct {
			Type    string           `json:"cell_type"`
			Outputs []map[string]any `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(raw, &nb); err != nil {
		t.Fatalf("the export is not JSON: %v", err)
	}
	var outs []map[string]any
	for _, c := range nb.Cells {
		if c.Type == "code" {
			outs = append(outs, c.Outputs...)
		}
	}
	if len(outs) != 1 || outs[0]["output_type"] != "execute_result" {
		t.Fatalf("the DataFrame's cell has outputs %v, want one execute_result", outs)
	}
	data, _ := outs[0]["data"].(map[string]any)
	if data["text/plain"] == nil || data["text/html"] == nil || outs[0]["execution_count"] != float64(1) {
		t.Errorf("the execute_result: %v, want text/plain and text/html with execution count 1", outs[0])
	}
	var html strings.Builder
	lines, _ := data["text/html"].([]any)
	for _, l := range lines {
		s, _ := l.(string)
		html.WriteString(s)
	}
	if !strings.Contains(html.String(), "<table") || !strings.Contains(html.String(), "4321") {
		t.Errorf("its text/html is %q, want the DataFrame's table", html.String())
	}
	if err := exec.Command(py, "-c", "import nbformat").Run(); err != nil {
		t.Logf("not validated: %s has no nbformat (Debian: apt-get install python3-nbformat)", py)
	} else if out, err := exec.Command(py, "-c", "import sys, nbformat; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))", path).CombinedOutput(); err != nil {
		t.Errorf("nbformat finds the notebook invalid: %v\n%s", err, out)
	}

	md, _ := e.must(0, "export", "df")
	if n := strings.Count(md, "4321"); n != 1 {
		t.Errorf("the value appears %d times in the Markdown, want once:\n%s", n, md)
	}
	wantContains(t, "the Markdown export", md, "[the value as text/html](")
	wantLacks(t, "the Markdown export", md, "[text/html 1]")
}

// A client's own session is never "before you joined": after a daemon
// SIGKILL, and after stop --keep-sessions, the client that made it and
// sent cells to it is told what others did since as news, and nobody is
// told of polyrepl's own restarts (a new daemon taking the session up),
// which log shows.
func TestNewUser3OwnSessionIsNotBeforeYouJoined(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "--label", "alice", "exec", "jk2", "x = 1")
	e.must(0, "--label", "alice", "exec", "jk2", "x += 1")
	e.killDaemon()
	out, errOut := e.must(0, "--label", "alice", "exec", "jk2", "x")
	wantLacks(t, "the creator's exec after a daemon SIGKILL", out+errOut, "before you joined", "taken up", "from other clients")
	wantContains(t, "the creator's exec after a daemon SIGKILL", out, "2")

	e.must(0, "--label", "bob", "exec", "jk2", "y = 3")
	e.must(0, "stop", "--keep-sessions")
	out, errOut = e.must(0, "--label", "alice", "exec", "jk2", "x + y")
	both := out + errOut
	wantLacks(t, "the creator's exec after stop --keep-sessions", both, "before you joined", "taken up")
	wantContains(t, "the creator's exec after stop --keep-sessions", both, "from other clients", "y = 3")

	out, errOut = e.must(0, "--label", "carol", "exec", "jk2", "x")
	wantContains(t, "a new client's first exec", out+errOut, "before you joined", "y = 3")
	wantLacks(t, "a new client's first exec", out+errOut, "taken up")

	log, _ := e.must(0, "log", "jk2")
	if n := strings.Count(log, "taken up by a new daemon"); n != 2 {
		t.Errorf("log shows %d adoptions, want the 2 restarts:\n%s", n, log)
	}
}
