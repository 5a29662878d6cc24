package jupyter

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/api"
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
		entries, err := readDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if seen[name] || !validName(name) {
				continue
			}
			s, err := readSpec(filepath.Join(dir, name), name)
			if errors.Is(err, errNoSpec) {
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

// readDir lists a kernels directory, opened without blocking: a named
// pipe where a directory should be is refused at once, not waited on.
func readDir(dir string) ([]os.DirEntry, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	return f.ReadDir(-1)
}

// FindSpec finds the kernel named name, or says which kernels there are
// and where polyrepl looked.
func FindSpec(name string, env []string, cwd string) (Spec, error) {
	if !validName(name) {
		return Spec{}, fmt.Errorf("%q is not a kernel name (letters, digits, '.', '_' and '-')", name)
	}
	for _, dir := range SpecDirs(env, cwd) {
		s, err := readSpec(filepath.Join(dir, name), name)
		if errors.Is(err, errNoSpec) {
			continue
		}
		return s, err
	}
	specs, broken := Specs(env, cwd)
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	have := "no kernels are installed"
	if len(names) > 0 {
		have = "the installed kernels are " + strings.Join(names, ", ")
	}
	for i, b := range broken {
		if i == 3 {
			have += fmt.Sprintf("; and %d more cannot be used", len(broken)-i)
			break
		}
		have += "; " + label(b.Err.Error(), maxSpecProblem)
	}
	return Spec{}, fmt.Errorf("no Jupyter kernel named %q: %s (looked in %s)",
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

// Bounds on a kernel.json, which anyone who can write a kernels
// directory on the search path controls: the file is read only when it
// is a regular file of at most maxSpecBytes, and the texts polyrepl
// shows from it are cut, saying so.
const (
	maxSpecBytes   = 64 << 10
	maxLabelChars  = 200  // display_name, language, interrupt_mode
	maxArgs        = 256  // argv elements
	maxSpecProblem = 2000 // the reason a kernel.json cannot be used, in a listing
)

// errNoSpec says a directory holds no kernel.json: not a kernel, and
// not a fault.
var errNoSpec = errors.New("no kernel.json")

// readSpec reads dir/kernel.json; an error satisfying
// errors.Is(err, errNoSpec) says there is none. It follows symbolic
// links (kernels are often installed as links into an environment) but
// reads only a regular file: the file is opened without blocking, so
// that a named pipe never waits for a writer, and checked by fstat
// before a byte is read, so that a device such as /dev/zero is not read
// at all; a file over maxSpecBytes is refused without being read whole.
// Every other error names the file and says what is wrong with it.
func readSpec(dir, name string) (Spec, error) {
	path := filepath.Join(dir, "kernel.json")
	b, err := readSpecFile(path)
	if err != nil {
		if errors.Is(err, errNoSpec) {
			return Spec{}, err
		}
		return Spec{}, fmt.Errorf("the kernel %s cannot be used: %w", name, err)
	}
	s, err := decodeSpec(b)
	if err != nil {
		return Spec{}, fmt.Errorf("the kernel %s cannot be used: %s %w", name, path, err)
	}
	s.Name, s.Dir = name, dir
	if s.DisplayName == "" {
		s.DisplayName = name
	}
	return s, nil
}

// readSpecFile reads a kernel.json that is a regular file of at most
// maxSpecBytes, never blocking on what the path turns out to be.
func readSpecFile(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
		return nil, errNoSpec
	case errors.Is(err, unix.ELOOP):
		return nil, fmt.Errorf("%s is a loop of symbolic links", path)
	case err != nil:
		return nil, fmt.Errorf("cannot open %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, fileKind(fi.Mode()))
	}
	if fi.Size() > maxSpecBytes {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d a kernel.json may have", path, fi.Size(), maxSpecBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if len(b) > maxSpecBytes {
		return nil, fmt.Errorf("%s grew past the %d bytes a kernel.json may have while it was read", path, maxSpecBytes)
	}
	return b, nil
}

// fileKind names what a path that is not a regular file is.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file (mode " + m.String() + ")"
}

// decodeSpec reads a kernel.json's bytes (at most maxSpecBytes); the
// error completes a sentence that starts with the file's path. Texts
// shown to people are cut to maxLabelChars, saying so.
func decodeSpec(b []byte) (Spec, error) {
	var s Spec
	if err := json.Unmarshal(b, &s); err != nil {
		return Spec{}, fmt.Errorf("is not valid JSON: %s", label(err.Error(), maxLabelChars))
	}
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return Spec{}, errors.New("has no argv (the command that starts the kernel)")
	}
	if len(s.Argv) > maxArgs {
		return Spec{}, fmt.Errorf("has %d argv elements, more than the %d polyrepl starts a kernel with", len(s.Argv), maxArgs)
	}
	for _, a := range s.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return Spec{}, errors.New("has a NUL byte in its argv")
		}
	}
	switch s.InterruptMode {
	case "", "signal", "message":
	default:
		return Spec{}, fmt.Errorf("has interrupt_mode %q, not signal or message", label(s.InterruptMode, maxLabelChars))
	}
	s.DisplayName = label(s.DisplayName, maxLabelChars)
	s.Language = label(s.Language, maxLabelChars)
	return s, nil
}

// label bounds a one-line text that came from outside (a kernel's
// display name, a gateway's word) as api.Clip does: valid UTF-8, at most
// n characters kept, and the cut said after them.
func label(s string, n int) string { return api.Clip(s, n, "text") }

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
	return fmt.Errorf("%q is not a kernel name (letters, digits, '.', '_' and '-')", name)
}
