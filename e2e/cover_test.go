package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// What the e2e tests exercise runs in the polyrepl binary's processes
// (CLI, daemon, holders, MCP server), not in the test binary, so
// `go test -cover` alone would count none of it. When coverage is asked
// for, TestMain builds the binary with -cover for every package of the
// module, and its processes write their counters into one directory
// (GOCOVERDIR). Otherwise the binary is built as usual: an instrumented
// build takes longer and its processes write files at exit.
//
// Asked for with go test's -cover (or -coverprofile, -coverpkg), or with
// $POLYREPL_E2E_COVER naming a directory that keeps the counters for
// `go tool covdata` (merged, say, with the unit tests' `-test.gocoverdir`).
// At the end TestMain prints `go tool covdata percent` of the binary's
// processes (go test shows it with -v), and adds them to -coverprofile's
// profile, so that `go tool cover -func` and `-html` of the profile count
// what the unit tests and the e2e tests covered together.
//
// go test's own "coverage:" line for this package cannot include them:
// the test binary reads only counters of its own build (see
// internal/coverage/cfile.ProcessCoverTestDir).

// coverVar names the directory to keep the binary's counters in.
const coverVar = "POLYREPL_E2E_COVER"

// modulePackages is what the binary's coverage counts.
const modulePackages = "github.com/polyrepl/polyrepl/..."

// cover is the coverage of the binary's processes, when asked for.
type cover struct {
	dir  string // GOCOVERDIR of every process of the binary
	keep bool   // the user's directory: left in place
	mode string // set, count or atomic: go test's, so that profiles merge
}

// coverage is the run's, or nil when no coverage was asked for.
var coverage *cover

// startCover prepares the counters' directory and sets GOCOVERDIR for
// every process the tests start, when coverage is asked for.
func startCover() (*cover, error) {
	c := &cover{dir: os.Getenv(coverVar), mode: testing.CoverMode()}
	if c.dir == "" && c.mode == "" {
		return nil, nil
	}
	if c.mode == "" {
		c.mode = "set" // go test -cover's, to merge with unit tests' counters
	}
	if c.dir != "" {
		abs, err := filepath.Abs(c.dir)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, fmt.Errorf("%s: %w", coverVar, err)
		}
		c.dir, c.keep = abs, true
	} else {
		d, err := os.MkdirTemp("", "prcover")
		if err != nil {
			return nil, err
		}
		c.dir = d
	}
	// Processes some tests run as another user write here too.
	if err := os.Chmod(c.dir, 0o777); err != nil {
		c.remove()
		return nil, err
	}
	// Every process a test starts inherits it: newEnv's worlds keep it,
	// and the daemon and holders inherit their starter's environment.
	// A test that starts the binary with an environment of its own adds
	// coverVars.
	os.Setenv("GOCOVERDIR", c.dir)
	return c, nil
}

// buildArgs are go build's arguments for an instrumented binary.
func (c *cover) buildArgs() []string {
	if c == nil {
		return nil
	}
	return []string{"-cover", "-covermode=" + c.mode, "-coverpkg=" + modulePackages}
}

// coverVars is what an environment a test makes from nothing adds so that
// the binary's processes write their counters (an instrumented binary
// without GOCOVERDIR says so on its stderr): nothing unless coverage was
// asked for.
func coverVars() []string {
	if coverage == nil {
		return nil
	}
	return []string{"GOCOVERDIR=" + coverage.dir}
}

// end prints what the binary's processes covered and adds it to the test
// binary's -coverprofile. Processes killed by SIGKILL wrote no counters,
// which only leaves their part out.
func (c *cover) end() error {
	if c == nil {
		return nil
	}
	percent, err := covdata("percent", "-i", c.dir, "-pkg", modulePackages)
	if err != nil {
		return err
	}
	fmt.Printf("e2e: the polyrepl binary's processes covered (go tool covdata percent -i %s):\n%s", c.dir, percent)
	if c.keep {
		fmt.Printf("e2e: their counters are in %s (%s)\n", c.dir, coverVar)
	}
	profile := testFlag("test.coverprofile")
	if profile == "" {
		return nil
	}
	if !filepath.IsAbs(profile) {
		if out := testFlag("test.outputdir"); out != "" {
			profile = filepath.Join(out, profile)
		}
	}
	text := filepath.Join(c.dir, "e2e.cover.txt")
	if c.keep {
		f, err := os.CreateTemp("", "pre2ecover")
		if err != nil {
			return err
		}
		f.Close()
		text = f.Name()
		defer os.Remove(text)
	}
	if _, err := covdata("textfmt", "-i", c.dir, "-pkg", modulePackages, "-o", text); err != nil {
		return err
	}
	return appendProfile(profile, text)
}

// appendProfile adds the blocks of the text profile from (its mode line
// left out) to the profile at to, whose mode is the same.
func appendProfile(to, from string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	_, blocks, ok := bytes.Cut(b, []byte("\n"))
	if !ok || !bytes.HasPrefix(b, []byte("mode: ")) {
		return fmt.Errorf("%s is no coverage profile: %.100q", from, b)
	}
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("adding the binary's coverage to the profile: %w", err)
	}
	if _, err := f.Write(blocks); err != nil {
		f.Close()
		return fmt.Errorf("adding the binary's coverage to the profile: %w", err)
	}
	return f.Close()
}

// remove removes a counters' directory of the harness's own.
func (c *cover) remove() {
	if c != nil && !c.keep {
		os.RemoveAll(c.dir)
	}
}

// covdata runs `go tool covdata` with args.
func covdata(args ...string) (string, error) {
	out, err := exec.Command("go", append([]string{"tool", "covdata"}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go tool covdata %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// testFlag is the value of one of go test's flags to the test binary.
func testFlag(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}
