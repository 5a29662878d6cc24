package cli

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	_ "github.com/polyrepl/polyrepl/internal/driver/all" // every runtime
	"github.com/polyrepl/polyrepl/internal/driver/jupyter"
)

func init() {
	register(&command{
		name:    "runtimes",
		summary: "list every runtime, the executable it would start, and its version",
		help: `Lists every runtime polyrepl can run a session in: how it is driven, the
executable a new session would start (from $POLYREPL_<RUNTIME>, else the
usual command on your PATH), whether it was found, and its version. Every
installed Jupyter kernel is one more runtime, jupyter:NAME, listed with
its display name and language. A running daemon keeps the list until a
directory on your PATH or a Jupyter kernel directory changes, so asking
again is quick; none is started for this.

With --gateway URL (or $POLYREPL_GATEWAY), lists the kernels that Jupyter
gateway offers instead (its token from $POLYREPL_GATEWAY_TOKEN or the file
$POLYREPL_GATEWAY_TOKEN_FILE names).`,
		new: func() runner { return &runtimesCmd{} },
	})
}

type runtimesCmd struct {
	gateway     string
	gatewayHTTP bool
	json        bool
}

func (x *runtimesCmd) flags(fs *flagSet) {
	fs.String(&x.gateway, "gateway", "URL", "", "list the kernels of this Jupyter gateway")
	fs.Bool(&x.gatewayHTTP, "gateway-http", "allow an http:// gateway that is not on this machine")
	fs.Bool(&x.json, "json", "print the list as JSON")
}

func (x *runtimesCmd) run(e *env, pos []string) int {
	c := e.cmd
	if len(pos) != 0 {
		return e.usageError(c, "runtimes takes no arguments")
	}
	cwd, _ := os.Getwd()
	if x.gateway == "" {
		x.gateway = os.Getenv(api.GatewayVar)
	}
	var list []api.RuntimeInfo
	if x.gateway != "" {
		var err error
		if list, err = jupyter.GatewayRuntimes(e.ctx, x.gateway, x.gatewayHTTP, os.Environ()); err != nil {
			e.errorf("%v", err)
			return ExitUsage
		}
	} else if cwd != "" {
		// A running daemon keeps its survey until the PATH's or the
		// kernels' directories change; none is started for this.
		var err error
		if list, err = e.client.Runtimes(e.ctx, os.Environ(), cwd, jupyter.SpecDirs(os.Environ(), cwd), false); err != nil {
			list = driver.Survey(e.ctx, os.Environ(), cwd)
		}
	} else {
		list = driver.Survey(e.ctx, os.Environ(), cwd)
	}
	if x.json {
		printJSON(e.stdout, list)
		return ExitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUNTIME\tDRIVEN BY\tEXECUTABLE\tVERSION")
	var missing, broken []api.RuntimeInfo
	for _, r := range list {
		where, version := r.Path, r.Version
		if r.Display != "" {
			version = r.Display + " (" + r.Language + ")"
		}
		switch {
		case r.Found:
		case r.Family == jupyter.Family:
			where = r.Exe + " (cannot start)"
			broken = append(broken, r)
		default:
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
	for _, r := range broken {
		fmt.Fprintf(e.stdout, "\n%s: %s\n", r.Name, r.Problem)
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
