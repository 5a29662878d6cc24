package client

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
	_ "github.com/polyrepl/polyrepl/internal/driver/all" // the runtimes' names
)

// The CLI's flags and the MCP exec tool's arguments become a session's
// spawn the same way: relative paths taken from where the asker stands,
// directories checked, python and exe reconciled, the memory size read.
func TestBuildSpawn(t *testing.T) {
	base := t.TempDir()
	sub := filepath.Join(base, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"A=1"}
	for _, tc := range []struct {
		name string
		in   SpawnInput
		want api.Spawn
		kind SpawnErrorKind
		fld  string
	}{
		{name: "defaults", in: SpawnInput{Base: base, Env: env}, want: api.Spawn{Cwd: base, Env: env}},
		{name: "relative cwd", in: SpawnInput{Base: base, Cwd: "sub"}, want: api.Spawn{Cwd: sub, CwdAsked: true}},
		{name: "absolute cwd", in: SpawnInput{Base: "/", Cwd: sub}, want: api.Spawn{Cwd: sub, CwdAsked: true}},
		{name: "missing cwd", in: SpawnInput{Base: base, Cwd: "nosuch"}, kind: SpawnNoDir, fld: "cwd"},
		{name: "cwd is a file", in: SpawnInput{Base: "/", Cwd: "/etc/passwd"}, kind: SpawnNoDir, fld: "cwd"},
		{name: "no base", in: SpawnInput{}, kind: SpawnNoBase, fld: "cwd"},
		{name: "bare exe stays bare", in: SpawnInput{Base: base, Exe: "python3.12"}, want: api.Spawn{Cwd: base, Exe: "python3.12"}},
		{name: "relative exe from base, not cwd", in: SpawnInput{Base: base, Cwd: "sub", Exe: "./venv/bin/python"}, want: api.Spawn{Cwd: sub, CwdAsked: true, Exe: filepath.Join(base, "venv/bin/python")}},
		{name: "python is the exe, and names a python session", in: SpawnInput{Base: base, Python: "/usr/bin/python3"}, want: api.Spawn{Runtime: "python", Cwd: base, Exe: "/usr/bin/python3"}},
		{name: "python and the same exe", in: SpawnInput{Base: base, Python: "py", Exe: "py"}, want: api.Spawn{Runtime: "python", Cwd: base, Exe: "py"}},
		{name: "python and another exe", in: SpawnInput{Base: base, Python: "py", Exe: "other"}, kind: SpawnConflict, fld: "python"},
		{name: "python for R", in: SpawnInput{Base: base, Python: "py", Runtime: "r"}, kind: SpawnNotPython, fld: "python"},
		{name: "python for python", in: SpawnInput{Base: base, Python: "py", Runtime: "python"}, want: api.Spawn{Runtime: "python", Cwd: base, Exe: "py"}},
		{name: "python for ipython", in: SpawnInput{Base: base, Python: "py", Runtime: "ipython"}, want: api.Spawn{Runtime: "ipython", Cwd: base, Exe: "py"}},
		{name: "python for Python", in: SpawnInput{Base: base, Python: "py", Runtime: "Python"}, want: api.Spawn{Runtime: "python", Cwd: base, Exe: "py"}},
		{name: "runtime R is r", in: SpawnInput{Base: base, Runtime: "R"}, want: api.Spawn{Runtime: "r", Cwd: base}},
		{name: "runtime nodejs is node", in: SpawnInput{Base: base, Runtime: "nodejs"}, want: api.Spawn{Runtime: "node", Cwd: base}},
		{name: "python for nodejs", in: SpawnInput{Base: base, Python: "py", Runtime: "nodejs"}, kind: SpawnNotPython, fld: "python"},
		{name: "project", in: SpawnInput{Base: base, Project: "sub", Runtime: "julia"}, want: api.Spawn{Runtime: "julia", Cwd: base, Project: sub}},
		{name: "missing project", in: SpawnInput{Base: base, Project: "nosuch"}, kind: SpawnNoDir, fld: "project"},
		{name: "memory", in: SpawnInput{Base: base, Memory: "512M"}, want: api.Spawn{Cwd: base, Memory: 512 << 20}},
		{name: "bad memory", in: SpawnInput{Base: base, Memory: "lots"}, kind: SpawnBadValue, fld: "memory"},
	} {
		sp, err := BuildSpawn(tc.in)
		if tc.kind != 0 {
			var se *SpawnError
			if !errors.As(err, &se) || se.Kind != tc.kind || se.Field != tc.fld {
				t.Errorf("%s: error %#v, want kind %d for %s", tc.name, err, tc.kind, tc.fld)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(sp, tc.want) {
			t.Errorf("%s: BuildSpawn = %+v, %v; want %+v", tc.name, sp, err, tc.want)
		}
	}
}
