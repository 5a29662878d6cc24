package driver

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Survey is what `polyrepl runtimes` and the MCP runtimes tool tell: every
// registered runtime, the executable a new session would start with env
// in cwd, whether it is there, and its version — asked of each found one
// in parallel, so the slowest (a JVM) sets the time, not the sum.
func Survey(ctx context.Context, env []string, cwd string) []api.RuntimeInfo {
	drivers := All()
	out := make([]api.RuntimeInfo, len(drivers))
	var wg sync.WaitGroup
	for i, d := range drivers {
		info := d.Info()
		r := api.RuntimeInfo{Name: info.Name, Family: info.Family, EnvVar: info.EnvVar, Needs: info.Needs, Limits: info.Limits,
			Forks: info.Forks, NoFork: info.NoFork}
		r.Exe = info.DefaultExe(env, cwd)
		path, err := LookPath(r.Exe, env, cwd)
		if err != nil {
			r.Problem = err.Error()
			out[i] = r
			continue
		}
		r.Path, r.Found = path, true
		out[i] = r
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i].Version = versionOf(ctx, path, info.VersionArgs)
		}()
	}
	mu.Lock()
	fams := append([]Family(nil), families...)
	mu.Unlock()
	for _, f := range fams {
		if f.Survey != nil {
			out = append(out, f.Survey(ctx, env, cwd)...)
		}
	}
	wg.Wait()
	return out
}

// versionOf runs an executable's version command and keeps the first
// line; a command that hangs is given 10 seconds.
func versionOf(ctx context.Context, path string, args []string) string {
	if len(args) == 0 {
		return "?"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if err != nil && line == "" {
		return "? (" + err.Error() + ")"
	}
	return strings.TrimSpace(line)
}
