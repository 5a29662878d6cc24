package cli

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/polyrepl/polyrepl/internal/api"
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

func runRuntimes(e *env, pos []string, asJSON bool) int {
	c := e.cmd
	if len(pos) != 0 {
		return e.usageError(c, "runtimes takes no arguments")
	}
	cwd, _ := os.Getwd()
	list := driver.Survey(e.ctx, os.Environ(), cwd)
	if asJSON {
		printJSON(e.stdout, list)
		return ExitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUNTIME\tDRIVEN BY\tEXECUTABLE\tVERSION")
	var missing []api.RuntimeInfo
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

func names(list []api.RuntimeInfo) []string {
	out := make([]string, len(list))
	for i, r := range list {
		out[i] = r.Name
	}
	return out
}
