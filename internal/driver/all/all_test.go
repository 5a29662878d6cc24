package all

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/cling"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/julia"
	"github.com/polyrepl/polyrepl/internal/driver/lfortran"
	"github.com/polyrepl/polyrepl/internal/driver/matlab"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

// TestEveryRuntime checks that every runtime the issue names is linked in
// and describes itself fully to `polyrepl runtimes` and the README.
func TestEveryRuntime(t *testing.T) {
	for _, name := range []string{"python", "ipython", "r", "julia", "ghci", "ruby", "node", "bash",
		"clojure", "java", "octave", "gnuplot", "matlab", "cpp", "lfortran"} {
		d, err := driver.Lookup(name)
		if err != nil {
			t.Errorf("runtime %s: %v", name, err)
			continue
		}
		i := d.Info()
		if i.Name != name || i.EnvVar != "POLYREPL_"+strings.ToUpper(name) || !strings.HasPrefix(i.Ext, ".") ||
			len(i.Exes) == 0 || i.Needs == "" || i.Limits == "" || len(i.VersionArgs) == 0 {
			t.Errorf("runtime %s describes itself incompletely: %+v", name, i)
		}
		switch d.(type) {
		case worker.Driver:
			if i.Family != "worker" {
				t.Errorf("runtime %s is a worker but says %q", name, i.Family)
			}
		case terminal.Driver:
			if i.Family != "terminal" {
				t.Errorf("runtime %s is driven at a terminal but says %q", name, i.Family)
			}
		default:
			t.Errorf("runtime %s has an unknown driver family %T", name, d)
		}
	}
}

// TestMarksAreSplit checks that no terminal profile's mark command shows
// the mark whole, so a terminal's echo of it is never taken for the mark.
func TestMarksAreSplit(t *testing.T) {
	for _, d := range driver.All() {
		td, ok := d.(terminal.Driver)
		if !ok {
			continue
		}
		cmd := td.P.Print("polyrepl_ab", "cd_end")
		if strings.Contains(cmd, "polyrepl_abcd_end") || !strings.Contains(cmd, "polyrepl_ab") || !strings.Contains(cmd, "cd_end") {
			t.Errorf("%s: mark command %q must hold both halves apart", td.P.Name, cmd)
		}
		if td.P.Load != nil && !strings.Contains(td.P.Load("/tmp/cells/cell_1"+td.P.Ext), "/tmp/cells/cell_1"+td.P.Ext) {
			t.Errorf("%s: loader %q does not name the cell file", td.P.Name, td.P.Load("/tmp/cells/cell_1"))
		}
	}
}

// TestProfileOnly holds the runtimes that cannot be installed here
// (MATLAB, cling, LFortran) to the commands they are driven with.
func TestProfileOnly(t *testing.T) {
	for _, tc := range []struct {
		p          *terminal.Profile
		print      string
		load       string
		pty        bool
		promptSeen string
	}{
		{matlab.Profile, `fprintf('%s%s\n', 'a''', 'b');`, "run('/c/cell_1.m');", false, ">> "},
		{cling.Profile, `std::fflush(stderr); std::printf("%s%s\n", "a'", "b"); std::fflush(stdout);`, "", false, "[cling]$ "},
		{lfortran.Profile, `print '(a)', "a'" // "b"`, "", true, "> "},
	} {
		if got := tc.p.Print("a'", "b"); got != tc.print {
			t.Errorf("%s mark command %q, want %q", tc.p.Name, got, tc.print)
		}
		load := ""
		if tc.p.Load != nil {
			load = tc.p.Load("/c/cell_1" + tc.p.Ext)
		}
		if load != tc.load {
			t.Errorf("%s loader %q, want %q", tc.p.Name, load, tc.load)
		}
		if tc.p.PTY != tc.pty || tc.p.Prompt != tc.promptSeen {
			t.Errorf("%s: PTY %v prompt %q, want %v %q", tc.p.Name, tc.p.PTY, tc.p.Prompt, tc.pty, tc.promptSeen)
		}
	}
}

// TestJuliaCommandLine starts the Julia runtime with a stand-in julia that
// records its arguments, since Julia cannot be installed here: the project
// comes before the worker, which gets the sentinel last, and a julia that
// fails is reported with what it printed.
func TestJuliaCommandLine(t *testing.T) {
	dir := t.TempDir()
	args := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "julia")
	script := "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done > " + args + "\necho 'ERROR: no such package' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(dir, "proj")
	_, err := worker.Driver{R: julia.Runtime}.Start(context.Background(), driver.Spec{
		Exe: fake, Cwd: dir, Env: os.Environ(), Cookie: drivertest.Cookie("julia"),
		RuntimeDir: dir, ValueLimit: 100, Project: project,
	}, drivertest.NewRecorder())
	if err == nil || !strings.Contains(err.Error(), "exited with status 1") || !strings.Contains(err.Error(), "ERROR: no such package") {
		t.Errorf("error %v, want the exit and what julia printed", err)
	}
	b, _ := os.ReadFile(args)
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(got) != 4 || got[0] != "--history-file=no" || got[1] != "--project="+project ||
		!strings.HasSuffix(got[2], ".jl") || !strings.HasPrefix(got[3], "\x01polyrepl-end-") {
		t.Errorf("julia was started with %q", got)
	}
	worker, err := os.ReadFile(got[2])
	if err != nil || !strings.Contains(string(worker), "Revise") {
		t.Errorf("the worker file: %v", err)
	}
}

// TestErrorPatternsCompile compiles every terminal profile's error
// pattern, which is otherwise compiled at its first cell's output and
// would panic there if it were malformed.
func TestErrorPatternsCompile(t *testing.T) {
	for _, d := range driver.All() {
		if td, ok := d.(terminal.Driver); ok && td.P.Error != nil {
			td.P.Error()
		}
	}
}
