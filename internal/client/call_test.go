package client

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// fakeDaemon serves h on a private socket and returns a client of it.
func fakeDaemon(t *testing.T, h http.HandlerFunc) *Client {
	t.Helper()
	sock := filepath.Join(testenv.ShortDir(t), "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return &Client{Socket: sock}
}

// Every method goes through call: the reply decoded as its type, a
// refusal as an *APIError with its hint, a stream's progress handed on,
// the daemon's version noted, a bad name refused before anything is sent.
func TestCall(t *testing.T) {
	var paths []string
	c := fakeDaemon(t, func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.RequestURI())
		w.Header().Set(api.VersionHeader, "v-other")
		switch r.URL.Path {
		case "/v1/sessions/a.b/kill":
			w.WriteHeader(http.StatusConflict)
			json.NewEncoder(w).Encode(api.ErrorReply{Error: "busy", Code: "busy", Hint: "wait"})
		case "/v1/sessions/a.b/exec":
			w.Header().Set("Content-Type", api.StreamType)
			enc := json.NewEncoder(w)
			enc.Encode(api.StreamEvent{Progress: &api.Progress{Cell: 3, Elapsed: 1}})
			enc.Encode(api.StreamEvent{Result: &api.CellResult{Session: "a.b", Cell: 3, Status: api.StatusDone}})
		case "/v1/sessions/a.b/record":
			json.NewEncoder(w).Encode(api.RecordReply{})
		case "/v1/status":
			json.NewEncoder(w).Encode(api.StatusReply{Version: "v-other"})
		default:
			http.NotFound(w, r)
		}
	})
	ctx := context.Background()

	st, err := c.Status(ctx)
	if err != nil || st.Version != "v-other" {
		t.Errorf("Status = %+v, %v", st, err)
	}
	if c.DaemonVersion() != "v-other" || c.VersionMismatch() == nil {
		t.Errorf("DaemonVersion %q, VersionMismatch %v: want the daemon's version noted", c.DaemonVersion(), c.VersionMismatch())
	}

	var ae *APIError
	if _, err := c.Kill(ctx, "a.b", api.ControlRequest{}); !errors.As(err, &ae) || ae.Status != http.StatusConflict || ae.Code != "busy" || ae.Hint != "wait" {
		t.Errorf("Kill: %#v, want the daemon's busy refusal", err)
	}
	if _, err := c.Restart(ctx, "a.b", api.ControlRequest{}); !errors.As(err, &ae) || ae.Status != http.StatusNotFound || ae.Hint == "" {
		t.Errorf("Restart on an unknown path: %#v, want a 404 with a hint", err)
	}

	var progress []api.Progress
	r, err := c.ExecProgress(ctx, "a.b", api.ExecRequest{Code: "1"}, func(p api.Progress) { progress = append(progress, p) })
	if err != nil || r.Cell != 3 || r.Status != api.StatusDone || len(progress) != 1 || progress[0].Cell != 3 {
		t.Errorf("ExecProgress = %+v, %v, progress %+v", r, err, progress)
	}

	if _, err := c.History(ctx, "a.b", 7); err != nil {
		t.Errorf("History: %v", err)
	}
	if last := paths[len(paths)-1]; last != "/v1/sessions/a.b/record?since=7" {
		t.Errorf("History asked for %q", last)
	}

	n := len(paths)
	if _, err := c.Interrupt(ctx, "..", api.ControlRequest{}); !errors.As(err, &ae) || ae.Code != "bad-request" {
		t.Errorf("Interrupt of \"..\": %#v, want a bad-request refusal", err)
	}
	if len(paths) != n {
		t.Errorf("a bad name reached the daemon: %q", paths[n:])
	}
}

// A daemon that takes a call and ends before it answers (here: drops
// the connection) leaves a call that changes a session unknown, and it
// is never sent again: exec comes back as an *InFlightError, sent once;
// a call that only reads is an ordinary *ConnError.
func TestInFlight(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	c := fakeDaemon(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == "/v1/sessions/a/exec" {
			// Half a stream, then nothing: a daemon killed mid-cell.
			w.Header().Set("Content-Type", api.StreamType)
			json.NewEncoder(w).Encode(api.StreamEvent{Progress: &api.Progress{Cell: 1}})
			w.(http.Flusher).Flush()
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	ctx := context.Background()
	_, err := c.ExecProgress(ctx, "a", api.ExecRequest{Code: "x += 1"}, func(api.Progress) {})
	var fe *InFlightError
	if !errors.As(err, &fe) || fe.Op != api.DoExec || fe.Session != "a" {
		t.Errorf("exec whose reply broke off: %#v, want an *InFlightError for exec of a", err)
	}
	_, err = c.Kill(ctx, "b", api.ControlRequest{})
	if !errors.As(err, &fe) || fe.Op != api.DoKill || fe.Session != "b" {
		t.Errorf("kill with no reply: %#v, want an *InFlightError for kill of b", err)
	}
	_, err = c.Status(ctx)
	var ce *ConnError
	if errors.As(err, &fe) || !errors.As(err, &ce) {
		t.Errorf("status with no reply: %#v, want a *ConnError", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got["/v1/sessions/a/exec"] != 1 || got["/v1/sessions/b/kill"] != 1 {
		t.Errorf("calls that change a session were sent %v times; want once each", got)
	}
}
