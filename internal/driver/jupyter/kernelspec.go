package jupyter

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/polyrepl/polyrepl/internal/driver"
)

// Spec is an installed kernel's kernel.json: how to start it and what it
// is.
type Spec struct {
	Name          string            `json:"-"` // its directory's name: "python3", "ir"
	Dir           string            `json:"-"` // the directory that holds kernel.json
	Argv          []string          `json:"argv"`
	DisplayName   string            `json:"display_name"`
	Language      string            `json:"language"`
	InterruptMode string            `json:"interrupt_mode"` // "signal" (the default) or "message"
	Env           map[string]string `json:"env"`
}

// SpecDirs are the directories searched for kernels, in Jupyter's order,
// for a session with environment env in cwd: $JUPYTER_PATH, the user's
// data directory, the prefix of the session's Python, then the system's.
// A name found in an earlier one hides the same name in later ones.
func SpecDirs(env []string, cwd string) []string {
	var dirs []string
	add := func(d string) {
		if d == "" {
			return
		}
		d = filepath.Join(d, "kernels")
		for _, seen := range dirs {
			if seen == d {
				return
			}
		}
		dirs = append(dirs, d)
	}
	for _, d := range filepath.SplitList(driver.Getenv(env, "JUPYTER_PATH")) {
		add(d)
	}
	add(userDataDir(env))
	if py, err := driver.LookPath("python3", env, cwd); err == nil {
		if real, err := filepath.EvalSymlinks(py); err == nil {
			py = real
		}
		// python3 in PREFIX/bin: its kernels are in PREFIX/share/jupyter.
		add(filepath.Join(filepath.Dir(filepath.Dir(py)), "share", "jupyter"))
	}
	add("/usr/local/share/jupyter")
	add("/usr/share/jupyter")
	return dirs
}

// userDataDir is Jupyter's data directory for the user: $JUPYTER_DATA_DIR,
// else the platform's place for it.
func userDataDir(env []string) string {
	if d := driver.Getenv(env, "JUPYTER_DATA_DIR"); d != "" {
		return d
	}
	home := driver.Getenv(env, "HOME")
	if runtime.GOOS == "darwin" && home != "" {
		return filepath.Join(home, "Library", "Jupyter")
	}
	if d := driver.Getenv(env, "XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "jupyter")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "share", "jupyter")
}

// Broken is an installed kernel whose kernel.json cannot be used.
type Broken struct {
	Name string
	Err  error
}

// Specs lists every kernel installed for a session with env in cwd, by
// name; broken lists those whose kernel.json cannot be used.
func Specs(env []string, cwd string) (specs []Spec, broken []Broken) {
	seen := map[string]bool{}
	for _, dir := range SpecDirs(env, cwd) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if seen[name] || !validName(name) {
				continue
			}
			s, err := readSpec(filepath.Join(dir, name), name)
			if os.IsNotExist(err) {
				continue
			}
			seen[name] = true
			if err != nil {
				broken = append(broken, Broken{Name: name, Err: err})
				continue
			}
			specs = append(specs, s)
		}
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	return specs, broken
}

// FindSpec finds the kernel named name, or says which kernels there are
// and where polyrepl looked.
func FindSpec(name string, env []string, cwd string) (Spec, error) {
	if !validName(name) {
		return Spec{}, fmt.Errorf("%q is not a kernel name (letters, digits, '.', '_' and '-')", name)
	}
	for _, dir := range SpecDirs(env, cwd) {
		s, err := readSpec(filepath.Join(dir, name), name)
		if os.IsNotExist(err) {
			continue
		}
		return s, err
	}
	specs, _ := Specs(env, cwd)
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	have := "no kernels are installed"
	if len(names) > 0 {
		have = "the installed kernels are " + strings.Join(names, ", ")
	}
	return Spec{}, fmt.Errorf("no Jupyter kernel named %q: %s (looked in %s; `polyrepl runtimes` lists them)",
		name, have, strings.Join(SpecDirs(env, cwd), ", "))
}

// validName says whether name can be a kernel's directory: Jupyter's own
// rule, which also keeps a name from leaving the kernels directory.
func validName(name string) bool {
	if name == "" || name == "." || name == ".." {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// readSpec reads dir/kernel.json; an error satisfying os.IsNotExist
// says there is none.
func readSpec(dir, name string) (Spec, error) {
	path := filepath.Join(dir, "kernel.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, err
	}
	var s Spec
	if err := json.Unmarshal(b, &s); err != nil {
		return Spec{}, fmt.Errorf("the kernel %s cannot be used: %s is not valid JSON: %v", name, path, err)
	}
	s.Name, s.Dir = name, dir
	if len(s.Argv) == 0 {
		return Spec{}, fmt.Errorf("the kernel %s cannot be used: %s has no argv", name, path)
	}
	switch s.InterruptMode {
	case "", "signal", "message":
	default:
		return Spec{}, fmt.Errorf("the kernel %s cannot be used: %s has interrupt_mode %q, not signal or message", name, path, s.InterruptMode)
	}
	if s.DisplayName == "" {
		s.DisplayName = name
	}
	return s, nil
}

// args are the kernel's argv with {connection_file} and
// {resource_dir} filled in, as Jupyter fills them.
func (s Spec) args(connFile string) []string {
	r := strings.NewReplacer("{connection_file}", connFile, "{resource_dir}", s.Dir)
	out := make([]string, len(s.Argv))
	for i, a := range s.Argv {
		out[i] = r.Replace(a)
	}
	return out
}

// extOf is the transcript's extension for a kernel's language.
func extOf(language string) string {
	switch strings.ToLower(language) {
	case "python":
		return ".py"
	case "r":
		return ".R"
	case "julia":
		return ".jl"
	case "javascript", "typescript":
		return ".js"
	case "ruby":
		return ".rb"
	case "bash", "sh", "shell":
		return ".sh"
	case "octave", "matlab":
		return ".m"
	case "c++", "cpp":
		return ".cpp"
	case "rust":
		return ".rs"
	case "haskell":
		return ".hs"
	case "scala":
		return ".scala"
	case "java":
		return ".java"
	case "go":
		return ".go"
	}
	return ".txt"
}

func errInvalidName(name string) error {
	return fmt.Errorf("%q is not a kernel name (letters, digits, '.', '_' and '-'): `polyrepl runtimes` lists the kernels", name)
}
