package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Python takes $POLYREPL_TEST_PYTHON when it names a file, says why not
// when it names none, and otherwise takes Debian's interpreter.
func TestPython(t *testing.T) {
	there := filepath.Join(t.TempDir(), "python")
	os.WriteFile(there, nil, 0o755)
	for _, c := range []struct {
		name, set, exe, why string
	}{
		{"chosen", there, there, ""},
		{"chosen but absent", "/no/such/python", "", PythonVar + "=/no/such/python is not usable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(PythonVar, c.set)
			exe, why := Python()
			if exe != c.exe || !strings.HasPrefix(why, c.why) || (c.why == "") != (why == "") {
				t.Errorf("Python() = %q, %q; want %q, %q…", exe, why, c.exe, c.why)
			}
		})
	}
	t.Run("default", func(t *testing.T) {
		t.Setenv(PythonVar, "")
		exe, why := Python()
		if _, err := os.Stat(debianPython); (err == nil) != (exe == debianPython) || (exe == "") == (why == "") {
			t.Errorf("Python() = %q, %q; %s: %v", exe, why, debianPython, err)
		}
	})
}

// A module the interpreter lacks skips the test, saying which.
func TestNeedPythonModule(t *testing.T) {
	exe := NeedPython(t)
	if got := NeedPythonModule(t, "os", "nothing to install"); got != exe {
		t.Errorf("NeedPythonModule(os) = %q, want %q", got, exe)
	}
	var skipped string
	t.Run("absent", func(t *testing.T) {
		defer func() { skipped = fmt.Sprint(t.Skipped()) }()
		NeedPythonModule(t, "no_such_module_polyrepl", "install it")
		t.Error("not skipped")
	})
	if skipped != "true" {
		t.Errorf("a missing module did not skip the test")
	}
}

// A short directory leaves room for a socket name, is private, and is
// gone when the test ends.
func TestShortDir(t *testing.T) {
	var d string
	t.Run("make", func(t *testing.T) {
		d = ShortDir(t)
		if n := len(filepath.Join(d, "0123456789ab.sock")); n > 60 {
			t.Errorf("%s: a socket path of %d bytes", d, n)
		}
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v, want a directory of mode 0700", d, fi.Mode(), err)
		}
	})
	if _, err := os.Stat(d); !os.IsNotExist(err) {
		t.Errorf("%s after the test: %v, want it gone", d, err)
	}
}

// Writers on many goroutines lose nothing.
func TestBuffer(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if n := len(b.String()); n != 800 {
		t.Errorf("%d bytes, want 800", n)
	}
}
