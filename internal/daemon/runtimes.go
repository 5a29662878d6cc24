package daemon

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// Surveying the runtimes runs each one's version command: two seconds
// and more, asked again by every MCP server's runtimes tool and every
// `polyrepl runtimes`. The daemon keeps each survey for the environment
// and directory it was made for, and makes it again when a directory it
// depends on changed (what the PATH names, and the directories the
// caller names: the Jupyter kernel directories, and each kernel's own in
// them), or when it is older than
// surveyKeep: a runtime installed, removed or upgraded changes one of
// those directories.

const (
	surveyKeep    = 10 * time.Minute // at most, however still the directories
	failedKeep    = 30 * time.Second // a survey in which a version command failed (timed out under load)
	surveyEntries = 8                // environments kept
)

// surveys keeps the daemon's surveys.
type surveys struct {
	mu      sync.Mutex
	entries map[[32]byte]*survey
	// run makes a survey (driver.Survey, or a test's).
	run func(ctx context.Context, env []string, cwd string) []api.RuntimeInfo
}

// survey is one kept survey, and the state of the directories it was
// made with.
type survey struct {
	list  []api.RuntimeInfo
	stamp string
	at    time.Time
	keep  time.Duration
}

// get returns the survey for env and cwd, made now or kept.
func (s *surveys) get(ctx context.Context, env []string, cwd string, watch []string) []api.RuntimeInfo {
	key := surveyKey(env, cwd)
	stamp := dirsStamp(env, cwd, watch)
	s.mu.Lock()
	if e := s.entries[key]; e != nil && e.stamp == stamp && time.Since(e.at) < e.keep {
		s.mu.Unlock()
		return slices.Clone(e.list)
	}
	s.mu.Unlock()
	run := s.run
	if run == nil {
		run = driver.Survey
	}
	list := run(ctx, env, cwd)
	if ctx.Err() != nil {
		return list // cut short: not kept
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries == nil {
		s.entries = map[[32]byte]*survey{}
	}
	if len(s.entries) >= surveyEntries {
		var oldest [32]byte
		var at time.Time
		for k, e := range s.entries {
			if at.IsZero() || e.at.Before(at) {
				oldest, at = k, e.at
			}
		}
		delete(s.entries, oldest)
	}
	keep := surveyKeep
	for _, r := range list {
		if r.Found && strings.HasPrefix(r.Version, "? (") {
			keep = failedKeep
		}
	}
	s.entries[key] = &survey{list: slices.Clone(list), stamp: stamp, at: time.Now(), keep: keep}
	return list
}

// surveyKey tells environments apart: the directory and every variable
// (a version can depend on any: PYENV_VERSION, JAVA_HOME, …).
func surveyKey(env []string, cwd string) [32]byte {
	sorted := slices.Sorted(slices.Values(env))
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", cwd)
	for _, kv := range sorted {
		fmt.Fprintf(h, "%s\x00", kv)
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// dirsStamp is the state of the directories a survey depends on: each
// one's modification time, or its absence. A file added, removed or
// replaced in a directory changes its time.
func dirsStamp(env []string, cwd string, watch []string) string {
	var dirs []string
	for _, d := range filepath.SplitList(driver.Getenv(env, "PATH")) {
		if d == "" || !filepath.IsAbs(d) {
			d = filepath.Join(cwd, d)
		}
		dirs = append(dirs, d)
	}
	for _, d := range watch {
		if !filepath.IsAbs(d) {
			d = filepath.Join(cwd, d)
		}
		dirs = append(dirs, d)
		for _, k := range subdirs(d) {
			dirs = append(dirs, filepath.Join(d, k))
		}
	}
	b := make([]byte, 0, 64*len(dirs))
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil {
			b = fmt.Appendf(b, "%s %d\n", d, fi.ModTime().UnixNano())
		} else {
			b = fmt.Appendf(b, "%s -\n", d)
		}
	}
	return string(b)
}

// watchEntries bounds how many entries of one watched directory are
// watched: a kernels directory holds a few.
const watchEntries = 256

// subdirs lists a watched directory's entries, opened without blocking:
// a named pipe where a directory should be is passed over at once, not
// waited on.
func subdirs(dir string) []string {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	names, _ := f.Readdirnames(watchEntries)
	return names
}

// listRuntimes answers which runtimes a new session with the caller's
// environment would find.
func (d *Daemon) listRuntimes(w http.ResponseWriter, r *http.Request) {
	var req api.RuntimesRequest
	if !decode(w, r, &req) {
		return
	}
	if !filepath.IsAbs(req.Cwd) {
		refuse(w, api.ErrorReply{Code: api.CodeBadRequest, Error: fmt.Sprintf("the directory %q is not absolute", api.Clip(req.Cwd, 200, "directory")), Hint: "send the caller's working directory"})
		return
	}
	if len(req.Watch) > api.MaxWatch {
		refuse(w, api.ErrorReply{Code: api.CodeBadRequest, Error: fmt.Sprintf("%d directories to watch, over the %d a survey watches", len(req.Watch), api.MaxWatch), Hint: "name fewer directories"})
		return
	}
	reply(w, api.RuntimesReply{Runtimes: d.surveys.get(r.Context(), req.Env, req.Cwd, req.Watch)})
}
