package paths

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A file polyrepl writes is created 0600 and appended to; a planted one
// (a symlink, a hard link, a file open to others, a FIFO, a directory) is
// refused with words that say what to do, and is left exactly as it was,
// target and mode included.
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	const appendFlags = os.O_WRONLY | os.O_APPEND | os.O_CREATE

	fresh := filepath.Join(dir, "fresh.jsonl")
	for _, line := range []string{"one\n", "two\n"} {
		f, err := OpenFile(fresh, appendFlags)
		if err != nil {
			t.Fatalf("OpenFile(new): %v", err)
		}
		f.WriteString(line)
		f.Close()
	}
	if b, _ := os.ReadFile(fresh); string(b) != "one\ntwo\n" {
		t.Errorf("appended file holds %q", b)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o600 {
		t.Errorf("a new file has mode %v, want 0600", fi.Mode().Perm())
	}
	f, err := OpenFile(fresh, os.O_WRONLY|os.O_TRUNC)
	if err != nil {
		t.Fatalf("OpenFile(O_TRUNC): %v", err)
	}
	f.Close()
	if b, _ := os.ReadFile(fresh); len(b) != 0 {
		t.Errorf("O_TRUNC left %q", b)
	}

	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(target, 0o644)
	private := filepath.Join(dir, "private")
	if err := os.WriteFile(private, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	symlink := filepath.Join(dir, "symlink.jsonl")
	os.Symlink(target, symlink)
	dangling := filepath.Join(dir, "dangling.jsonl")
	os.Symlink(filepath.Join(dir, "nowhere"), dangling)
	hardlink := filepath.Join(dir, "hardlink.jsonl")
	os.Link(private, hardlink)
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "dir.jsonl")
	os.Mkdir(sub, 0o700)

	for _, c := range []struct{ path, says string }{
		{symlink, "it is a symlink"},
		{dangling, "it is a symlink"},
		{hardlink, "it has 2 names"},
		{target, "its mode is 0644"},
		{fifo, "not a regular file"},
		{sub, "not a regular file"},
	} {
		for _, flag := range []int{appendFlags, os.O_WRONLY | os.O_CREATE | os.O_TRUNC, os.O_RDONLY} {
			f, err := OpenFile(c.path, flag)
			if err == nil {
				f.Close()
				t.Errorf("OpenFile(%s, %#o) was not refused", filepath.Base(c.path), flag)
				continue
			}
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "remove it") {
				t.Errorf("OpenFile(%s) = %v, want a refusal saying %q and what to do", filepath.Base(c.path), err, c.says)
			}
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "precious\n" {
		t.Errorf("the symlink's target now holds %q", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
		t.Errorf("the symlink's target has mode %v, want 0644 as it was", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(private); string(b) != "secret\n" {
		t.Errorf("the hard link's other name now holds %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dangling symlink's target was created: %v", err)
	}
	if _, err := OpenFile(filepath.Join(dir, "missing"), os.O_RDONLY); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenFile(missing) = %v, want not exist", err)
	}
}

// WriteFile replaces a file whole, through no link: a symlink at the path
// is replaced by the file, its target untouched, and nothing is left
// beside it.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("precious\n"), 0o644)
	os.Chmod(target, 0o644)
	path := filepath.Join(dir, "live.json")
	os.Symlink(target, path)
	// The old way wrote to path+".tmp" first: a link planted there was
	// followed.
	os.Symlink(target, path+".tmp")
	if err := WriteFile(path, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "precious\n" {
		t.Errorf("the target now holds %q", b)
	}
	if err := CheckFile(path); err != nil {
		t.Errorf("the written file: %v", err)
	}
	f, _ := os.Open(path)
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "{}" {
		t.Errorf("the written file holds %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the directory holds %v, want target, live.json and live.json.tmp", names)
	}
}
