package e2e

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTranscript checks that every cell's code is appended to
// $XDG_STATE_HOME/polyrepl/<host>/NAME.py, and that polyrepl's directories
// are 0700 and its files 0600.
func TestTranscript(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	cells := []string{"first_marker = 1", "def second_marker():\n    return 2", "second_marker() + first_marker", "1/0  # third_marker"}
	for _, c := range cells {
		e.run("exec", "notes", c)
	}
	path := filepath.Join(e.stateDir(), "notes.py")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("transcript: %v", err)
	}
	text := string(b)
	last := -1
	for _, c := range cells {
		i := strings.Index(text, c)
		if i < 0 {
			t.Errorf("transcript %s lacks the cell %q:\n%s", path, c, text)
			continue
		}
		if i < last {
			t.Errorf("transcript %s has the cell %q out of order:\n%s", path, c, text)
		}
		last = i
	}
	if s := e.session("notes"); s.Transcript != path {
		t.Errorf("sessions --json says the transcript is %q, want %q", s.Transcript, path)
	}

	for _, root := range []string{filepath.Join(e.state, "polyrepl"), e.socketDir()} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Errorf("walking %s: %v", root, err)
				return nil
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return nil // gone meanwhile
			}
			switch {
			case fi.IsDir():
				if fi.Mode().Perm() != 0o700 {
					t.Errorf("directory %s has mode %04o, want 0700", p, fi.Mode().Perm())
				}
			case fi.Mode().IsRegular():
				if fi.Mode().Perm() != 0o600 {
					t.Errorf("file %s has mode %04o, want 0600", p, fi.Mode().Perm())
				}
			case fi.Mode()&fs.ModeSocket != 0:
				if fi.Mode().Perm()&0o077 != 0 {
					t.Errorf("socket %s has mode %04o, open to others", p, fi.Mode().Perm())
				}
			}
			return nil
		})
	}
}

// countLines counts the lines of a file, and returns its first and last.
func countLines(path string) (n int, first, last string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if n == 0 {
			first = sc.Text()
		}
		last = sc.Text()
		n++
	}
	return n, first, last, sc.Err()
}

// cutMarkerRoom is room for the few words that mark a cut inside a bounded
// text ("[… 40,002 characters cut …]").
const cutMarkerRoom = 100

// TestCaps checks the bounds: a reply carries at most 30,000 characters of
// output and 10,000 of a value, says what it cut and where the whole text
// is; a cell printing 200 MB leaves the daemon's memory bounded and the
// session usable.
func TestCaps(t *testing.T) {
	needPython(t)
	t.Parallel()

	t.Run("many lines", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		r := e.runJSON("exec", "caps", "for i in range(100000):\n    print(i)", "-t", "120")
		if r.code != 0 || r.Status != "done" {
			t.Fatalf("100,000 lines: %v", r)
		}
		c := r.OutputCut
		if c == nil {
			t.Fatalf("no output_cut for 100,000 lines: %v", r)
		}
		var full strings.Builder
		for i := range 100000 {
			fmt.Fprintf(&full, "%d\n", i)
		}
		whole := full.String()
		if c.Total != len(whole) || c.Head+c.Tail > 30000 || c.Head+c.Tail < 20000 || c.Head == 0 || c.Tail == 0 {
			t.Errorf("output_cut %+v: want total %d, head and tail both kept, together at most 30,000", *c, len(whole))
		}
		// The output is the head, a short cut marker, and the tail.
		if n := utf8.RuneCountInString(r.Output); n > 30000+cutMarkerRoom {
			t.Errorf("reply carries %d characters of output, want at most 30,000 and a cut marker", n)
		}
		if !strings.HasPrefix(r.Output, whole[:c.Head]) || !strings.HasSuffix(r.Output, whole[len(whole)-c.Tail:]) {
			t.Errorf("the cut output does not keep the head and the tail it says it keeps: %q", clip(r.Output))
		}
		if c.File == "" {
			t.Fatalf("output_cut names no file: %+v", *c)
		}
		n, first, last, err := countLines(c.File)
		if err != nil || n != 100000 || first != "0" || last != "99999" {
			t.Errorf("the saved output %s: %d lines from %q to %q (%v), want 100,000 from 0 to 99999", c.File, n, first, last, err)
		}
		out, errOut := e.must(0, "exec", "caps", "for i in range(100000):\n    print(i)")
		if len(out+errOut) > 30000+cutMarkerRoom+500 {
			t.Errorf("the text reply is %d bytes, want about 30,000 at most", len(out+errOut))
		}
		wantContains(t, "text reply's cut, on standard error", errOut, "output cut", "588,890", filepath.Join(e.stateDir(), "records", "output"))
	})

	t.Run("huge value", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		r := e.runJSON("exec", "caps", `"x" * 50000`)
		if r.code != 0 || r.Status != "done" {
			t.Fatalf("huge value: %v", r)
		}
		c := r.ValueCut
		if c == nil || c.Total != 50002 || c.Head+c.Tail > 10000 || c.Head+c.Tail < 5000 {
			t.Fatalf("value_cut %+v, want total 50002 (the repr with its quotes), at most 10,000 kept", c)
		}
		if n := utf8.RuneCountInString(r.Value); n > 10000+cutMarkerRoom {
			t.Errorf("the value is %d characters, want about 10,000 and at most that and a cut marker", n)
		}
		out, errOut := e.must(0, "exec", "caps", `"x" * 50000`)
		wantContains(t, "text reply", out, "Out[2]: 'xxx")
		wantContains(t, "text reply's cut, on standard error", errOut, "value cut", "50,002")
		if len(out+errOut) > 11000 {
			t.Errorf("the text reply is %d bytes, want about 10,000", len(out+errOut))
		}
	})

	t.Run("200 MB", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.must(0, "exec", "flood", "import sys")
		stop := peakRSS(e.status().PID)
		r := e.runJSON("exec", "flood", "for _ in range(200):\n    sys.stdout.write('x' * (1 << 20))", "-t", "300")
		peak := stop()
		if r.code != 0 || r.Status != "done" {
			t.Errorf("200 MB of output: %v", r)
		}
		if n := len(r.Output); n > 30000+cutMarkerRoom {
			t.Errorf("reply carries %d characters of output, want at most 30,000 and a cut marker", n)
		}
		if c := r.OutputCut; c == nil || c.Total != 200<<20 || c.Head+c.Tail > 30000 {
			t.Errorf("output_cut %+v, want total %d and at most 30,000 kept", c, 200<<20)
		} else if fi, err := os.Stat(c.File); err != nil || fi.Size() != 200<<20 {
			t.Errorf("the saved output %s: %v, want all %d bytes", c.File, err, 200<<20)
		}
		if peak >= 100<<20 {
			t.Errorf("the daemon's RSS reached %d MB during the flood, want under 100 MB", peak>>20)
		}
		t.Logf("daemon peak RSS %d MB", peak>>20)
		out, _ := e.must(0, "exec", "flood", "1 + 1")
		if !strings.HasSuffix(out, "Out[3]: 2\n") {
			t.Errorf("after the flood: %q, want Out[3]: 2", out)
		}
	})
}

// TestBadInput checks that bad input gets a clear error, exit status 2,
// and changes nothing: no session is created.
func TestBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		args  []string
		stdin string
		want  []string // in stderr
	}{
		{"slash in name", []string{"exec", "a/b", "1"}, "", []string{`"a/b"`, "letters, digits"}},
		{"dot-dot name", []string{"exec", "..", "1"}, "", []string{`".."`, "letters, digits"}},
		{"dash name", []string{"exec", "--", "-x", "1"}, "", []string{`"-x"`, "letters, digits"}},
		{"long name", []string{"exec", strings.Repeat("n", 100), "1"}, "", []string{"100", "64"}},
		{"empty code", []string{"exec", "c1", ""}, "", []string{"empty"}},
		{"blank code", []string{"exec", "c2", "  \n\t \n"}, "", []string{"empty"}},
		{"code over 2 MiB", []string{"exec", "c3", "-"}, strings.Repeat("x = 1\n", (2<<20)/6+10), []string{"limit", "2 MiB"}},
		{"no such cwd", []string{"exec", "c4", "1", "--cwd", "/nonexistent"}, "", []string{"/nonexistent", "does not exist"}},
		{"python is /bin/false", []string{"exec", "c5", "1", "--python", "/bin/false"}, "", []string{"/bin/false", "Python"}},
		{"python is missing", []string{"exec", "c6", "1", "--python", "/nonexistent"}, "", []string{"/nonexistent"}},
		{"python is echo", []string{"exec", "c7", "1", "--python", "/bin/echo"}, "", []string{"/bin/echo", "Python"}},
		{"negative timeout", []string{"exec", "c8", "1", "-t", "-1"}, "", []string{"timeout", "600"}},
		{"timeout over 600", []string{"exec", "c9", "1", "-t", "601"}, "", []string{"timeout", "600"}},
		{"timeout not a number", []string{"exec", "c10", "1", "-t", "abc"}, "", []string{"timeout", `"abc"`}},
		{"unknown flag", []string{"exec", "c11", "1", "--bogus"}, "", []string{"--bogus"}},
		{"no arguments", []string{"exec"}, "", []string{"usage"}},
		{"no code", []string{"exec", "c12"}, "", []string{"usage"}},
		{"wait on no session", []string{"wait", "nosuch"}, "", []string{"no session", "nosuch"}},
		{"interrupt on no session", []string{"interrupt", "nosuch"}, "", []string{"no session", "nosuch"}},
		{"kill on no session", []string{"kill", "nosuch"}, "", []string{"no session", "nosuch"}},
	}
	e := newEnv(t)
	if python == "" {
		// The interpreter checks need none; give the others a name to
		// resolve that is not Python either way.
		e.setenv("POLYREPL_PYTHON", "/bin/false")
	}
	for _, c := range cases {
		out, errOut, code := e.runIn(c.stdin, c.args...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2\nstdout: %s\nstderr: %s", c.name, code, clip(out), clip(errOut))
			continue
		}
		wantContains(t, c.name+": stderr", errOut, append([]string{"polyrepl: error: "}, c.want...)...)
	}
	if list := e.sessions(); len(list) != 0 {
		t.Errorf("bad input created sessions: %+v", list)
	}
	ents, _ := os.ReadDir(e.stateDir())
	for _, d := range ents {
		if strings.HasSuffix(d.Name(), ".py") {
			t.Errorf("bad input left a transcript: %s", d.Name())
		}
	}
}
