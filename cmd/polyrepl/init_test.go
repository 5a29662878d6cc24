package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/polyrepl/polyrepl/"

// The binary is every process's: each CLI command, each MCP server,
// the daemon and every holder run the initialisation of every package
// it links, before main, whatever the command (issue 40: `exec 1+1` as a
// process within 2x a Go hello-world). A package's initialisation here
// does only what every process needs; the rest is done at first use
// (a worker's program joined when a session starts, a pattern compiled
// when first matched). The bounds say so in bytes, never in time: this
// package's test binary links what main links, and GODEBUG=inittrace=1
// says what each package's initialisation allocated.
//
// The bounds are generous. Joined at start, the worker programs cost
// 33 to 119 KB per runtime (about 590 KB for polyrepl's packages, 805 KB
// in all); today polyrepl's packages allocate about 18 KB together, a
// runtime's package at most one map entry, and every package of the
// process (the MCP SDK's jsonschema-go, 81 KB, and encoding/gob, 27 KB,
// among them: dependencies' own initialisers, which no change here
// removes) about 220 KB.
const (
	runtimeInitMax = 4 << 10   // one package of internal/driver: its registration
	ownInitMax     = 16 << 10  // any other package of polyrepl's (cli's commands are 6 KB)
	ownTotalMax    = 48 << 10  // polyrepl's packages together
	allTotalMax    = 400 << 10 // every package the process links
)

func TestInitAllocations(t *testing.T) {
	// One line of GODEBUG=inittrace=1: a package's initialisation, the
	// bytes and objects it allocated. (Compiled here, not at this
	// package's initialisation, which is measured.)
	initLine := regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the test binary with GODEBUG=inittrace=1: %v\n%s", err, out)
	}
	var own, all, seen int
	for _, line := range strings.Split(string(out), "\n") {
		m := initLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		seen++
		pkg := m[1]
		bytes, _ := strconv.Atoi(m[2])
		all += bytes
		if !strings.HasPrefix(pkg, module) {
			continue
		}
		own += bytes
		limit, what := ownInitMax, "a package of polyrepl's"
		if strings.HasPrefix(pkg, module+"internal/driver/") {
			limit, what = runtimeInitMax, "a runtime's package"
		}
		if bytes > limit {
			t.Errorf("%s allocates %d bytes (%s objects) at initialisation, more than %s may (%d): every process pays it, "+
				"a CLI command's too; do it at first use (sync.OnceValue, a function that builds it)", pkg, bytes, m[3], what, limit)
		}
	}
	if seen == 0 {
		t.Fatalf("no inittrace line in the test binary's output:\n%s", out)
	}
	if own > ownTotalMax {
		t.Errorf("polyrepl's packages allocate %d bytes at initialisation, more than %d", own, ownTotalMax)
	}
	if all > allTotalMax {
		t.Errorf("the process allocates %d bytes at initialisation, more than %d: a dependency's initialiser grew, or one is new "+
			"(GODEBUG=inittrace=1 polyrepl version names each)", all, allTotalMax)
	}
	t.Logf("initialisation: %d packages, %d bytes in all, %d in polyrepl's", seen, all, own)
}
