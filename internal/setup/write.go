package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/bound"
)

// Result is what Write or Remove did (with DryRun, would do).
type Result struct {
	// File is the file edited: the path given, or where its symlink
	// leads, since replacing a symlink would cut a dotfile manager's link.
	File string `json:"file"`
	// Created is set when there was no file before.
	Created bool `json:"created"`
	// Changed is false when the file already registered polyrepl so
	// (Write), or did not register it (Remove).
	Changed bool `json:"changed"`
	// Backup is the copy of the file as it was, beside it ("" when
	// nothing was changed or there was no file).
	Backup string `json:"backup,omitempty"`
	// Removed is polyrepl's entry as the file had it, which Remove took
	// out.
	Removed string `json:"removed,omitempty"`
	// Deleted is set when Remove deleted the file: it held nothing but
	// polyrepl's entry, as a --write that created it left it. Dirs are
	// the directories it deleted then, left empty.
	Deleted bool     `json:"deleted,omitempty"`
	Dirs    []string `json:"dirs_removed,omitempty"`
	// Backups are every copy polyrepl has kept of the file, oldest
	// first: Remove lists them, for the person to delete when the
	// client works as they want.
	Backups []string `json:"backups,omitempty"`
	DryRun  bool     `json:"dry_run,omitempty"`
}

// Options are how Write and Remove go about it.
type Options struct {
	Now time.Time // names a backup
	// DryRun: say what would be done, and do nothing.
	DryRun bool
	// Home bounds the directories Remove may delete when it deletes a
	// file: only empty ones strictly inside Home, as Write's MkdirAll
	// made them ("": none).
	Home string
}

// Write registers s for c in the file at path: it makes a backup beside
// the file, writes the new content to a temporary file in the same
// directory with the old one's mode, and renames it over the old one, so
// that the file is at every moment either the old one or the new one
// whole. A file already registering s is left untouched; a file that does
// not parse is refused (a *ParseError) and left untouched.
func Write(c Client, path string, s Server, o Options) (Result, error) {
	file, old, info, err := readTarget(path)
	r := Result{File: file, Created: info == nil, DryRun: o.DryRun}
	if err != nil {
		return r, err
	}
	out, changed, err := c.Edit(old, s)
	if pe := (*ParseError)(nil); errors.As(err, &pe) {
		pe.Path = file
	}
	if err != nil || !changed {
		return r, err
	}
	if o.DryRun {
		r.Changed = true
		return r, nil
	}
	return r, replace(&r, file, old, out, info, o.Now)
}

// Remove takes polyrepl's registration out of c's file at path, as
// Write puts it in: the other servers, keys, comments and layout stay, a
// backup of the file as it was is kept beside it, and the new file is
// renamed into place. A file left with nothing in it (Write created it
// for polyrepl alone) is deleted instead, with the directories Write
// made for it that are left empty. No file, or no registration in it,
// changes nothing; a file that does not parse is refused (a
// *ParseError) and left untouched.
func Remove(c Client, path string, o Options) (Result, error) {
	file, old, info, err := readTarget(path)
	r := Result{File: file, DryRun: o.DryRun}
	if err != nil {
		return r, err
	}
	r.Backups = Backups(file)
	if info == nil {
		return r, nil
	}
	out, removed, empty, err := c.Unregister(old)
	if pe := (*ParseError)(nil); errors.As(err, &pe) {
		pe.Path = file
	}
	if err != nil || removed == "" {
		return r, err
	}
	// The entry is the user's text: bounded, the cut said.
	r.Removed, _ = bound.HeadTail(removed, removedShown)
	r.Changed = true
	// A file reached through a symlink is kept: deleting it would leave
	// a dangling link in the dotfiles that made it.
	abs, _ := filepath.Abs(path)
	r.Deleted = empty && abs == file
	if o.DryRun {
		return r, nil
	}
	if !r.Deleted {
		err := replace(&r, file, old, out, info, o.Now)
		r.Backups = Backups(file)
		return r, err
	}
	if now, err := os.ReadFile(file); err != nil || !bytes.Equal(now, old) {
		return r, changedUnder(file)
	}
	if err := os.Remove(file); err != nil {
		return r, fmt.Errorf("cannot remove %s: %w", file, err)
	}
	r.Dirs = removeEmptyDirs(filepath.Dir(file), o.Home)
	return r, nil
}

// removedShown bounds the entry Remove reports taking out.
const removedShown = 4000

// readTarget resolves path and reads the file there: info is nil when
// there is none yet.
func readTarget(path string) (file string, old []byte, info fs.FileInfo, err error) {
	if file, err = resolve(path); err != nil {
		return file, nil, nil, err
	}
	old, err = os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return file, nil, nil, nil
	case err != nil:
		return file, nil, nil, fmt.Errorf("cannot read %s: %w", file, err)
	}
	if info, err = os.Stat(file); err != nil {
		return file, nil, nil, fmt.Errorf("cannot read %s: %w", file, err)
	}
	return file, old, info, nil
}

// replace puts out in place of file, which held old (info nil: there was
// no file), keeping a backup of old beside it.
func replace(r *Result, file string, old, out []byte, info fs.FileInfo, now time.Time) error {
	mode := fs.FileMode(0o600)
	if info != nil {
		mode = info.Mode().Perm()
	}
	dir := filepath.Dir(file)
	var err error
	if info == nil {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("cannot create %s: %w", dir, err)
		}
	} else if r.Backup, err = backup(file, old, mode, now); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(file)+".polyrepl-*")
	if err != nil {
		return fmt.Errorf("cannot write beside %s: %w", file, err)
	}
	defer os.Remove(tmp.Name()) // once renamed, there is nothing to remove
	if err := writeAll(tmp, out, mode, info); err != nil {
		return fmt.Errorf("cannot write %s: %w", tmp.Name(), err)
	}
	// The client may have rewritten its file meanwhile (Claude Code
	// rewrites ~/.claude.json often): then ours is stale, and renaming it
	// would undo the client's write.
	now2, err := os.ReadFile(file)
	if (err == nil) == (info == nil) || !bytes.Equal(now2, old) {
		return changedUnder(file)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return fmt.Errorf("cannot replace %s: %w", file, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	r.Changed = true
	return nil
}

func changedUnder(file string) error {
	return fmt.Errorf("%s changed while polyrepl was editing it (is the client running and writing it?); nothing was changed: run this again", file)
}

// backupName matches the names backup gives, compiled at first use
// (every process of the binary runs this package's initialisation).
var backupName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\.bak\.[0-9]{8}T[0-9]{6}Z(\.[0-9]+)?$`) })

// Backups lists the backups polyrepl made of file, oldest first.
func Backups(file string) []string {
	found, _ := filepath.Glob(globQuote(file) + ".bak.*")
	out := found[:0]
	for _, f := range found {
		if backupName().MatchString(f[len(file):]) {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if ta, tb := a[:len(file)+21], b[:len(file)+21]; ta != tb {
			return strings.Compare(ta, tb)
		}
		return len(a) - len(b) // .bak.T before .bak.T.1 before .bak.T.10
	})
	if len(out) == 0 {
		return nil
	}
	return out
}

// globQuote escapes the characters filepath.Match treats specially.
func globQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// removeEmptyDirs deletes dir and its parents while each is empty and
// strictly inside home, and lists those it deleted.
func removeEmptyDirs(dir, home string) []string {
	if home == "" {
		return nil
	}
	home = filepath.Clean(home)
	var gone []string
	for {
		rel, err := filepath.Rel(home, dir)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return gone
		}
		if os.Remove(dir) != nil {
			return gone
		}
		gone = append(gone, dir)
		dir = filepath.Dir(dir)
	}
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
