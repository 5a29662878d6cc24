package view

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
	"github.com/polyrepl/polyrepl/internal/export"
	"github.com/polyrepl/polyrepl/internal/render"
)

// Server serves the page and its API on a loopback port, for the person
// who ran `polyrepl view`. Every request passes the guard (guard.go);
// what the page asks of sessions goes to the daemon through the typed
// client, as the person (Who, how "view"), so the daemon's unix socket
// stays the only way into the daemon.
type Server struct {
	// Spawn is how a session is made when the page runs a cell under a
	// name that has none: where `polyrepl view` was started, with its
	// environment, as `polyrepl exec` would make it.
	Spawn api.Spawn

	// c may start the daemon: for what the person does (a cell, an
	// answer, an interrupt), and to follow a record through a daemon
	// that went away while its sessions lived on. look never starts one:
	// for what the page reads, and polls, on its own.
	c, look *client.Client
	who     api.Client
	ln      net.Listener
	port    int
	g       guard
	// served is Serve's context: what outlives one request (collecting
	// a cell the page ran) ends with it.
	served context.Context
}

// Listen takes port on 127.0.0.1 (0: a free one). Only loopback: with
// no view running, nothing of polyrepl listens on the network.
func Listen(port int) (net.Listener, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("port %d of 127.0.0.1 is taken by another program: %w", port, err)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot listen on 127.0.0.1:%d: %w", port, err)
	}
	return ln, nil
}

// New makes the server of the page on ln (a loopback listener, as
// Listen makes), sending the page's requests through c as who, with a
// fresh token.
func New(c *client.Client, who api.Client, ln net.Listener) (*Server, error) {
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok || !addr.IP.IsLoopback() {
		return nil, fmt.Errorf("the view serves on loopback only, not on %s", ln.Addr())
	}
	look := &client.Client{Socket: c.Socket, StateDir: c.StateDir, Ceiling: c.Ceiling}
	return &Server{c: c, look: look, who: who.Bounded(), ln: ln, port: addr.Port, g: guard{port: addr.Port, token: newToken()}}, nil
}

// URL is the address to open: the page with the token, and #name to
// show session name ("" for none).
func (s *Server) URL(name string) string {
	u := fmt.Sprintf("http://127.0.0.1:%d/?token=%s", s.port, s.g.token)
	if name != "" {
		u += "#" + name
	}
	return u
}

// shutdownWait bounds how long an ending server waits for requests in
// flight (an exec being sent) before it closes their connections.
const shutdownWait = 5 * time.Second

// Serve answers requests until ctx ends, then shuts the server down:
// the streams the pages follow end with ctx, and nothing is left
// listening.
func (s *Server) Serve(ctx context.Context) error {
	s.served = ctx
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), shutdownWait)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	}()
	err := srv.Serve(s.ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-stopped
		return nil
	}
	return err
}

// ServeHTTP guards the request, sets the headers every reply has, and
// routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	cookie, redirect, no := s.g.check(r)
	if no != nil {
		refuse(w, r, *no)
		return
	}
	if cookie != nil {
		http.SetCookie(w, cookie)
	}
	if redirect {
		// The token leaves the address bar; the #fragment stays with the
		// browser, which keeps it across the redirect.
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	s.route(w, r)
}

// route sends r to its handler: 404 for a path the view does not serve,
// 405 for a method it does not take there.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case path == "/":
		if allow(w, r, http.MethodGet) {
			serveAsset(w, "view.html")
		}
		return
	case strings.HasPrefix(path, "/assets/"):
		if name := strings.TrimPrefix(path, "/assets/"); assetTypes[name] != "" {
			if allow(w, r, http.MethodGet) {
				serveAsset(w, name)
			}
			return
		}
	case path == "/api/sessions":
		if allow(w, r, http.MethodGet) {
			s.sessions(w, r)
		}
		return
	case strings.HasPrefix(path, "/api/sessions/"):
		parts := strings.Split(strings.TrimPrefix(path, "/api/sessions/"), "/")
		if s.session(w, r, parts[0], parts[1:]) {
			return
		}
	}
	refuse(w, r, refusal{http.StatusNotFound, codeNotFound, fmt.Sprintf("the view has no page %s", strconv.Quote(path)), ""})
}

// session routes a request about session name; rest is the path after
// its name. It reports false for a path it does not serve.
func (s *Server) session(w http.ResponseWriter, r *http.Request, name string, rest []string) bool {
	var do func()
	method := http.MethodGet
	switch {
	case len(rest) == 1 && rest[0] == "events":
		do = func() { s.events(w, r, name) }
	case len(rest) == 1 && rest[0] == "export":
		do = func() { s.export(w, r, name) }
	case len(rest) == 1 && actions[rest[0]]:
		method, do = http.MethodPost, func() { s.act(w, r, name, rest[0]) }
	case len(rest) == 3 && rest[0] == "entries" && rest[2] == "output":
		do = func() { s.output(w, r, name, rest[1]) }
	case len(rest) == 4 && rest[0] == "entries" && rest[2] == "rich":
		do = func() { s.rich(w, r, name, rest[1], rest[3]) }
	default:
		return false
	}
	if !allow(w, r, method) {
		return true
	}
	if err := api.ValidateName(name); err != nil {
		refuse(w, r, refusal{http.StatusBadRequest, api.CodeBadRequest, err.Error(), "session names use " + api.NameChars})
		return true
	}
	do()
	return true
}

// allow says whether r's method is method (GET takes HEAD too), and
// refuses it otherwise.
func allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method || method == http.MethodGet && r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", method)
	refuse(w, r, refusal{http.StatusMethodNotAllowed, codeMethod, fmt.Sprintf("%s takes %s, not %s", r.URL.Path, method, r.Method), ""})
	return false
}

// assetTypes are the files under /assets and their types; nothing else
// of the embedded directory is served.
var assetTypes = map[string]string{
	"view.html":         "text/html; charset=utf-8",
	"view.js":           "text/javascript; charset=utf-8",
	"page-transport.js": "text/javascript; charset=utf-8",
	"view.css":          "text/css; charset=utf-8",
}

func serveAsset(w http.ResponseWriter, name string) {
	w.Header().Set("Content-Type", assetTypes[name])
	io.WriteString(w, asset(name))
}

// refuse answers with a refusal: JSON for the API (an api.ErrorReply, as
// the daemon's), a line of text for a page.
func refuse(w http.ResponseWriter, r *http.Request, no refusal) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeJSON(w, no.status, api.ErrorReply{Error: no.msg, Code: no.code, Hint: no.hint})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(no.status)
	fmt.Fprintf(w, "polyrepl view: %s\n", no.msg)
	if no.hint != "" {
		fmt.Fprintf(w, "%s\n", no.hint)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"the view cannot encode its reply","code":"internal"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// fail answers with what went wrong reaching the daemon: the daemon's
// refusal with its status, its words and its next steps worded for a
// person, or why it could not be reached.
func (s *Server) fail(w http.ResponseWriter, err error) {
	var (
		ae *client.APIError
		ce *client.ConnError
		fe *client.InFlightError
	)
	switch {
	case errors.As(err, &ae):
		body := ae.ErrorReply
		body.Error, body.Hint = render.Refusal(body), render.Hint(body, render.People)
		status := ae.Status
		if status < 400 {
			status = http.StatusBadGateway
		}
		writeJSON(w, status, body)
	case errors.As(err, &fe):
		msg, hint := render.InFlight(fe.Op, fe.Session, fe.Err, render.People)
		writeJSON(w, http.StatusBadGateway, api.ErrorReply{Error: msg, Hint: hint, Code: api.CodeInFlight})
	case client.IsNotRunning(err):
		writeJSON(w, http.StatusServiceUnavailable, api.ErrorReply{Error: "the polyrepl daemon is not running", Code: api.CodeUnreachable,
			Hint: "a cell run from this page, or any polyrepl command, starts it"})
	case errors.As(err, &ce):
		writeJSON(w, http.StatusServiceUnavailable, api.ErrorReply{Error: "cannot reach the polyrepl daemon: " + ce.Err.Error(), Code: api.CodeUnreachable,
			Hint: fmt.Sprintf("see the daemon log %s", s.c.LogPath())})
	default:
		writeJSON(w, http.StatusInternalServerError, api.ErrorReply{Error: err.Error(), Code: api.CodeInternal})
	}
}

// sessionsReply is GET /api/sessions: every session, who the page acts
// as, and whether a daemon runs (the page polls it; it never starts one).
type sessionsReply struct {
	Sessions []api.SessionInfo `json:"sessions"`
	Label    string            `json:"label"`
	Daemon   string            `json:"daemon"` // "running" or "not running"
	Error    string            `json:"error,omitempty"`
}

func (s *Server) sessions(w http.ResponseWriter, r *http.Request) {
	out := sessionsReply{Sessions: []api.SessionInfo{}, Label: s.who.Who, Daemon: "running"}
	list, err := s.look.Sessions(r.Context(), "")
	switch {
	case err == nil:
		if list != nil {
			out.Sessions = list
		}
	case client.IsNotRunning(err):
		out.Daemon = "not running"
	default:
		out.Daemon = "not running"
		out.Error = "cannot reach the polyrepl daemon: " + err.Error()
		var ae *client.APIError
		if errors.As(err, &ae) {
			out.Daemon, out.Error = "running", render.Refusal(ae.ErrorReply)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// actions are what the page may do to a session, by POST.
var actions = map[string]bool{"exec": true, "input": true, "interrupt": true, "restart": true, "kill": true}

// actionBody is the body of every action: code for exec; text, eof and
// secret for input; generation, if set, to act only on that life of the
// session.
type actionBody struct {
	Code       *string `json:"code"`
	Text       string  `json:"text"`
	EOF        bool    `json:"eof"`
	Secret     bool    `json:"secret"`
	Generation string  `json:"generation"`
}

// Bodies are bounded at the door: code and an answer as the daemon
// bounds them (JSON may spell a byte in six), anything else small.
const (
	maxTextBody    = 6*api.MaxCodeBytes + 64<<10
	maxControlBody = 64 << 10
)

func (s *Server) act(w http.ResponseWriter, r *http.Request, name, what string) {
	limit := int64(maxControlBody)
	if what == "exec" || what == "input" {
		limit = maxTextBody
	}
	var b actionBody
	// An empty body is an empty object: interrupt, restart and kill
	// need nothing.
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit)).Decode(&b); err != nil && !errors.Is(err, io.EOF) {
		if mb := (*http.MaxBytesError)(nil); errors.As(err, &mb) {
			refuse(w, r, refusal{http.StatusRequestEntityTooLarge, codeTooLarge, fmt.Sprintf("the request is over %s; nothing was sent", render.Kilobytes(limit)), ""})
			return
		}
		refuse(w, r, refusal{http.StatusBadRequest, api.CodeBadRequest, "the request is not the JSON object " + what + " takes: " + err.Error(), ""})
		return
	}
	ctx := r.Context()
	ctl := api.ControlRequest{Client: s.who, Generation: b.Generation}
	var (
		out any
		err error
	)
	switch what {
	case "exec":
		if b.Code == nil {
			refuse(w, r, refusal{http.StatusBadRequest, api.CodeBadRequest, `exec needs {"code": "…"}`, ""})
			return
		}
		if len(*b.Code) > api.MaxCodeBytes {
			refuse(w, r, refusal{http.StatusRequestEntityTooLarge, codeTooLarge,
				fmt.Sprintf("the code is %s; a cell takes at most %s, and nothing was run", render.Kilobytes(int64(len(*b.Code))), render.Kilobytes(api.MaxCodeBytes)), ""})
			return
		}
		var res api.CellResult
		res, err = s.c.Exec(ctx, name, api.ExecRequest{Code: *b.Code, Timeout: api.Seconds(0), Spawn: s.Spawn, Client: s.who, Generation: b.Generation})
		if err == nil && (res.Status == api.StatusRunning || res.Status == api.StatusInput) {
			go s.collect(name, res.Generation)
		}
		out, err = s.result(res, err)
	case "input":
		if len(b.Text) > api.MaxAnswerBytes {
			refuse(w, r, refusal{http.StatusRequestEntityTooLarge, codeTooLarge,
				fmt.Sprintf("the answer is %s; one takes at most %s, and nothing was sent", render.Kilobytes(int64(len(b.Text))), render.Kilobytes(api.MaxAnswerBytes)), ""})
			return
		}
		out, err = s.result(s.c.Input(ctx, name, api.InputRequest{Text: b.Text, EOF: b.EOF, Secret: b.Secret, Timeout: api.Seconds(0), Client: s.who, Generation: b.Generation}))
	case "interrupt":
		out, err = s.result(s.c.Interrupt(ctx, name, ctl))
	case "restart":
		out, err = killed(s.c.Restart(ctx, name, ctl))
	case "kill":
		out, err = killed(s.c.Kill(ctx, name, ctl))
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// collect takes the result of a cell the page ran, as the page's own
// client, once it ends: its sender collects it, as exec does for the CLI,
// so it is not told to the next client's cell as a result nobody took
// (the page shows it from the record as it runs). It ends with the view.
func (s *Server) collect(name, gen string) {
	ctx := s.served
	if ctx == nil {
		return
	}
	for ctx.Err() == nil {
		r, err := s.c.Wait(ctx, name, api.WaitRequest{Timeout: api.Seconds(api.MaxTimeout.Seconds()), Client: s.who, Generation: gen})
		switch {
		case err != nil, r.Status != api.StatusRunning && r.Status != api.StatusInput:
			return
		case r.Status == api.StatusInput:
			// The cell waits on its question: look again in a while.
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// result is a cell's result for the page, its notes worded.
func (s *Server) result(r api.CellResult, err error) (any, error) {
	r.Notes = render.Worded(r.Notes, render.People)
	return r, err
}

func killed(r api.KillReply, err error) (any, error) {
	r.Notes = render.Worded(r.Notes, render.People)
	return r, err
}

// export answers GET …/export?format=md|ipynb: the record as `polyrepl
// export` writes it, as a download.
func (s *Server) export(w http.ResponseWriter, r *http.Request, name string) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "md"
	}
	if format != "md" && format != "ipynb" {
		refuse(w, r, refusal{http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("unknown format %s: give md or ipynb", strconv.Quote(format)), ""})
		return
	}
	rec, err := s.look.History(r.Context(), name, 0)
	if err != nil {
		s.fail(w, err)
		return
	}
	var b bytes.Buffer
	kind := "text/markdown; charset=utf-8"
	if format == "md" {
		export.Markdown(&b, rec, func(x api.Rich) string { return x.File })
	} else {
		kind = "application/x-ipynb+json"
		if err := export.Notebook(&b, rec); err != nil {
			s.fail(w, err)
			return
		}
	}
	w.Header().Set("Content-Type", kind)
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.%s"`, name, format))
	w.Write(b.Bytes())
}
