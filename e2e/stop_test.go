package e2e

import (
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// stop leaves the runtime directory as it found it: the worker programs
// and cell files the daemon wrote for its runtimes go with it. What stays
// beside where the socket was is the lock, which the next client and
// daemon use, and the log, which says why the daemon stopped.
func TestStopLeavesTheRuntimeDirectory(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	before := listTree(t, e.runtime)
	e.must(0, "exec", "py", "1")
	e.must(0, "exec", "--runtime", "sh", "shell", "true")
	var ran []string
	for _, rt := range []string{"node", "ruby", "ghci"} { // each named as its executable
		if lookPath(rt) {
			e.must(0, "exec", "--runtime", rt, rt, "1")
			ran = append(ran, rt)
		}
	}
	during := listTree(t, e.runtime)
	if len(during) <= len(before)+3 {
		t.Fatalf("the daemon wrote nothing for its runtimes (%v ran)? %v", ran, during)
	}
	e.must(0, "stop")
	after := listTree(t, e.runtime)
	want := append(before, "polyrepl", "polyrepl/daemon.lock", "polyrepl/daemon.log")
	slices.Sort(want)
	if !slices.Equal(after, want) {
		t.Errorf("after stop the runtime directory holds %v, want %v (while running: %v)", after, want, during)
	}
}

func lookPath(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// listTree lists every path under root, relative to it, sorted.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(root, path); rel != "." {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
