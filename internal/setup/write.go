package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Result is what Write did.
type Result struct {
	// File is the file edited: the path given, or where its symlink
	// leads, since replacing a symlink would cut a dotfile manager's link.
	File string `json:"file"`
	// Created is set when there was no file before.
	Created bool `json:"created"`
	// Changed is false when the file already registered polyrepl so.
	Changed bool `json:"changed"`
	// Backup is the copy of the file as it was, beside it ("" when
	// nothing was changed or there was no file).
	Backup string `json:"backup,omitempty"`
}

// Write registers s for c in the file at path: it makes a backup beside
// the file, writes the new content to a temporary file in the same
// directory with the old one's mode, and renames it over the old one, so
// that the file is at every moment either the old one or the new one
// whole. A file already registering s is left untouched; a file that does
// not parse is refused (a *ParseError) and left untouched.
func Write(c Client, path string, s Server, now time.Time) (Result, error) {
	file, err := resolve(path)
	if err != nil {
		return Result{}, err
	}
	r := Result{File: file}
	old, err := os.ReadFile(file)
	var info fs.FileInfo
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Created = true
	case err != nil:
		return r, fmt.Errorf("cannot read %s: %w", file, err)
	default:
		if info, err = os.Stat(file); err != nil {
			return r, fmt.Errorf("cannot read %s: %w", file, err)
		}
	}
	out, changed, err := c.Edit(old, s)
	if pe := (*ParseError)(nil); errors.As(err, &pe) {
		pe.Path = file
	}
	if err != nil || !changed {
		return r, err
	}
	mode := fs.FileMode(0o600)
	if info != nil {
		mode = info.Mode().Perm()
	}
	dir := filepath.Dir(file)
	if r.Created {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return r, fmt.Errorf("cannot create %s: %w", dir, err)
		}
	} else {
		if r.Backup, err = backup(file, old, mode, now); err != nil {
			return r, err
		}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(file)+".polyrepl-*")
	if err != nil {
		return r, fmt.Errorf("cannot write beside %s: %w", file, err)
	}
	defer os.Remove(tmp.Name()) // once renamed, there is nothing to remove
	if err := writeAll(tmp, out, mode, info); err != nil {
		return r, fmt.Errorf("cannot write %s: %w", tmp.Name(), err)
	}
	// The client may have rewritten its file meanwhile (Claude Code
	// rewrites ~/.claude.json often): then ours is stale, and renaming it
	// would undo the client's write.
	now2, err := os.ReadFile(file)
	if (err == nil) == r.Created || !bytes.Equal(now2, old) {
		return r, fmt.Errorf("%s changed while polyrepl was editing it (is the client running and writing it?); nothing was changed: run this again", file)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return r, fmt.Errorf("cannot replace %s: %w", file, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	r.Changed = true
	return r, nil
}

// resolve follows path's symlinks to the file they name, which need not
// exist yet.
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for range 40 {
		fi, err := os.Lstat(abs)
		if errors.Is(err, fs.ErrNotExist) {
			return abs, nil
		}
		if err != nil {
			return "", fmt.Errorf("cannot read %s: %w", abs, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if !fi.Mode().IsRegular() {
				return "", fmt.Errorf("%s is not a regular file; name the client's config file with --file", abs)
			}
			return abs, nil
		}
		to, err := os.Readlink(abs)
		if err != nil {
			return "", fmt.Errorf("cannot read the symlink %s: %w", abs, err)
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(abs), to)
		}
		abs = to
	}
	return "", fmt.Errorf("%s: too many symlinks", path)
}

// backup copies the old content beside file, under a name no earlier
// backup has, with the file's mode.
func backup(file string, old []byte, mode fs.FileMode, now time.Time) (string, error) {
	base := file + ".bak." + now.UTC().Format("20060102T150405Z")
	name := base
	for n := 1; ; n++ {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) && n < 100 {
			name = fmt.Sprintf("%s.%d", base, n)
			continue
		}
		if err != nil {
			return "", fmt.Errorf("cannot back up %s (nothing was changed): %w", file, err)
		}
		if err := writeAll(f, old, mode, nil); err != nil {
			os.Remove(name)
			return "", fmt.Errorf("cannot back up %s to %s (nothing was changed): %w", file, name, err)
		}
		return name, nil
	}
}

// writeAll writes b to f, gives it mode (and the owner of like, when we
// may), syncs and closes it.
func writeAll(f *os.File, b []byte, mode fs.FileMode, like fs.FileInfo) error {
	_, err := f.Write(b)
	if err == nil {
		err = f.Chmod(mode)
	}
	if st, ok := statOf(like); ok && err == nil && (int(st.Uid) != os.Getuid() || int(st.Gid) != os.Getgid()) {
		f.Chown(int(st.Uid), int(st.Gid)) // only root may; otherwise it stays ours
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func statOf(fi fs.FileInfo) (*syscall.Stat_t, bool) {
	if fi == nil {
		return nil, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return st, ok
}
