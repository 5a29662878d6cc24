package daemon

import (
	"bufio"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLinksNoRuntime: the daemon's packages link no runtime. Drivers live
// where they run, in the holders, which the binary (cmd/polyrepl) links
// them into; a session's runtime facts come in its holder's hello. So no
// package the daemon or the session manager links, followed through
// every import inside the module (every non-test file, whatever its
// build tags), imports anything under internal/driver/ but
// internal/driver itself: the registry and the types. None of its
// subpackages is for the daemon: each is a runtime (python, r…), a
// family's machinery that starts and reads runtime processes (worker,
// terminal, console, jupyter), the list that links them all (all), or a
// test helper (drivertest). Tests may link drivers.
func TestLinksNoRuntime(t *testing.T) {
	root, module := moduleRoot(t)
	driverPkg := module + "/internal/driver"
	type step struct{ pkg, from string }
	seen := map[string]string{} // package → the package that imports it
	queue := []step{{module + "/internal/daemon", ""}, {module + "/internal/session", ""}}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		if _, ok := seen[st.pkg]; ok {
			continue
		}
		seen[st.pkg] = st.from
		if strings.HasPrefix(st.pkg, driverPkg+"/") {
			t.Errorf("the daemon links runtime package %s, through %s: drivers belong to the holders, which cmd/polyrepl links them into",
				st.pkg, chain(seen, st.from))
			continue
		}
		for _, imp := range imports(t, filepath.Join(root, strings.TrimPrefix(st.pkg, module))) {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				queue = append(queue, step{imp, st.pkg})
			}
		}
	}
	if len(seen) < 5 {
		t.Fatalf("only %d packages followed from the daemon's: the walk is broken", len(seen))
	}
}

// chain is the import path from a root to pkg, "a → b → pkg".
func chain(seen map[string]string, pkg string) string {
	var c []string
	for p := pkg; p != ""; p = seen[p] {
		c = append(c, p)
		if len(c) > 100 {
			break
		}
	}
	slices.Reverse(c)
	return strings.Join(c, " → ")
}

// imports are the packages the non-test Go files in dir import.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, is := range af.Imports {
			p, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
	}
	return out
}

// moduleRoot finds the module's directory and path from this package's.
func moduleRoot(t *testing.T) (dir, module string) {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "module "); ok {
			return dir, strings.TrimSpace(m)
		}
	}
	t.Fatal("go.mod names no module")
	return "", ""
}
