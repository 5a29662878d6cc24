package paths

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Files the daemon writes under the state and runtime directories are
// opened here, never with os.OpenFile: a cell runs as the user and can
// plant a symlink or a hard link where a record or a transcript goes, and
// writing through it would append a session's code and output to whatever
// the link names. A planted file is refused, never followed or repaired.

// OpenFile opens path as os.OpenFile does with flag (os.O_RDONLY,
// os.O_WRONLY|os.O_APPEND|os.O_CREATE, …; a file it creates is 0600), but
// without following a symlink at path, and then checks that what it opened
// is a private file (see CheckFile). O_TRUNC is applied only after the
// check, so a refused file is left as it was.
func OpenFile(path string, flag int) (*os.File, error) {
	trunc := flag&os.O_TRUNC != 0
	flag &^= os.O_TRUNC
	// O_NONBLOCK: a planted FIFO must not hang the open; it is refused
	// below as not a regular file. Regular files ignore the flag.
	fd, err := unix.Open(path, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0o600)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, unsafe("refusing %s: it is a symlink, and polyrepl does not write through links in its own directories; remove it (its target is untouched)", path)
		}
		if errors.Is(err, unix.ENXIO) || errors.Is(err, unix.EISDIR) {
			return nil, unsafe("refusing %s: it is not a regular file; remove it", path)
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if err := checkStat(path, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// Back to blocking, as os.OpenFile would leave a regular file.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fcntl", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	if trunc {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// CheckFile checks, without following a symlink, that path is a private
// file of the user's: a regular file, owned by the user, closed to group
// and others, with no other name (a hard link planted to a file the user
// keeps elsewhere is as dangerous as a symlink).
func CheckFile(path string) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return unsafe("refusing %s: it is a symlink, and polyrepl does not write through links in its own directories; remove it (its target is untouched)", path)
	}
	return checkStat(path, &st)
}

// TakeFile moves a file a runtime wrote (src: it runs as the user, with
// the user's umask) to dst in a private directory, made 0600: refused,
// and src removed, unless src is a regular file of the user's with one
// name, so a link planted there moves no file of the user's elsewhere.
func TakeFile(src, dst string) error {
	defer os.Remove(src)
	var st unix.Stat_t
	if err := unix.Lstat(src, &st); err != nil {
		return &os.PathError{Op: "lstat", Path: src, Err: err}
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return unsafe("refusing %s: it is not a regular file", src)
	case int(st.Uid) != os.Getuid():
		return unsafe("refusing %s: it is owned by uid %d, not by you", src, st.Uid)
	case st.Nlink > 1:
		return unsafe("refusing %s: it has %d names (hard links)", src, st.Nlink)
	}
	if err := os.Rename(src, dst); err != nil {
		return err
	}
	fd, err := unix.Open(dst, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		os.Remove(dst)
		return &os.PathError{Op: "open", Path: dst, Err: err}
	}
	defer unix.Close(fd)
	return unix.Fchmod(fd, 0o600)
}

// checkStat is CheckFile's test of what an open found at path.
func checkStat(path string, st *unix.Stat_t) error {
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return unsafe("refusing %s: it is not a regular file; remove it", path)
	}
	if int(st.Uid) != os.Getuid() {
		return unsafe("refusing %s: it is owned by uid %d, not by you (uid %d); someone else may have planted it, remove it", path, st.Uid, os.Getuid())
	}
	if perm := st.Mode & 0o777; perm&0o077 != 0 {
		return unsafe("refusing %s: its mode is %04o, open to other users, and polyrepl keeps its files 0600; run `chmod 600 %s` if you trust its contents, or remove it", path, perm, path)
	}
	if st.Nlink > 1 {
		return unsafe("refusing %s: it has %d names (hard links), so writing to it would change a file elsewhere; remove it (the other names are untouched)", path, st.Nlink)
	}
	return nil
}

// WriteFile replaces path with data as a whole: written to a new file
// beside it, created afresh (never an existing name, so never through a
// link), then renamed over path. A crash leaves the old file or the new
// one; a symlink at path is replaced, not followed.
func WriteFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cannot save %s: %w", path, err)
	}
	return nil
}
