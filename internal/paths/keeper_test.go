package paths

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/testenv"
)

// What a daemon writes of itself is read back; anything else a file in
// the state directory could hold is refused with what is wrong.
func TestParseKeeper(t *testing.T) {
	long := "/" + strings.Repeat("d", 100) + "/" + SocketName
	for _, c := range []struct {
		name, in string
		want     Keeper
		err      string
	}{
		{name: "written", in: `{"pid":42,"socket":"/run/user/1000/polyrepl/daemon.sock","started":"2026-12-05T03:00:00Z"}` + "\n",
			want: Keeper{PID: 42, Socket: "/run/user/1000/polyrepl/daemon.sock", Started: time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)}},
		{name: "fields unknown to this version", in: `{"pid":7,"socket":"/tmp/a/polyrepl/daemon.sock","version":"9.9.9"}`,
			want: Keeper{PID: 7, Socket: "/tmp/a/polyrepl/daemon.sock"}},
		{name: "empty", in: "", err: "not the JSON"},
		{name: "half written", in: `{"pid":42,"socket":"/tmp/a/pol`, err: "not the JSON"},
		{name: "two values", in: `{"pid":1,"socket":"/a/daemon.sock"} {}`, err: "more than one"},
		{name: "no pid", in: `{"socket":"/a/daemon.sock"}`, err: "pid 0"},
		{name: "negative pid", in: `{"pid":-1,"socket":"/a/daemon.sock"}`, err: "pid -1"},
		{name: "huge pid", in: `{"pid":4000000000,"socket":"/a/daemon.sock"}`, err: "pid"},
		{name: "pid a string", in: `{"pid":"1","socket":"/a/daemon.sock"}`, err: "not the JSON"},
		{name: "no socket", in: `{"pid":1}`, err: "names no socket"},
		{name: "relative", in: `{"pid":1,"socket":"a/daemon.sock"}`, err: "not a clean absolute path"},
		{name: "dot dot", in: `{"pid":1,"socket":"/a/../b/daemon.sock"}`, err: "not a clean absolute path"},
		{name: "NUL", in: `{"pid":1,"socket":"/a\u0000/daemon.sock"}`, err: "not a clean absolute path"},
		{name: "another file", in: `{"pid":1,"socket":"/home/me/.bashrc"}`, err: "not named daemon.sock"},
		{name: "too long for a socket", in: `{"pid":1,"socket":"` + long + `"}`, err: "more than a unix socket's"},
		{name: "too big", in: `{"pid":1,"socket":"/a/daemon.sock","x":"` + strings.Repeat("x", KeeperMax) + `"}`, err: "more than the 4096"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseKeeper([]byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("ParseKeeper(%q) = %+v, %v; want an error saying %q", c.in, got, err, c.err)
				}
				if got != (Keeper{}) {
					t.Errorf("a refused file gave %+v", got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ParseKeeper(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			}
		})
	}
}

// A path quoted from a file is bounded in the error.
func TestParseKeeperBoundsWhatItQuotes(t *testing.T) {
	_, err := ParseKeeper([]byte(`{"pid":1,"socket":"rel/` + strings.Repeat("é", 1500) + `"}`))
	if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), "characters cut") {
		t.Fatalf("error of %d bytes: %v", len(err.Error()), err)
	}
}

// WriteKeeper and ReadKeeper round-trip, and ReadKeeper refuses a
// planted file as every file in the state directory is refused.
func TestReadKeeper(t *testing.T) {
	dir := t.TempDir()
	k := Keeper{PID: os.Getpid(), Socket: "/tmp/x/polyrepl/daemon.sock", Started: time.Now().Round(0).UTC()}
	if err := WriteKeeper(dir, k); err != nil {
		t.Fatal(err)
	}
	got, err := ReadKeeper(dir)
	if err != nil || !got.Started.Equal(k.Started) || got.PID != k.PID || got.Socket != k.Socket {
		t.Fatalf("ReadKeeper = %+v, %v; want %+v", got, err, k)
	}
	if fi, _ := os.Stat(filepath.Join(dir, KeeperName)); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}

	other := t.TempDir()
	target := filepath.Join(other, "t")
	os.WriteFile(target, []byte(`{"pid":1,"socket":"/a/daemon.sock"}`), 0o600)
	os.Symlink(target, filepath.Join(other, KeeperName))
	if _, err := ReadKeeper(other); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a planted symlink: %v", err)
	}
	os.Remove(filepath.Join(other, KeeperName))
	os.WriteFile(filepath.Join(other, KeeperName), []byte(`{"pid":1,"socket":"/a/daemon.sock"}`), 0o644)
	os.Chmod(filepath.Join(other, KeeperName), 0o644)
	if _, err := ReadKeeper(other); err == nil || !strings.Contains(err.Error(), "0644") {
		t.Errorf("a file open to others: %v", err)
	}
	os.WriteFile(filepath.Join(other, KeeperName), []byte(`garbage`), 0o600)
	os.Chmod(filepath.Join(other, KeeperName), 0o600)
	if _, err := ReadKeeper(other); err == nil || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("garbage: %v", err)
	}
}

// A lock is held by one opener at a time, until it is closed.
func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), StateLockName)
	a, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(path); err != ErrLocked {
		t.Fatalf("a second Lock: %v, want ErrLocked", err)
	}
	a.Close()
	b, err := Lock(path)
	if err != nil {
		t.Fatalf("Lock after the first was closed: %v", err)
	}
	b.Close()
}

// CheckSocket takes a socket of the user's in a private directory, and
// nothing else.
func TestCheckSocket(t *testing.T) {
	dir := testenv.ShortDir(t)
	sock := filepath.Join(dir, SocketName)
	ln, err := Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := CheckSocket(sock); err != nil {
		t.Errorf("the daemon's socket: %v", err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	if err := CheckSocket(file); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("a file: %v", err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(sock, link)
	if err := CheckSocket(link); err == nil {
		t.Errorf("a symlink to the socket was taken")
	}
	os.Chmod(dir, 0o755)
	defer os.Chmod(dir, 0o700)
	if err := CheckSocket(sock); err == nil {
		t.Errorf("a socket in a directory open to others was taken")
	}
}

// FuzzParseKeeper checks that whatever a file holds, ParseKeeper either
// refuses it or gives a keeper that meets every check, and says no more
// than a bounded error.
func FuzzParseKeeper(f *testing.F) {
	f.Add([]byte(`{"pid":42,"socket":"/run/user/1000/polyrepl/daemon.sock","started":"2026-12-05T03:00:00Z"}`))
	f.Add([]byte(`{"pid":1,"socket":"/a/../daemon.sock"}`))
	f.Add([]byte(`{"pid":1,"socket":"/a/daemon.sock"}{}`))
	f.Add([]byte(`{"pid":1e3,"socket":"/\u00e9/daemon.sock"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseKeeper(b)
		if err != nil {
			if len(err.Error()) > 1000 {
				t.Fatalf("an error of %d bytes", len(err.Error()))
			}
			return
		}
		if k.PID <= 0 || !filepath.IsAbs(k.Socket) || filepath.Clean(k.Socket) != k.Socket ||
			filepath.Base(k.Socket) != SocketName || CheckSocketPath(k.Socket) != nil || strings.ContainsRune(k.Socket, 0) {
			t.Fatalf("ParseKeeper(%q) took %+v", b, k)
		}
	})
}

// Answers is false for a daemon that is gone, for another process at
// its socket, and for this process: a file a dead daemon left must not
// keep a new one from starting.
func TestKeeperAnswers(t *testing.T) {
	dir := testenv.ShortDir(t)
	sock := filepath.Join(dir, SocketName)
	if (Keeper{PID: 12345, Socket: sock}).Answers() {
		t.Errorf("no socket: answers")
	}
	ln, err := Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if (Keeper{PID: os.Getpid(), Socket: sock}).Answers() {
		t.Errorf("this process: answers")
	}
	if (Keeper{PID: os.Getpid() + 1, Socket: sock}).Answers() {
		t.Errorf("a socket another pid listens at: answers")
	}
}
