package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/limit"
	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/session"
	"github.com/polyrepl/polyrepl/internal/version"
)

// bodyTimeout bounds how long a request body may take to arrive: 2 MiB of
// code takes milliseconds on a local socket.
const bodyTimeout = 10 * time.Second

// maxBody bounds a request body: the code limit plus the caller's
// environment and some room for JSON escaping.
const maxBody = 4*api.MaxCodeBytes + api.MaxEnvBytes

func (d *Daemon) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+api.PathStatus, d.status)
	mux.HandleFunc("POST "+api.PathStop, d.stop)
	mux.HandleFunc("GET "+api.PathSessions, d.list)
	mux.HandleFunc("GET "+api.PathSession, d.describe)
	mux.HandleFunc("POST "+api.PathExec, d.exec)
	mux.HandleFunc("POST "+api.PathWait, d.wait)
	mux.HandleFunc("POST "+api.PathInput, d.input)
	mux.HandleFunc("POST "+api.PathInterrupt, d.interrupt)
	mux.HandleFunc("POST "+api.PathRestart, d.restart)
	mux.HandleFunc("POST "+api.PathFork, d.fork)
	mux.HandleFunc("POST "+api.PathCheckpoint, d.checkpoint)
	mux.HandleFunc("POST "+api.PathRollback, d.rollback)
	mux.HandleFunc("POST "+api.PathKill, d.kill)
	mux.HandleFunc("GET "+api.PathRecord, d.history)
	mux.HandleFunc("GET "+api.PathRecordEntry, d.entry)
	mux.HandleFunc("GET "+api.PathRaw, d.raw)
	mux.HandleFunc("POST "+api.PathRuntimes, d.listRuntimes)
	mux.HandleFunc("GET "+api.PathGlance, d.glance)
	mux.HandleFunc("POST "+api.PathComplete, d.complete)
	mux.HandleFunc("GET "+api.PathVars, d.vars)
	return withVersion(d.withReach(mux))
}

// withVersion stamps every reply with the daemon's version.
func withVersion(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(api.VersionHeader, version.Version)
		w.Header().Set(api.KeepsHeader, "1")
		h.ServeHTTP(w, r)
	})
}

func (d *Daemon) status(w http.ResponseWriter, r *http.Request) {
	reply(w, api.StatusReply{
		PID: os.Getpid(), Version: version.Version, Socket: d.socket,
		Log: filepath.Join(d.socketDir, paths.LogName), StateDir: d.stateDir,
		Started: d.started, Sessions: len(session.Reachable(d.sessions.List(false), asker(r))),
		Goroutines: runtime.NumGoroutine(), FDs: openFDs(), Memory: d.memoryStatus(),
		MemoryCap: d.sessions.MemoryCap(),
	})
}

// memoryStatus says the default memory limit and how limits are held.
func (d *Daemon) memoryStatus() string {
	n, how := d.sessions.Memory()
	dflt := "no default limit"
	if n > 0 {
		dflt = "sessions limited to " + limit.Size(n) + " unless they ask otherwise"
	}
	return dflt + "; " + how
}

// openFDs counts the daemon's open file descriptors: /proc on Linux,
// /dev/fd on macOS (where it lists the caller's own). Raw directory reads:
// every status call pays for it, and os.Open and os.ReadDir cost more than
// the rest of the call.
func openFDs() int {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var buf [4096]byte
		n := 0
		for {
			m, err := unix.ReadDirent(fd, buf[:])
			if err != nil || m <= 0 {
				break
			}
			_, c, _ := unix.ParseDirent(buf[:m], -1, nil)
			n += c
		}
		unix.Close(fd)
		return n - 1 // the directory's own descriptor, open while it is read
	}
	return -1
}

func (d *Daemon) stop(w http.ResponseWriter, r *http.Request) {
	var req api.StopRequest
	if r.ContentLength != 0 && !decode(w, r, &req) {
		return
	}
	if reachOf(r) != nil {
		fail(w, outsideStop())
		return
	}
	if req.KeepSessions {
		_, kept := d.Stop("stopped on request, keeping the sessions", true)
		reply(w, api.StopReply{PID: os.Getpid(), Kept: kept})
		return
	}
	ended, _ := d.Stop("stopped with the daemon, on request", false)
	reply(w, api.StopReply{PID: os.Getpid(), Ended: ended})
}

func (d *Daemon) list(w http.ResponseWriter, r *http.Request) {
	reply(w, api.SessionsReply{Sessions: session.Reachable(d.sessions.List(true), asker(r))})
}

func (d *Daemon) describe(w http.ResponseWriter, r *http.Request) {
	info, err := d.sessions.Describe(r.PathValue("name"), asker(r))
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, api.SessionsReply{Sessions: []api.SessionInfo{info}})
}

func (d *Daemon) exec(w http.ResponseWriter, r *http.Request) {
	var req api.ExecRequest
	if !decode(w, r, &req) {
		return
	}
	req.Client = req.Client.Bounded()
	req.Client.Reach = reachOf(r)
	st := &stream{w: w, on: req.Progress > 0}
	res, err := d.sessions.Exec(r.Context(), r.PathValue("name"), req, st.progress())
	st.finish(res, err)
}

func (d *Daemon) wait(w http.ResponseWriter, r *http.Request) {
	var req api.WaitRequest
	if !decode(w, r, &req) {
		return
	}
	req.Client = req.Client.Bounded()
	req.Client.Reach = reachOf(r)
	st := &stream{w: w, on: req.Progress > 0}
	res, err := d.sessions.Wait(r.Context(), r.PathValue("name"), req, st.progress())
	st.finish(res, err)
}

func (d *Daemon) input(w http.ResponseWriter, r *http.Request) {
	var req api.InputRequest
	if !decode(w, r, &req) {
		return
	}
	req.Client = req.Client.Bounded()
	req.Client.Reach = reachOf(r)
	st := &stream{w: w, on: req.Progress > 0}
	res, err := d.sessions.Input(r.Context(), r.PathValue("name"), req, st.progress())
	st.finish(res, err)
}

// stream answers a call that asked for progress: plain JSON if it ends
// before the first progress event, else NDJSON events ending with the
// result or the error.
type stream struct {
	w       http.ResponseWriter
	on      bool
	started bool
}

func (st *stream) progress() session.Progress {
	if !st.on {
		return nil
	}
	return func(p api.Progress) {
		if !st.started {
			st.started = true
			st.w.Header().Set("Content-Type", api.StreamType)
			st.w.WriteHeader(http.StatusOK)
		}
		st.send(api.StreamEvent{Progress: &p})
	}
}

func (st *stream) send(ev api.StreamEvent) {
	if err := json.NewEncoder(st.w).Encode(ev); err != nil {
		return // the client went away; the cell goes on
	}
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (st *stream) finish(res api.CellResult, err error) {
	switch {
	case !st.started && err != nil:
		fail(st.w, err)
	case !st.started:
		reply(st.w, res)
	case err != nil:
		if errors.Is(err, context.Canceled) {
			return
		}
		body, _ := errorReply(err)
		st.send(api.StreamEvent{Error: &body})
	default:
		st.send(api.StreamEvent{Result: &res})
	}
}

func (d *Daemon) interrupt(w http.ResponseWriter, r *http.Request) {
	var req api.ControlRequest
	if !decode(w, r, &req) {
		return
	}
	req.Client = req.Client.Bounded()
	req.Client.Reach = reachOf(r)
	res, err := d.sessions.Interrupt(r.Context(), r.PathValue("name"), req)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, res)
}

func (d *Daemon) restart(w http.ResponseWriter, r *http.Request) {
	var req api.ControlRequest
	if !decode(w, r, &req) {
		return
	}
	req.Client = req.Client.Bounded()
	req.Client.Reach = reachOf(r)
	res, err := d.sessions.Restart(r.Context(), r.PathValue("name"), req)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, res)
}

func (d *Daemon) fork(w http.ResponseWriter, r *http.Request) {
	var req api.ForkRequest
	if !decode(w, r, &req) {
		return
	}
	req.Client = req.Client.Bounded()
	req.Client.Reach = reachOf(r)
	res, err := d.sessions.Fork(r.Context(), r.PathValue("name"), req)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, res)
}

func (d *Daemon) checkpoint(w http.ResponseWriter, r *http.Request) {
	var req api.CheckpointRequest
	if !decode(w, r, &req) {
		return
	}
	req.Client = req.Client.Bounded()
	req.Client.Reach = reachOf(r)
	res, err := d.sessions.Checkpoint(r.Context(), r.PathValue("name"), req)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, res)
}

func (d *Daemon) rollback(w http.ResponseWriter, r *http.Request) {
	var req api.CheckpointRequest
	if !decode(w, r, &req) {
		return
	}
	req.Client = req.Client.Bounded()
	req.Client.Reach = reachOf(r)
	res, err := d.sessions.Rollback(r.Context(), r.PathValue("name"), req)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, res)
}

func (d *Daemon) kill(w http.ResponseWriter, r *http.Request) {
	var req api.ControlRequest
	if !decode(w, r, &req) {
		return
	}
	req.Client = req.Client.Bounded()
	req.Client.Reach = reachOf(r)
	res, err := d.sessions.Kill(r.PathValue("name"), req)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, res)
}

// decode reads a JSON body strictly: unknown fields and trailing data are
// errors, so a client's mistake is not silently ignored.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	// A client that sends half a body and stalls is cut off, not waited
	// for; the deadline is lifted for the long reply that follows.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(bodyTimeout))
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("unexpected data after the JSON object")
	}
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("unexpected data after the JSON object")
		}
	}
	if err != nil {
		var mbe *http.MaxBytesError
		var ne net.Error
		// The connection is not reused: what is left of the body is not
		// waited for.
		w.Header().Set("Connection", "close")
		rc.SetReadDeadline(time.Now())
		if errors.As(err, &ne) && ne.Timeout() {
			log.Printf("a client sent half a request and stalled for %s; cut off", bodyTimeout)
			refuse(w, api.ErrorReply{Code: api.CodeBadRequest, Error: fmt.Sprintf("the request body did not arrive within %s", bodyTimeout), Hint: "send the whole request at once"})
			return false
		}
		if errors.As(err, &mbe) {
			size := fmt.Sprintf("over %d bytes", maxBody)
			if r.ContentLength > 0 {
				size = fmt.Sprintf("%d bytes, over the limit of %d bytes", r.ContentLength, maxBody)
			}
			refuse(w, api.ErrorReply{Code: api.CodeBadRequest, Error: "the request is " + size, Hint: "keep code and answers under 2 MiB"})
			return false
		}
		refuse(w, api.ErrorReply{Code: api.CodeBadRequest, Error: fmt.Sprintf("malformed request body: %v", err), Hint: "send one JSON object as the API describes"})
		return false
	}
	rc.SetReadDeadline(time.Time{}) // the reply may take long; the client waits for it
	return true
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Printf("writing a reply: %v", err)
	}
}

// statusOf maps a refusal to its HTTP status: every code but
// CodeInternal (the daemon failed) is a refusal of the request as the
// session now stands, never a 500.
var statusOf = map[string]int{
	api.CodeBadRequest: http.StatusBadRequest,
	api.CodeNoSession:  http.StatusNotFound,
	api.CodeNoEntry:    http.StatusNotFound,
	api.CodeBusy:       http.StatusConflict,
	api.CodeInput:      http.StatusConflict, // busy with a question
	api.CodeNoInput:    http.StatusConflict,
	api.CodeForeign:    http.StatusConflict,
	api.CodeAdopting:   http.StatusConflict, // retry shortly
	api.CodeStale:      http.StatusGone,
	api.CodeDead:       http.StatusGone,
	api.CodeSandbox:    http.StatusForbidden,
}

func fail(w http.ResponseWriter, err error) {
	if errors.Is(err, context.Canceled) {
		return // the client went away: nobody to answer
	}
	body, status := errorReply(err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// refuse answers with refusal r, its status from its Code.
func refuse(w http.ResponseWriter, r api.ErrorReply) { fail(w, &session.Error{ErrorReply: r}) }

// errorReply turns an error into its reply body and HTTP status.
func errorReply(err error) (api.ErrorReply, int) {
	body := api.ErrorReply{Error: err.Error(), Code: api.CodeInternal}
	status := http.StatusInternalServerError
	var se *session.Error
	if errors.As(err, &se) {
		body = se.ErrorReply
		body.Error = err.Error() // with what wrapped it, if anything did
		if s, ok := statusOf[se.Code]; ok {
			status = s
		}
	}
	// What a refusal quotes came from outside (a client's path or name,
	// a runtime's words): it is held here, the one place every refusal
	// leaves by.
	body.Error = api.Clip(body.Error, api.RefusalLimit, "error")
	body.Hint = api.Clip(body.Hint, api.RefusalLimit, "hint")
	return body, status
}
