package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// TestScripts runs the CLI's behaviour as written in testdata/script:
// each script drives the real binary (first on PATH as polyrepl) against
// its own daemon, which starts on the script's first call, on a socket and
// state directory of its own. At the end the daemon is stopped and no
// process the script caused may be left.
//
// The scripts check facts — exit status, values, the presence of an error
// and a hint line — with short regular expressions, not whole texts, so
// that rewording a message does not break them.
//
// Besides testscript's own commands, a script has:
//
//	exits N PROG [ARGS...]  run PROG like exec, and fail unless its exit status is N
func TestScripts(t *testing.T) {
	needPython(t)
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:   filepath.Join("testdata", "script"),
		Setup: scriptSetup,
		Cmds:  map[string]func(*testscript.TestScript, bool, []string){"exits": exits},
	})
}

// scriptSetup gives one script its world, as newEnv does for a test, and
// its teardown: stop the daemon, then prove nothing is left.
func scriptSetup(env *testscript.Env) error {
	var dirs []string
	for range 2 {
		// Short paths: $WORK is too long for a unix socket's.
		d, err := testenv.MkdirShort()
		if err != nil {
			return err
		}
		dirs = append(dirs, d)
	}
	tag := newTag()
	env.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	env.Setenv("USER", "tester")
	env.Setenv("LANG", "C.UTF-8")
	for _, kv := range worldVars(dirs[0], dirs[1], env.WorkDir, tag) {
		k, v, _ := strings.Cut(kv, "=")
		env.Setenv(k, v)
	}
	env.Defer(func() {
		stop := exec.Command(binary, "stop")
		stop.Env, stop.Dir = env.Vars, env.WorkDir
		if out, err := stop.CombinedOutput(); err != nil {
			env.T().Log("teardown: polyrepl stop: ", err, ": ", string(out))
		}
		left := leftovers(tag)
		for _, d := range dirs {
			os.RemoveAll(d)
		}
		if len(left) > 0 {
			env.T().Fatal("processes left behind after the script (now killed):" + proctest.Describe(left))
		}
	})
	return nil
}

// exits runs a program as exec does, keeping its output for stdout and
// stderr, and checks its exit status.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: exits N PROG [ARGS...] (it cannot be negated: name the status)")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits N PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %q is not an exit status", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s: exit status %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}
