package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/testenv"
)

// `polyrepl view` driven with Go's net/http as the browser: the guard
// (token, cookie, Host, Origin, headers), the API the page calls, and the
// command's life (the URL it prints, Ctrl-C). The page itself, in a real
// browser, is tested elsewhere.

// viewProc is a running `polyrepl view`.
type viewProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	out    *testenv.Buffer // its standard output: the URL
	errb   *testenv.Buffer
	url    string // as printed
	base   string // http://127.0.0.1:PORT
	port   int
	token  string
	done   chan error
	ended  bool
	client *http.Client // a browser that opened url: it has the cookie
}

// startView runs `polyrepl view` with args and waits for the URL it
// prints; the view is ended, if still running, when the test ends
// (before the env's teardown, which proves nothing is left).
func (e *env) startView(args ...string) *viewProc {
	e.t.Helper()
	v := &viewProc{t: e.t, out: &testenv.Buffer{}, errb: &testenv.Buffer{}, done: make(chan error, 1)}
	v.cmd = exec.Command(e.bin, append([]string{"view"}, args...)...)
	v.cmd.Env = e.vars
	v.cmd.Dir = e.home
	v.cmd.Stdout, v.cmd.Stderr = v.out, v.errb
	if err := v.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { v.done <- v.cmd.Wait() }()
	e.t.Cleanup(func() {
		if !v.ended {
			v.cmd.Process.Signal(os.Interrupt)
			select {
			case <-v.done:
			case <-time.After(20 * time.Second):
				v.cmd.Process.Kill()
				<-v.done
				e.t.Errorf("polyrepl view did not end on SIGINT")
			}
		}
	})
	if !waitFor(30*time.Second, func() bool { return strings.Contains(v.out.String(), "\n") }) {
		e.t.Fatalf("polyrepl view printed no URL: stdout %q, stderr %q", v.out.String(), v.errb.String())
	}
	v.url = strings.TrimSpace(v.out.String())
	m := regexp.MustCompile(`^http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{64})(#.*)?$`).FindStringSubmatch(v.url)
	if m == nil {
		e.t.Fatalf("polyrepl view printed %q, want http://127.0.0.1:PORT/?token=TOKEN (64 hex digits)", v.url)
	}
	v.port, _ = strconv.Atoi(m[1])
	v.token = m[2]
	v.base = "http://127.0.0.1:" + m[1]
	jar, _ := cookiejar.New(nil)
	v.client = &http.Client{Jar: jar, Timeout: 60 * time.Second}
	return v
}

// stop sends SIGINT, as Ctrl-C does, and checks that the view ends with
// status 0 and its port no longer takes connections.
func (v *viewProc) stop() {
	v.t.Helper()
	v.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-v.done:
		v.ended = true
		if err != nil {
			v.t.Errorf("polyrepl view ended with %v after SIGINT, want exit 0; stderr:\n%s", err, v.errb.String())
		}
	case <-time.After(20 * time.Second):
		v.t.Fatalf("polyrepl view did not end within 20 s of SIGINT")
	}
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", v.port), 2*time.Second); err == nil {
		c.Close()
		v.t.Errorf("port %d still takes connections after the view ended", v.port)
	}
}

// open loads the printed URL as a browser does: the redirect, the cookie.
func (v *viewProc) open() *http.Response {
	v.t.Helper()
	resp, err := v.client.Get(v.url)
	if err != nil {
		v.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// do sends a request as the page does (the cookie, and for a POST its
// Origin and JSON) and returns the status, the headers and the body.
func (v *viewProc) do(method, path, body string, header ...string) (int, http.Header, string) {
	v.t.Helper()
	req, err := http.NewRequest(method, v.base+path, strings.NewReader(body))
	if err != nil {
		v.t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Origin", v.base)
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := v.client.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// post is do for an action, failing the test unless it is answered 200.
func (v *viewProc) post(path, body string) string {
	v.t.Helper()
	status, _, out := v.do(http.MethodPost, path, body)
	if status != http.StatusOK {
		v.t.Fatalf("POST %s %s: %d %s", path, body, status, out)
	}
	return out
}

// events is a followed record, as the page's EventSource reads it.
type events struct {
	mu   sync.Mutex
	msgs []string // each message's event name (or "") and data, "NAME DATA"
	raw  bytes.Buffer
	done chan struct{}
	stop func()
}

func (ev *events) String() string {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return ev.raw.String()
}

// has says whether some message's data contains every one of subs.
func (ev *events) has(subs ...string) bool {
	ev.mu.Lock()
	defer ev.mu.Unlock()
next:
	for _, m := range ev.msgs {
		for _, s := range subs {
			if !strings.Contains(m, s) {
				continue next
			}
		}
		return true
	}
	return false
}

// follow opens the events stream of session name after seq since.
func (v *viewProc) follow(name string, since int) *events {
	v.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/sessions/%s/events?since=%d", v.base, name, since), nil)
	c := &http.Client{Jar: v.client.Jar} // no timeout: a stream
	resp, err := c.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		v.t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ev := &events{done: make(chan struct{}), stop: func() { resp.Body.Close() }}
	v.t.Cleanup(ev.stop)
	go func() {
		defer close(ev.done)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		name := ""
		for sc.Scan() {
			line := sc.Text()
			ev.mu.Lock()
			ev.raw.WriteString(line + "\n")
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.msgs = append(ev.msgs, name+" "+strings.TrimPrefix(line, "data: "))
				name = ""
			}
			ev.mu.Unlock()
		}
	}()
	return ev
}

// historyEntries is `polyrepl history NAME --json`'s entries.
func (e *env) historyEntries(name string) []map[string]any {
	e.t.Helper()
	out, _ := e.must(0, "history", name, "--json")
	var r struct {
		Entries []map[string]any `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		e.t.Fatalf("history --json: %v: %s", err, out)
	}
	return r.Entries
}

// TestViewHTTP: the printed URL opens the page (the token then kept in
// an HttpOnly, SameSite=Strict cookie, the page's policy set); without
// the token, from another Origin or addressed to another Host, nothing
// is served; a cell POSTed runs as the person (how "view", their label)
// and its output streams to the page while it runs; an answer reaches
// input(); interrupt stops a cell; the record exports as `polyrepl
// export` writes it; a cut entry's whole output is a request away; and
// Ctrl-C ends the view with status 0, its port closed.
func TestViewHTTP(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	v := e.startView("--label", "alice", "v")
	if !strings.HasSuffix(v.url, "#v") {
		t.Errorf("the URL %q does not end in #v", v.url)
	}
	if !strings.Contains(v.errb.String(), "Ctrl-C ends it") {
		t.Errorf("stderr does not say how to end it: %q", v.errb.String())
	}

	// The URL, as a browser opens it: 303 to /, with the cookie.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(v.url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	setCookie := resp.Header.Get("Set-Cookie")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Errorf("the URL: %d to %q, want 303 to /", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, want := range []string{fmt.Sprintf("polyrepl_view_%d=%s", v.port, v.token), "Path=/", "HttpOnly", "SameSite=Strict"} {
		if !strings.Contains(setCookie, want) {
			t.Errorf("Set-Cookie %q lacks %s", setCookie, want)
		}
	}
	if r := v.open(); r.StatusCode != 200 || r.Request.URL.String() != v.base+"/" {
		t.Errorf("opening the URL: %d at %s, want the page at /", r.StatusCode, r.Request.URL)
	}
	status, h, body := v.do("GET", "/", "")
	if status != 200 || !strings.Contains(body, "<!doctype html>") {
		t.Errorf("the page with the cookie: %d %.200s", status, body)
	}
	for k, want := range map[string]string{
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; frame-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
		"X-Content-Type-Options":  "nosniff",
		"Content-Type":            "text/html; charset=utf-8",
	} {
		if h.Get(k) != want {
			t.Errorf("the page's %s: %q, want %q", k, h.Get(k), want)
		}
	}
	if status, h, _ := v.do("GET", "/assets/view.js", ""); status != 200 || h.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Errorf("view.js: %d %s", status, h.Get("Content-Type"))
	}

	// Refused: no token, a wrong one, another Origin, another Host.
	for _, c := range []struct {
		what   string
		req    func() *http.Request
		status int
		says   string
	}{
		{"no token", func() *http.Request { r, _ := http.NewRequest("GET", v.base+"/", nil); return r }, 403, "polyrepl view"},
		{"no token, the API", func() *http.Request { r, _ := http.NewRequest("GET", v.base+"/api/sessions", nil); return r }, 403, "token"},
		{"a wrong token", func() *http.Request {
			r, _ := http.NewRequest("GET", v.base+"/?token="+strings.Repeat("0", 64), nil)
			return r
		}, 403, "not this view's"},
		{"an exec without the token", func() *http.Request {
			r, _ := http.NewRequest("POST", v.base+"/api/sessions/v/exec", strings.NewReader(`{"code":"open('pwned','w')"}`))
			r.Header.Set("Origin", v.base)
			r.Header.Set("Content-Type", "application/json")
			return r
		}, 403, "token"},
	} {
		resp, err := http.DefaultClient.Do(c.req())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.says) {
			t.Errorf("%s: %d %q, want %d saying %q", c.what, resp.StatusCode, b, c.status, c.says)
		}
	}
	if status, _, body := v.do("GET", "/api/sessions", "", "Origin", "http://evil.example"); status != 403 || !strings.Contains(body, "another page") {
		t.Errorf("a foreign Origin: %d %s", status, body)
	}
	if status, _, body := v.do("POST", "/api/sessions/v/exec", `{"code":"open('pwned','w')"}`, "Origin", "http://evil.example"); status != 403 {
		t.Errorf("an exec from a foreign Origin: %d %s", status, body)
	}
	if status, _, body := v.do("GET", "/api/sessions", "", "Host", fmt.Sprintf("evil.example:%d", v.port)); status != 403 || !strings.Contains(body, "answers only at") {
		t.Errorf("a foreign Host: %d %s", status, body)
	}
	if status, _, body := v.do("POST", "/api/sessions/v/exec", `{"code":"open('pwned','w')"}`, "Content-Type", "text/plain"); status != 415 {
		t.Errorf("an exec that is not JSON: %d %s", status, body)
	}
	if _, err := os.Stat(e.home + "/pwned"); err == nil {
		t.Errorf("a refused exec ran")
	}
	if status, _, body := v.do("GET", "/api/nothing", ""); status != 404 || !strings.Contains(body, "no page") {
		t.Errorf("an unknown route: %d %s", status, body)
	}
	if status, _, body := v.do("DELETE", "/api/sessions", ""); status != 405 {
		t.Errorf("a wrong method: %d %s", status, body)
	}
	// A script with the bearer token needs no cookie.
	req, _ := http.NewRequest("GET", v.base+"/api/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+v.token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("the bearer token: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// The record streams to the page while the cell runs.
	ev := v.follow("v", 0)
	if !waitFor(20*time.Second, func() bool { return ev.has("conn ", `"state":"waiting"`) }) {
		t.Errorf("a session not there yet: the stream does not say it waits:\n%s", ev)
	}
	out := v.post("/api/sessions/v/exec", `{"code":"import time\nprint('tick-1', flush=True)\ntime.sleep(60)"}`)
	if !strings.Contains(out, `"status":"running"`) || !strings.Contains(out, `"session":"v"`) {
		t.Errorf("exec: %s, want the cell running (timeout 0)", out)
	}
	if !waitFor(30*time.Second, func() bool { return ev.has(`"event":"output"`, "tick-1") }) {
		t.Fatalf("the running cell's output did not reach the stream:\n%s", ev)
	}
	if !ev.has("conn ", `"state":"live"`) || !ev.has(`"event":"entry"`, `"how":"view"`, `"who":"alice"`) {
		t.Errorf("the stream lacks the live state or the entry as alice via view:\n%s", ev)
	}
	if s := e.session("v"); s.State != "running" {
		t.Errorf("the cell's output came, and the session is %s, want running", s.State)
	}
	status, _, body = v.do("GET", "/api/sessions", "")
	var list struct {
		Sessions []map[string]any `json:"sessions"`
		Label    string           `json:"label"`
		Daemon   string           `json:"daemon"`
	}
	if err := json.Unmarshal([]byte(body), &list); status != 200 || err != nil || list.Daemon != "running" || list.Label != "alice" || len(list.Sessions) != 1 || list.Sessions[0]["running"] == nil {
		t.Errorf("sessions: %d %s", status, body)
	}
	out = v.post("/api/sessions/v/interrupt", `{}`)
	if !strings.Contains(out, `"status":"interrupted"`) {
		t.Errorf("interrupt: %s", out)
	}
	if !waitFor(20*time.Second, func() bool { return ev.has(`"event":"end"`, `"status":"interrupted"`) }) {
		t.Errorf("the stream does not show the cell interrupted:\n%s", ev)
	}

	// Run as the person, recorded so.
	v.post("/api/sessions/v/exec", `{"code":"x = 6 * 7\nx"}`)
	var cell map[string]any
	if !waitFor(30*time.Second, func() bool {
		for _, en := range e.historyEntries("v") {
			if en["code"] == "x = 6 * 7\nx" && en["status"] == "done" {
				cell = en
				return true
			}
		}
		return false
	}) {
		t.Fatalf("history does not show the cell done: %v", e.historyEntries("v"))
	}
	if cell["who"] != "alice" || cell["how"] != "view" || !strings.HasSuffix(fmt.Sprint(cell["display"]), "42") {
		t.Errorf("the cell in history: who %v, how %v, display %v; want alice via view, 42", cell["who"], cell["how"], cell["display"])
	}

	// An answer reaches input().
	v.post("/api/sessions/v/exec", `{"code":"name = input('who? ')\nprint('hello', name)"}`)
	if !waitFor(30*time.Second, func() bool { return e.session("v").Running != nil && e.session("v").Running.Input != nil }) {
		t.Fatalf("the cell does not ask: %+v", e.session("v"))
	}
	v.post("/api/sessions/v/input", `{"text":"bob"}`)
	if !waitFor(30*time.Second, func() bool { return ev.has(`"event":"output"`, "hello bob") }) {
		t.Errorf("the answer did not reach input():\n%s", ev)
	}

	// A bad request is refused in words; the daemon's refusals keep its
	// status and code.
	if status, _, body := v.do("POST", "/api/sessions/v/exec", `{"cod":"1"}`); status != 400 || !strings.Contains(body, "exec needs") {
		t.Errorf("an exec without code: %d %s", status, body)
	}
	if status, _, body := v.do("POST", "/api/sessions/v/exec", `{"code":"`+strings.Repeat("x", 2<<20+1)+`"}`); status != 413 || !strings.Contains(body, "at most") {
		t.Errorf("code over 2 MiB: %d %.300s", status, body)
	}
	if status, _, body := v.do("POST", "/api/sessions/none/interrupt", `{}`); status != 404 || !strings.Contains(body, `"code":"no-session"`) {
		t.Errorf("interrupt of no session: %d %s", status, body)
	}

	// A cut entry's output whole.
	v.post("/api/sessions/v/exec", `{"code":"for i in range(5000): print('line', i)"}`)
	var seq int
	if !waitFor(30*time.Second, func() bool {
		for _, en := range e.historyEntries("v") {
			if strings.HasPrefix(fmt.Sprint(en["code"]), "for i in range(5000)") && en["status"] == "done" {
				seq = int(en["seq"].(float64))
				return en["output_cut"] != nil
			}
		}
		return false
	}) {
		t.Fatalf("history shows no cut entry of 5,000 lines")
	}
	status, h, body = v.do("GET", fmt.Sprintf("/api/sessions/v/entries/%d/output", seq), "")
	var want strings.Builder
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if status != 200 || body != want.String() || h.Get("Content-Type") != "text/plain; charset=utf-8" || !strings.HasPrefix(h.Get("Content-Security-Policy"), "sandbox;") {
		t.Errorf("the whole output: %d, %d bytes (want %d), %s, CSP %q", status, len(body), want.Len(), h.Get("Content-Type"), h.Get("Content-Security-Policy"))
	}

	// Export: the bytes `polyrepl export` writes (Markdown's line of when
	// aside), as a download.
	exported := regexp.MustCompile(`(?m)^Exported from .*$`)
	for _, f := range []struct{ format, kind string }{{"md", "text/markdown; charset=utf-8"}, {"ipynb", "application/x-ipynb+json"}} {
		status, h, body := v.do("GET", "/api/sessions/v/export?format="+f.format, "")
		cli, _ := e.must(0, "export", "v", "--format", f.format)
		if status != 200 || h.Get("Content-Type") != f.kind || h.Get("Content-Disposition") != `attachment; filename="v.`+f.format+`"` {
			t.Errorf("export %s: %d, %s, %s", f.format, status, h.Get("Content-Type"), h.Get("Content-Disposition"))
		}
		if exported.ReplaceAllString(body, "") != exported.ReplaceAllString(cli, "") {
			t.Errorf("export %s differs from polyrepl export's:\n%.2000s\n---\n%.2000s", f.format, body, cli)
		}
	}
	if status, _, _ := v.do("GET", "/api/sessions/v/export?format=pdf", ""); status != 400 {
		t.Errorf("export as pdf: %d, want 400", status)
	}

	v.stop()
	select {
	case <-ev.done:
	case <-time.After(10 * time.Second):
		t.Errorf("the events stream did not end with the view")
	}
}

// TestViewHTTPFigure: a figure a cell made is served with its type, and
// nothing but the files the record names can be fetched.
func TestViewHTTPFigure(t *testing.T) {
	needPython(t)
	if err := exec.Command(python, "-c", "import matplotlib").Run(); err != nil {
		t.Skipf("%s has no matplotlib (Debian: python3-matplotlib)", python)
	}
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "fig", "import matplotlib.pyplot as plt\nplt.plot([1, 4, 9]); plt.show()")
	v := e.startView()
	v.open()
	var (
		seq  int
		figs []any
	)
	for _, en := range e.historyEntries("fig") {
		if en["rich"] != nil {
			seq, figs = int(en["seq"].(float64)), en["rich"].([]any)
		}
	}
	if seq == 0 {
		t.Fatalf("the record has no figure: %v", e.historyEntries("fig"))
	}
	status, h, body := v.do("GET", fmt.Sprintf("/api/sessions/fig/entries/%d/rich/0", seq), "")
	if status != 200 || h.Get("Content-Type") != "image/png" || !strings.HasPrefix(body, "\x89PNG\r\n") {
		t.Errorf("the figure: %d %s %q", status, h.Get("Content-Type"), body[:min(len(body), 16)])
	}
	for _, path := range []string{
		fmt.Sprintf("/api/sessions/fig/entries/%d/rich/1", seq),
		fmt.Sprintf("/api/sessions/fig/entries/%d/rich/-1", seq),
		"/api/sessions/fig/entries/999/rich/0",
		fmt.Sprintf("/api/sessions/fig/entries/%d/rich/..%%2f..%%2f..%%2fetc%%2fpasswd", seq),
		"/api/sessions/fig/entries/" + url.PathEscape("../../../etc/passwd") + "/rich/0",
		"/assets/../../../../etc/passwd",
	} {
		status, _, body := v.do("GET", path, "")
		if status == 200 || strings.Contains(body, "root:") {
			t.Errorf("GET %s: %d %.200s", path, status, body)
		}
	}
	// A figure whose file is gone is said so.
	if len(figs) > 0 {
		os.Remove(fmt.Sprint(figs[0].(map[string]any)["file"]))
		if status, _, body := v.do("GET", fmt.Sprintf("/api/sessions/fig/entries/%d/rich/0", seq), ""); status != 404 || !strings.Contains(body, "is gone") {
			t.Errorf("a figure whose file is gone: %d %s", status, body)
		}
	}
	if exec.Command(python, "-c", "import pandas").Run() == nil {
		e.must(0, "exec", "fig", "import pandas as pd\npd.DataFrame({'a': [1, 2]})")
		ens := e.historyEntries("fig")
		last := ens[len(ens)-1]
		rich, _ := last["rich"].([]any)
		if len(rich) == 0 {
			t.Errorf("a DataFrame made no rich output: %v", last)
		}
		for i, x := range rich {
			if x.(map[string]any)["mime"] != "text/html" {
				continue
			}
			status, h, body := v.do("GET", fmt.Sprintf("/api/sessions/fig/entries/%d/rich/%d", int(last["seq"].(float64)), i), "")
			if status != 200 || h.Get("Content-Type") != "text/html; charset=utf-8" || !strings.HasPrefix(h.Get("Content-Security-Policy"), "sandbox;") || !strings.Contains(body, "<table") {
				t.Errorf("a DataFrame's HTML: %d %s CSP %q %.200s", status, h.Get("Content-Type"), h.Get("Content-Security-Policy"), body)
			}
		}
	}
	v.stop()
}

// TestViewHTTPFlood: a cell printing 10 MB reaches the page as its head,
// a cut, and its latest part now and then, not 10 MB.
func TestViewHTTPFlood(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "big", "1")
	v := e.startView()
	v.open()
	ev := v.follow("big", 2)
	v.post("/api/sessions/big/exec", `{"code":"import sys\nfor i in range(100000): sys.stdout.write('%099d\\n' % i)\nprint('the end')"}`)
	if !waitFor(60*time.Second, func() bool { return ev.has(`"event":"end"`, `"status":"done"`) }) {
		t.Fatalf("the 10 MB cell did not end on the stream (%d bytes so far)", len(ev.String()))
	}
	if !ev.has(`"event":"cut"`) || !ev.has(`"event":"output"`, "the end") {
		t.Errorf("the stream lacks the cut or the output's end")
	}
	if n := len(ev.String()); n > 2<<20 {
		t.Errorf("the page got %d bytes of a 10 MB output", n)
	} else {
		t.Logf("the page got %d bytes of a 10 MB output", n)
	}
	v.stop()
}

// TestViewHTTPNoDaemon: a view started with no daemon serves, says the
// daemon is not running and does not start one, however often the page
// asks; its stream waits; a port taken is refused clearly; Ctrl-C ends it.
func TestViewHTTPNoDaemon(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.startView()
	v.open()
	for i := 0; i < 3; i++ {
		status, _, body := v.do("GET", "/api/sessions", "")
		if status != 200 || !strings.Contains(body, `"daemon":"not running"`) || !strings.Contains(body, `"sessions":[]`) {
			t.Errorf("sessions with no daemon: %d %s", status, body)
		}
	}
	ev := v.follow("later", 0)
	if !waitFor(20*time.Second, func() bool { return ev.has(`"state":"waiting"`, "not running") }) {
		t.Errorf("the stream does not say it waits for a daemon:\n%s", ev)
	}
	time.Sleep(time.Second)
	if _, _, code := e.run("status"); code != 1 {
		t.Errorf("polyrepl status exits %d: the view started a daemon", code)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	_, errOut, code := e.run("view", "--port", strconv.Itoa(port))
	if code != 2 || !strings.Contains(errOut, fmt.Sprintf("port %d of 127.0.0.1 is taken", port)) || !strings.Contains(errOut, "--port") {
		t.Errorf("a taken port: exit %d, %q", code, errOut)
	}
	v.stop()
}

// TestViewHTTPDaemonRestart: a page following a session goes on through
// `polyrepl stop --keep-sessions` and the daemon that takes the session
// up: the stream says it came back, and a cell run after shows.
func TestViewHTTPDaemonRestart(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "keep", "x = 1")
	v := e.startView()
	v.open()
	ev := v.follow("keep", 0)
	if !waitFor(20*time.Second, func() bool { return ev.has(`"event":"entry"`, `"code":"x = 1"`, `"status":"done"`) }) {
		t.Fatalf("the stream does not show the first cell:\n%s", ev)
	}
	e.must(0, "stop", "--keep-sessions")
	if !waitFor(30*time.Second, func() bool { return ev.has(`"event":"reconnected"`) }) {
		t.Fatalf("the stream does not say it came back after the daemon went:\n%s", ev)
	}
	e.must(0, "exec", "keep", "print('after', x + 1)")
	if !waitFor(30*time.Second, func() bool { return ev.has("after 2") }) {
		t.Errorf("a cell after the new daemon took the session up does not show:\n%s", ev)
	}
	if ev.has(`"state":"down"`) {
		t.Errorf("the stream said down:\n%s", ev)
	}
	// The daemon that left kept serving the open stream a while: it must
	// not have bound its socket again meanwhile (clients would have
	// reached a daemon on its way out).
	if log := tail(filepath.Join(e.socketDir(), "daemon.log"), 200); strings.Contains(log, "binding it again") {
		t.Errorf("the daemon on its way out bound its socket again:\n%s", log)
	}
	v.stop()
}

// TestViewInASandbox: a cell of a sandboxed session with its network off
// cannot serve the view (the kernel refuses it the listening socket), and
// polyrepl view says so, not that the port was wrong.
func TestViewInASandbox(t *testing.T) {
	needPython(t)
	needLandlock(t)
	t.Parallel()
	e := newEnv(t)
	r := e.runJSON("exec", "boxed", "--sandbox", "read-only", "import subprocess\n"+
		"p = subprocess.run(["+strconv.Quote(e.bin)+", 'view'], capture_output=True, text=True, timeout=60)\n"+
		"print('exit', p.returncode)\nprint(p.stderr)")
	wantContains(t, "polyrepl view inside a read-only session", r.Output, "exit 2", "permission denied", "may not listen on the network")
	wantLacks(t, "polyrepl view inside a read-only session", r.Output, "give another port")
}

// TestViewCollectsItsCells: a cell the page ran is collected by the
// view itself when it ends, so the next client's cell is told it once,
// as another client's activity, not again as a result nobody took.
func TestViewCollectsItsCells(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "vc", "x = 1")
	v := e.startView()
	v.open()
	v.post("/api/sessions/vc/exec", `{"code":"import time\ntime.sleep(0.5)\nprint('from the page')"}`)
	if !waitFor(30*time.Second, func() bool {
		out, _ := e.must(0, "history", "vc", "--json")
		return strings.Contains(out, `"status":"done"`) && strings.Contains(out, "from the page") && !strings.Contains(out, `"status":"running"`)
	}) {
		t.Fatalf("the page's cell did not finish")
	}
	_, stderr := e.must(0, "exec", "vc", "y = 2")
	wantContains(t, "the next CLI cell after the page's", stderr, "via view", "from the page")
	wantLacks(t, "the next CLI cell after the page's", stderr, "nobody was waiting")
	v.stop()
}
