package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LookPath resolves an executable the way the caller's shell would: a name
// with a slash is taken relative to cwd, a bare name is searched on the
// PATH of env (the caller's, not the daemon's).
func LookPath(name string, env []string, cwd string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("no executable named: name one, or set $POLYREPL_<RUNTIME>")
	}
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if err := isExecutable(p); err != nil {
			return "", fmt.Errorf("cannot use %s as the executable: %w", name, err)
		}
		return p, nil
	}
	path := Getenv(env, "PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		p := filepath.Join(dir, name)
		if isExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("cannot find %s on your PATH (%s): install it, or name the executable", name, path)
}

func isExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory", p)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", p)
	}
	return nil
}
