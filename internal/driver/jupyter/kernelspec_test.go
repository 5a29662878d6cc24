package jupyter

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// TestReadSpecFiles: a kernel.json is read only when it is a regular
// file (a symbolic link to one is fine) of at most maxSpecBytes; a named
// pipe, a device, a directory or an oversized file is refused at once,
// the error naming the file and what it is; bad JSON and a huge
// display_name are said or cut.
func TestReadSpecFiles(t *testing.T) {
	root := t.TempDir()
	mk := func(name string) string {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	write := func(name, body string) string {
		d := mk(name)
		if err := os.WriteFile(filepath.Join(d, "kernel.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	good := write("good", `{"argv": ["python3", "-f", "{connection_file}"], "display_name": "Good", "language": "python"}`)
	linked := mk("linked")
	if err := os.Symlink(filepath.Join(good, "kernel.json"), filepath.Join(linked, "kernel.json")); err != nil {
		t.Fatal(err)
	}
	linkdir := filepath.Join(root, "linkdir")
	if err := os.Symlink(good, linkdir); err != nil {
		t.Fatal(err)
	}
	fifo := mk("fifo")
	if err := syscall.Mkfifo(filepath.Join(fifo, "kernel.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	zero := mk("zero")
	if err := os.Symlink("/dev/zero", filepath.Join(zero, "kernel.json")); err != nil {
		t.Fatal(err)
	}
	dir := mk("dir")
	mk("dir/kernel.json")
	big := write("big", `{"argv": ["x"], "display_name": "`+strings.Repeat("a", maxSpecBytes)+`"}`)
	huge := write("huge", `{"argv": ["x"], "display_name": "`+strings.Repeat("é", 20000)+`", "language": "`+strings.Repeat("L", 5000)+`"}`)
	badJSON := write("badjson", `{"argv": ["x"`)
	noArgv := write("noargv", `{"argv": []}`)
	mode := write("mode", `{"argv": ["x"], "interrupt_mode": "`+strings.Repeat("m", 5000)+`"}`)
	loop := mk("loop")
	if err := os.Symlink(filepath.Join(loop, "kernel.json"), filepath.Join(loop, "kernel.json")); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name, dir string
		want      string // in the error; "" for a good spec
		none      bool   // no kernel.json at all
	}{
		{"good", good, "", false},
		{"linked", linked, "", false},
		{"linkdir", linkdir, "", false},
		{"fifo", fifo, "is a named pipe, not a regular file", false},
		{"zero", zero, "is a character device, not a regular file", false},
		{"dir", dir, "is a directory, not a regular file", false},
		{"big", big, "more than the 65536 a kernel.json may have", false},
		{"badjson", badJSON, "is not valid JSON", false},
		{"noargv", noArgv, "has no argv", false},
		{"mode", mode, "text cut: 5,000 characters", false},
		{"loop", loop, "loop of symbolic links", false},
		{"missing", filepath.Join(root, "missing"), "", true},
	} {
		start := time.Now()
		s, err := readSpec(c.dir, c.name)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: reading took %s", c.name, d)
		}
		switch {
		case c.none:
			if !errors.Is(err, errNoSpec) {
				t.Errorf("%s: %v, want no kernel.json", c.name, err)
			}
		case c.want == "":
			if err != nil || s.Argv[0] == "" || s.Name != c.name {
				t.Errorf("%s: %+v %v, want the spec", c.name, s, err)
			}
		default:
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Join(c.dir, "kernel.json")) {
				t.Errorf("%s: %v, want an error naming the file and saying %q", c.name, err, c.want)
			}
			if err != nil && len(err.Error()) > 2*maxLabelChars+1000 {
				t.Errorf("%s: an error of %d bytes", c.name, len(err.Error()))
			}
		}
	}
	s, err := readSpec(huge, "huge")
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(s.DisplayName); n > maxLabelChars+80 || !strings.Contains(s.DisplayName, "cut: 20,000 characters in all") {
		t.Errorf("display_name of %d characters: %q…", n, s.DisplayName[:50])
	}
	if !strings.Contains(s.Language, "cut: 5,000 characters") || len(s.Language) > maxLabelChars+80 {
		t.Errorf("language %q", s.Language)
	}
}

// TestSpecsWithHostileFiles: a FIFO and a /dev/zero link among the
// kernels cost a listing nothing but their own entries, each saying
// what is wrong; an unknown name's error names them.
func TestSpecsWithHostileFiles(t *testing.T) {
	dir := t.TempDir()
	writeSpec(t, dir, "fine", `{"argv": ["fine"]}`)
	for _, k := range []string{"pipe", "zero"} {
		if err := os.MkdirAll(filepath.Join(dir, "kernels", k), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "kernels", "pipe", "kernel.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "kernels", "zero", "kernel.json")); err != nil {
		t.Fatal(err)
	}
	env := []string{"JUPYTER_PATH=" + dir, "HOME=" + t.TempDir(), "PATH=/nonexistent"}
	done := make(chan struct{})
	var specs []Spec
	var broken []Broken
	go func() {
		specs, broken = Specs(env, "/")
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("listing the kernels did not end: it waits on the named pipe")
	}
	if len(specs) < 1 || specs[0].Name != "fine" {
		t.Errorf("specs %+v, want fine", specs)
	}
	if len(broken) != 2 {
		t.Errorf("broken %v, want the pipe and the link to /dev/zero", broken)
	}
	_, err := FindSpec("nosuch", env, "/")
	if err == nil || !strings.Contains(err.Error(), "named pipe") || !strings.Contains(err.Error(), "character device") {
		t.Errorf("an unknown kernel: %v, want the broken files named", err)
	}
}

// FuzzDecodeSpec: no kernel.json's bytes make the decoder panic, and
// what it returns is bounded.
func FuzzDecodeSpec(f *testing.F) {
	f.Add([]byte(`{"argv": ["python3", "-f", "{connection_file}"], "display_name": "Python 3", "language": "python"}`))
	f.Add([]byte(`{"argv": [], "interrupt_mode": "x"}`))
	f.Add([]byte(`{"argv": ["a\u0000b"], "env": {"A": "1"}}`))
	f.Add([]byte(`{"display_name": "\xff\xfe", "argv": ["x"]}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxSpecBytes {
			return
		}
		s, err := decodeSpec(b)
		if err != nil {
			if len(err.Error()) > 4*maxLabelChars+200 {
				t.Errorf("an error of %d bytes", len(err.Error()))
			}
			return
		}
		if len(s.Argv) == 0 || len(s.Argv) > maxArgs {
			t.Errorf("argv of %d", len(s.Argv))
		}
		for _, l := range []string{s.DisplayName, s.Language} {
			if !utf8.ValidString(l) || utf8.RuneCountInString(l) > maxLabelChars+80 {
				t.Errorf("a label of %d characters: %q", utf8.RuneCountInString(l), l)
			}
		}
	})
}
