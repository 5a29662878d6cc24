package daemon

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// TestSurveysKept: the runtimes are surveyed once for an environment and
// given again from memory until a directory on its PATH or a Jupyter
// kernel directory changes (issue 35 item 11: 2.1 s every call); another
// environment has its own survey, and a survey whose version command
// failed is kept only briefly.
func TestSurveysKept(t *testing.T) {
	bin, data := t.TempDir(), t.TempDir()
	kernels := filepath.Join(data, "kernels")
	if err := os.MkdirAll(filepath.Join(kernels, "k1"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin, "HOME=" + t.TempDir()}
	var runs atomic.Int32
	version := "v1"
	s := &surveys{run: func(context.Context, []string, string) []api.RuntimeInfo {
		runs.Add(1)
		return []api.RuntimeInfo{{Name: "x", Found: true, Version: version}}
	}}
	ctx := context.Background()
	get := func(env []string, want int32, why string) {
		t.Helper()
		s.get(ctx, env, "/", []string{kernels})
		if got := runs.Load(); got != want {
			t.Errorf("%s: %d surveys, want %d", why, got, want)
		}
	}
	// Directory times have a coarse grain on some file systems: move
	// them on by a second, as a change would.
	touch := func(dir string) {
		t.Helper()
		at := time.Now().Add(time.Duration(runs.Load()+1) * time.Second)
		if err := os.Chtimes(dir, at, at); err != nil {
			t.Fatal(err)
		}
	}
	get(env, 1, "the first call")
	get(env, 1, "asked again")
	touch(bin)
	get(env, 2, "after a PATH directory changed")
	get(env, 2, "asked again")
	touch(kernels)
	get(env, 3, "after the kernels directory changed")
	touch(filepath.Join(kernels, "k1"))
	get(env, 4, "after a kernel's directory changed")
	get(append(env, "PYENV_VERSION=3.12"), 5, "another environment")
	get(env, 5, "the first environment again")

	version = "? (signal: killed)"
	touch(bin)
	get(env, 6, "a survey whose version command failed")
	s.mu.Lock()
	for _, e := range s.entries {
		if e.list[0].Version == version {
			e.at = e.at.Add(-failedKeep)
		}
	}
	s.mu.Unlock()
	get(env, 7, "past the time a failed survey is kept")
}
