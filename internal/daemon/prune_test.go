package daemon

import (
	"io"
	"log"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/state"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// TestOutputPrunedWhileRunning: a running daemon removes saved output
// older than outputKeep, not only when it starts, and keeps newer output.
func TestOutputPrunedWhileRunning(t *testing.T) {
	for _, k := range []string{"XDG_RUNTIME_DIR", "XDG_STATE_HOME"} {
		t.Setenv(k, testenv.ShortDir(t))
	}
	log.SetOutput(io.Discard)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	defer func(d time.Duration) { pruneEvery = d }(pruneEvery)
	pruneEvery = 20 * time.Millisecond
	d, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop("the test ended", false)

	stateDir, err := paths.StateDir()
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := paths.EnsurePrivateDir(st.OutputDir()); err != nil {
		t.Fatal(err)
	}
	old, fresh := filepath.Join(st.OutputDir(), "s-1-1.txt"), filepath.Join(st.OutputDir(), "s-2-1.txt")
	for _, f := range []string{old, fresh} {
		if err := os.WriteFile(f, []byte("output\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	then := time.Now().Add(-outputKeep - time.Hour)
	if err := os.Chtimes(old, then, then); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(old); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("output saved %s ago is still there 5 s later", time.Since(then).Round(time.Hour))
		}
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("output saved just now was removed too: %v", err)
	}
}
