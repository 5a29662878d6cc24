package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLogRotates writes more than logMax of log lines: the log moves to
// daemon.log.1, a new one takes its place on the same descriptor, and no
// line is lost or split.
func TestLogRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.log")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	l := &logFile{path: path, fd: fd}
	line := strings.Repeat("x", 99) + "\n"
	n := logMax/len(line) + 1000
	for i := 0; i < n; i++ {
		if _, err := l.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	old, err1 := os.ReadFile(path + ".1")
	cur, err2 := os.ReadFile(path)
	if err1 != nil || err2 != nil {
		t.Fatalf("after %d bytes: %v, %v", n*len(line), err1, err2)
	}
	if len(old) > logMax || len(cur) > logMax || (len(old)+len(cur))/len(line) != n ||
		strings.Count(string(old)+string(cur), line) != n {
		t.Errorf("old log %d bytes, new %d, %d lines written: want both under %d and every line whole", len(old), len(cur), n, logMax)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the new log: %v, %v; want mode 0600", fi, err)
	}
}
