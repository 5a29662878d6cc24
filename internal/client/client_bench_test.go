package client_test

import (
	"context"
	"io"
	"log"
	"os"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
	"github.com/polyrepl/polyrepl/internal/daemon"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// benchDaemon runs a daemon in this process on a private socket and state
// directory, and returns a client of it; the daemon and its sessions are
// stopped when the benchmark ends.
func benchDaemon(b *testing.B) *client.Client {
	b.Helper()
	for _, k := range []string{"XDG_RUNTIME_DIR", "XDG_STATE_HOME"} {
		b.Setenv(k, testenv.ShortDir(b))
	}
	log.SetOutput(io.Discard)
	b.Cleanup(func() { log.SetOutput(os.Stderr) })
	d, err := daemon.Listen()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Stop("the benchmark ended", false) })
	c := client.New()
	c.AutoStart = false
	return c
}

func benchExec(b *testing.B, code string, check func(api.CellResult) bool) {
	python := testenv.NeedPython(b)
	c := benchDaemon(b)
	ctx := context.Background()
	req := api.ExecRequest{
		Code:   code,
		Spawn:  api.Spawn{Exe: python, Cwd: b.TempDir(), Env: os.Environ()},
		Client: api.Client{Who: "bench", How: "go"},
	}
	if _, err := c.Exec(ctx, "bench", req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r, err := c.Exec(ctx, "bench", req)
		if err != nil || !check(r) {
			b.Fatalf("exec: %v %+v", err, r)
		}
	}
}

// BenchmarkExecTrivial is one `1+1` round trip through the client, the
// HTTP layer, the daemon and the Python worker: what the MCP server pays
// per call.
func BenchmarkExecTrivial(b *testing.B) {
	benchExec(b, "1+1", func(r api.CellResult) bool { return r.Status == api.StatusDone && r.Value == "2" })
}

// BenchmarkExec100KB is a cell printing 100 KB: bounded to the reply
// limit, the whole saved to a spool file.
func BenchmarkExec100KB(b *testing.B) {
	benchExec(b, `print("x"*100000)`, func(r api.CellResult) bool { return r.OutputCut != nil && r.OutputCut.Total == 100001 })
}

// BenchmarkStatus is the client-daemon round trip alone, without a
// session: the floor under every call.
func BenchmarkStatus(b *testing.B) {
	c := benchDaemon(b)
	ctx := context.Background()
	if _, err := c.Status(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Status(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
