// Package jupyter is the driver family for Jupyter kernels: every kernel
// installed on this machine is the runtime "jupyter:NAME", spoken to over
// its own ZeroMQ wire protocol, and a kernel on a Jupyter Server, Kernel
// Gateway or Enterprise Gateway is the same runtime with a gateway URL,
// spoken to over the gateway's REST API and channels WebSocket. Either
// way a cell is one execute_request, and what the kernel sends back
// (streams, values, displays, errors) becomes polyrepl's one result.
package jupyter

import (
	"context"
	"os"
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// runtimePrefix starts the name of every kernel's runtime.
const runtimePrefix = api.JupyterPrefix

// Family is the name `polyrepl runtimes` gives these runtimes' family.
const Family = "jupyter"

func init() {
	driver.RegisterFamily(driver.Family{
		Prefix: runtimePrefix,
		Lookup: lookup,
		Survey: survey,
		Known:  "jupyter:KERNEL (any installed Jupyter kernel)",
	})
}

// Driver starts sessions of one kernel, here or on a gateway.
type Driver struct {
	kernel   string
	language string // from the kernel.json the daemon sees, for transcripts
}

func lookup(name string) (driver.Driver, error) {
	if !validName(name) {
		return nil, errInvalidName(name)
	}
	d := Driver{kernel: name}
	cwd, _ := os.Getwd()
	if s, err := FindSpec(name, os.Environ(), cwd); err == nil {
		d.language = s.Language
	}
	return d, nil
}

// Info implements driver.Driver.
func (d Driver) Info() driver.Info {
	return driver.Info{
		Name: runtimePrefix + d.kernel, Family: Family, Ext: extOf(d.language), Lang: strings.ToLower(d.language),
		Needs:  "the Jupyter kernel " + d.kernel + " installed (jupyter kernelspec list), or a gateway that offers it",
		NoFork: "a kernel's ZeroMQ sockets and I/O threads do not survive a fork (and a gateway's kernel runs on another machine)",
		Limits: "names are listed, and vars looks, only in ipykernel and IRkernel; a gateway's kernel has no memory limit of polyrepl's",
	}
}

// Start implements driver.Driver: on the gateway the spec names, or here.
func (d Driver) Start(ctx context.Context, spec driver.Spec, h driver.Handler) (driver.Process, error) {
	var k *kernel
	var err error
	if spec.Gateway != "" {
		k, err = startGateway(ctx, spec, d.kernel, h)
	} else {
		var ks Spec
		if ks, err = FindSpec(d.kernel, spec.Env, spec.Cwd); err == nil {
			k, err = startLocal(ctx, spec, ks, h)
		}
	}
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	k.name = runtimePrefix + d.kernel
	k.mu.Unlock()
	return k, nil
}

// survey lists the installed kernels for `polyrepl runtimes`.
func survey(_ context.Context, env []string, cwd string) []api.RuntimeInfo {
	specs, broken := Specs(env, cwd)
	var out []api.RuntimeInfo
	for _, s := range specs {
		exe := label(s.Argv[0], maxLabelChars)
		r := api.RuntimeInfo{
			Name: runtimePrefix + s.Name, Family: Family, Exe: exe, Display: s.DisplayName, Language: s.Language,
			Needs: "the program its kernel.json (in " + s.Dir + ") runs: " + exe,
		}
		if path, err := driver.LookPath(s.Argv[0], env, cwd); err != nil {
			r.Problem = "its kernel.json (in " + s.Dir + ") runs " + exe + ", which cannot start here: " + label(err.Error(), maxSpecProblem)
		} else {
			r.Path, r.Found = path, true
		}
		out = append(out, r)
	}
	for _, b := range broken {
		out = append(out, api.RuntimeInfo{Name: runtimePrefix + b.Name, Family: Family, Problem: label(b.Err.Error(), maxSpecProblem)})
	}
	return out
}
