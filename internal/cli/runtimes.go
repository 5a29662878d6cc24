package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
	_ "github.com/polyrepl/polyrepl/internal/driver/all" // every runtime
)

func init() {
	register(&command{
		name:    "runtimes",
		summary: "list every runtime, the executable it would start, and its version",
		help: `Lists every runtime polyrepl can run a session in: how it is driven, the
executable a new session would start (from $POLYREPL_<RUNTIME>, else the
usual command on your PATH), whether it was found, and its version.`,
		new: withJSON("print the list as JSON", runRuntimes),
	})
}

// runtimeInfo is one line of `polyrepl runtimes`.
type runtimeInfo struct {
	Name    string `json:"name"`
	Family  string `json:"family"`
	Exe     string `json:"exe"`
	Path    string `json:"path,omitempty"`
	Found   bool   `json:"found"`
	Version string `json:"version,omitempty"`
	EnvVar  string `json:"env_var"`
	Needs   string `json:"needs"`
	Limits  string `json:"limits,omitempty"`
	Problem string `json:"problem,omitempty"`
}

func runRuntimes(e *env, pos []string, asJSON bool) int {
	c := e.cmd
	if len(pos) != 0 {
		return e.usageError(c, "runtimes takes no arguments")
	}
	list := listRuntimes(e.ctx)
	if asJSON {
		printJSON(e.stdout, list)
		return ExitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUNTIME\tDRIVEN BY\tEXECUTABLE\tVERSION")
	var missing []runtimeInfo
	for _, r := range list {
		where, version := r.Path, r.Version
		if !r.Found {
			where, version = r.Exe+" (not found)", "needs "+r.Needs
			missing = append(missing, r)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Family, where, version)
	}
	tw.Flush()
	if len(missing) > 0 {
		fmt.Fprintf(e.stdout, "\nNot found on your PATH: %s. Install them, or name an executable with --exe or $POLYREPL_<RUNTIME>.\n",
			strings.Join(names(missing), ", "))
	}
	return ExitOK
}

func names(list []runtimeInfo) []string {
	out := make([]string, len(list))
	for i, r := range list {
		out[i] = r.Name
	}
	return out
}

// listRuntimes resolves every runtime's executable as a new session would,
// and asks each found one its version, in parallel.
func listRuntimes(ctx context.Context) []runtimeInfo {
	cwd, _ := os.Getwd()
	envv := os.Environ()
	drivers := driver.All()
	out := make([]runtimeInfo, len(drivers))
	var wg sync.WaitGroup
	for i, d := range drivers {
		info := d.Info()
		r := runtimeInfo{Name: info.Name, Family: info.Family, EnvVar: info.EnvVar, Needs: info.Needs, Limits: info.Limits}
		r.Exe = info.DefaultExe(envv, cwd)
		path, err := driver.LookPath(r.Exe, envv, cwd)
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
	wg.Wait()
	return out
}

// versionOf runs an executable's version command and keeps the first line.
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
