package client

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// A client reaches the daemon its state directory names when that one
// answers there with the pid it names, says so once, and otherwise goes
// to its own socket as before.
func TestDialReachesTheStateDirectorysDaemon(t *testing.T) {
	dir := testenv.ShortDir(t)
	for _, d := range []string{"there", "own", "state"} {
		os.Mkdir(filepath.Join(dir, d), 0o700)
	}
	there := filepath.Join(dir, "there", paths.SocketName)
	l, err := net.Listen("unix", there)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"sessions":[]}`))
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	stateDir := filepath.Join(dir, "state")
	own := filepath.Join(dir, "own", paths.SocketName)

	var told []api.Note
	c := &Client{Socket: own, StateDir: stateDir, Elsewhere: func(n api.Note) { told = append(told, n) }}
	ctx := context.Background()

	// None named: the client's own socket, where nothing listens.
	if _, err := c.Sessions(ctx, ""); !IsNotRunning(err) {
		t.Fatalf("no daemon.json: %v, want not running", err)
	}
	// Named, with another pid: not believed.
	paths.WriteKeeper(stateDir, paths.Keeper{PID: os.Getpid() + 1, Socket: there})
	if _, err := c.Sessions(ctx, ""); !IsNotRunning(err) {
		t.Fatalf("daemon.json naming another pid: %v, want not running", err)
	}
	// Named with this pid (the fake daemon is this process): reached,
	// and said once however often it is dialed.
	paths.WriteKeeper(stateDir, paths.Keeper{PID: os.Getpid(), Socket: there})
	for i := 0; i < 3; i++ {
		c.closeIdle()
		if _, err := c.Sessions(ctx, ""); err != nil {
			t.Fatalf("daemon.json naming the daemon: %v", err)
		}
	}
	if c.Reached() != there || c.LogPath() != filepath.Join(dir, "there", paths.LogName) {
		t.Errorf("Reached %s, LogPath %s; want the daemon's", c.Reached(), c.LogPath())
	}
	if len(told) != 1 || told[0].Kind != api.NoteElsewhere || told[0].Socket != there || told[0].OwnSocket != own || told[0].StateDir != stateDir || told[0].PID != os.Getpid() {
		t.Errorf("told %+v, want one elsewhere note", told)
	}
	// Garbage in the file: the client's own socket again.
	os.WriteFile(filepath.Join(stateDir, paths.KeeperName), []byte("{"), 0o600)
	c.closeIdle()
	if _, err := c.Sessions(ctx, ""); !IsNotRunning(err) {
		t.Fatalf("a garbled daemon.json: %v, want not running", err)
	}
}
