package client

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/limit"
)

// SpawnInput is how a new session was asked for, as the person or model
// typed it: the CLI's flags and the MCP exec tool's arguments are the same
// inputs, so one function reads both. Paths may be relative to Base.
type SpawnInput struct {
	Runtime string
	Exe     string
	Python  string // an Exe that is only for Python and IPython sessions
	Cwd     string // default Base
	Project string
	Memory  string // 512M, 2G; "" is the daemon's default
	// Kernel names a Jupyter kernel: the runtime jupyter:Kernel.
	Kernel string
	// Gateway is the URL of a Jupyter gateway to run the kernel on;
	// GatewayHTTP allows http:// to another host.
	Gateway     string
	GatewayHTTP bool
	Env         []string
	// Base is where the asker stands: the CLI's working directory, the
	// directory the MCP server was launched in. Relative paths are taken
	// from it, not from Cwd.
	Base string
}

// SpawnErrorKind tells what was wrong with one input of a SpawnInput.
type SpawnErrorKind int

const (
	// SpawnNoDir: Field (cwd, project) names no existing directory.
	SpawnNoDir SpawnErrorKind = iota + 1
	// SpawnConflict: Field and Other name different executables.
	SpawnConflict
	// SpawnNotPython: Field (python) was given for a Value runtime
	// other than Python and IPython.
	SpawnNotPython
	// SpawnBadValue: Field (memory) could not be read; Err says why.
	SpawnBadValue
	// SpawnNoBase: a relative Field could not be resolved, for Base is
	// unknown; Err says why.
	SpawnNoBase
	// SpawnNotJupyter: Field (kernel, gateway) is for Jupyter kernels,
	// and the runtime asked for is Value.
	SpawnNotJupyter
)

// SpawnError is a refusal of one input before anything is sent. It names
// the input by Field ("cwd", "exe", "python", "project", "memory"), and
// each edge words it: the CLI as a flag (--cwd), the MCP server as an
// argument (cwd).
type SpawnError struct {
	Kind  SpawnErrorKind
	Field string
	Other string // the other input of a SpawnConflict
	Value string
	Err   error
}

// Error words the refusal with the bare input names, for logs and tests;
// people and models are told it by cli and mcp in their own terms.
func (e *SpawnError) Error() string {
	switch e.Kind {
	case SpawnNoDir:
		what := "working"
		if e.Field == "project" {
			what = "project"
		}
		return fmt.Sprintf("the %s directory %s does not exist or is not a directory", what, e.Value)
	case SpawnConflict:
		return fmt.Sprintf("%s and %s name different executables", e.Field, e.Other)
	case SpawnNotPython:
		return fmt.Sprintf("%s is for Python and IPython sessions, not %s", e.Field, e.Value)
	case SpawnNotJupyter:
		return fmt.Sprintf("%s is for Jupyter kernels, not the runtime %s", e.Field, e.Value)
	}
	return fmt.Sprintf("cannot use %s %q: %v", e.Field, e.Value, e.Err)
}

func (e *SpawnError) Unwrap() error { return e.Err }

// BuildSpawn checks in and resolves it into the api.Spawn of a new
// session: every relative path made absolute from in.Base, the directories
// checked to exist, python and exe reconciled, the memory limit read. An
// exe that is a bare name stays one, for the daemon to find on the
// session's PATH.
func BuildSpawn(in SpawnInput) (api.Spawn, error) {
	// The runtime as the daemon keeps it: R is r, nodejs is node.
	sp := api.Spawn{Runtime: driver.Canonical(in.Runtime), Env: in.Env, Gateway: strings.TrimSpace(in.Gateway), GatewayHTTP: in.GatewayHTTP}
	if in.Kernel != "" {
		if sp.Runtime != "" && sp.Runtime != api.JupyterPrefix+in.Kernel {
			return sp, &SpawnError{Kind: SpawnNotJupyter, Field: "kernel", Value: in.Runtime}
		}
		sp.Runtime = api.JupyterPrefix + in.Kernel
	}
	if sp.Gateway != "" && sp.Runtime != "" && !strings.HasPrefix(sp.Runtime, api.JupyterPrefix) {
		// With no runtime named, the session may exist already: the
		// daemon says whether a new one would be a kernel.
		return sp, &SpawnError{Kind: SpawnNotJupyter, Field: "gateway", Value: sp.Runtime}
	}
	exe := in.Exe
	if in.Python != "" {
		if exe != "" && exe != in.Python {
			return sp, &SpawnError{Kind: SpawnConflict, Field: "python", Other: "exe", Value: in.Python}
		}
		if !pythonRuntime(sp.Runtime) {
			return sp, &SpawnError{Kind: SpawnNotPython, Field: "python", Value: sp.Runtime}
		}
		exe = in.Python
		if sp.Runtime == "" {
			// --python names a Python: after a kill of an R session of
			// that name, it must not start R with a Python executable.
			sp.Runtime = api.DefaultRuntime
		}
	}
	var err error
	if strings.ContainsRune(exe, '/') {
		field := "exe"
		if in.Python != "" {
			field = "python"
		}
		if sp.Exe, err = resolve(in.Base, field, exe); err != nil {
			return sp, err
		}
	} else {
		sp.Exe = exe
	}
	cwd := in.Cwd
	if cwd == "" {
		cwd = in.Base
	}
	if sp.Cwd, err = existingDir(in.Base, "cwd", cwd); err != nil {
		return sp, err
	}
	sp.CwdAsked = in.Cwd != ""
	if in.Project != "" {
		if sp.Project, err = existingDir(in.Base, "project", in.Project); err != nil {
			return sp, err
		}
	}
	if in.Memory != "" {
		if sp.Memory, err = limit.Parse(in.Memory); err != nil {
			return sp, &SpawnError{Kind: SpawnBadValue, Field: "memory", Value: in.Memory, Err: err}
		}
	}
	return sp, nil
}

// pythonRuntime says whether --python names the executable of a session
// of runtime: Python's, and IPython's (IPython run from that Python).
func pythonRuntime(runtime string) bool {
	return runtime == "" || runtime == api.DefaultRuntime || runtime == "ipython"
}

// resolve makes path absolute from base.
func resolve(base, field, path string) (string, error) {
	if filepath.IsAbs(path) {
		return filepath.Clean(path), nil
	}
	if base == "" || !filepath.IsAbs(base) {
		return "", &SpawnError{Kind: SpawnNoBase, Field: field, Value: path, Err: fmt.Errorf("the current directory is unknown")}
	}
	return filepath.Join(base, path), nil
}

// existingDir resolves path and checks that it is a directory.
func existingDir(base, field, path string) (string, error) {
	dir, err := resolve(base, field, path)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", &SpawnError{Kind: SpawnNoDir, Field: field, Value: dir}
	}
	return dir, nil
}
