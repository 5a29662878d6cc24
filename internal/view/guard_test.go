package view

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// testServer is a server on port 4242 whose daemon is nowhere: the guard
// and the routes that need no daemon.
func testServer() *Server {
	return &Server{port: 4242, g: guard{port: 4242, token: testToken}}
}

func TestGuard(t *testing.T) {
	cookie := "polyrepl_view_4242=" + testToken
	for _, c := range []struct {
		name    string
		method  string
		target  string
		host    string
		headers map[string]string
		status  int
		says    string // in the body
	}{
		{"the page with the token in the address: to the page without it", "GET", "/?token=" + testToken, "127.0.0.1:4242", nil, http.StatusSeeOther, ""},
		{"localhost too", "GET", "/?token=" + testToken, "localhost:4242", nil, http.StatusSeeOther, ""},
		{"the page with the cookie", "GET", "/", "127.0.0.1:4242", map[string]string{"Cookie": cookie}, http.StatusOK, "<!doctype html>"},
		{"an asset with the token in the address", "GET", "/assets/view.js?token=" + testToken, "127.0.0.1:4242", nil, http.StatusOK, ""},
		{"no token", "GET", "/", "127.0.0.1:4242", nil, http.StatusForbidden, "open the address `polyrepl view` printed"},
		{"no token, the API", "GET", "/api/sessions", "127.0.0.1:4242", nil, http.StatusForbidden, `"code":"forbidden"`},
		{"a wrong token", "GET", "/?token=" + strings.Repeat("0", 64), "127.0.0.1:4242", nil, http.StatusForbidden, "not this view's"},
		{"a wrong cookie", "GET", "/", "127.0.0.1:4242", map[string]string{"Cookie": "polyrepl_view_4242=" + strings.Repeat("1", 64)}, http.StatusForbidden, "needs the token"},
		{"another port's cookie", "GET", "/", "127.0.0.1:4242", map[string]string{"Cookie": "polyrepl_view_4243=" + testToken}, http.StatusForbidden, "needs the token"},
		{"a bearer token", "GET", "/", "127.0.0.1:4242", map[string]string{"Authorization": "Bearer " + testToken}, http.StatusOK, ""},
		{"a wrong bearer token", "GET", "/", "127.0.0.1:4242", map[string]string{"Authorization": "Bearer x"}, http.StatusForbidden, "bearer"},
		{"a rebound host name", "GET", "/", "evil.example:4242", map[string]string{"Cookie": cookie}, http.StatusForbidden, "answers only at"},
		{"another port in Host", "GET", "/", "127.0.0.1:80", map[string]string{"Cookie": cookie}, http.StatusForbidden, "answers only at"},
		{"no port in Host", "GET", "/", "127.0.0.1", map[string]string{"Cookie": cookie}, http.StatusForbidden, "answers only at"},
		{"a foreign origin", "GET", "/", "127.0.0.1:4242", map[string]string{"Cookie": cookie, "Origin": "http://evil.example"}, http.StatusForbidden, "another page"},
		{"a null origin (a sandboxed frame)", "GET", "/api/sessions", "127.0.0.1:4242", map[string]string{"Cookie": cookie, "Origin": "null"}, http.StatusForbidden, "another page"},
		{"an https origin", "GET", "/", "127.0.0.1:4242", map[string]string{"Cookie": cookie, "Origin": "https://127.0.0.1:4242"}, http.StatusForbidden, "another page"},
		{"the page's own origin", "GET", "/", "127.0.0.1:4242", map[string]string{"Cookie": cookie, "Origin": "http://127.0.0.1:4242"}, http.StatusOK, ""},
		{"a POST without Origin", "POST", "/api/sessions/s/kill", "127.0.0.1:4242", map[string]string{"Cookie": cookie, "Content-Type": "application/json"}, http.StatusForbidden, "no Origin"},
		{"a POST as a form", "POST", "/api/sessions/s/kill", "127.0.0.1:4242", map[string]string{"Cookie": cookie, "Origin": "http://127.0.0.1:4242", "Content-Type": "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType, "must be JSON"},
		{"a POST from another page", "POST", "/api/sessions/s/kill", "127.0.0.1:4242", map[string]string{"Cookie": cookie, "Origin": "http://localhost:4243", "Content-Type": "application/json"}, http.StatusForbidden, "another page"},
		{"a POST with the token in the address only", "POST", "/api/sessions/s/kill?token=" + testToken, "127.0.0.1:4242", map[string]string{"Content-Type": "application/json"}, http.StatusForbidden, "no Origin"},
		{"a POST with the wrong method's route", "POST", "/api/sessions", "127.0.0.1:4242", map[string]string{"Cookie": cookie, "Origin": "http://127.0.0.1:4242", "Content-Type": "application/json; charset=utf-8"}, http.StatusMethodNotAllowed, "takes GET"},
		{"a GET of an action", "GET", "/api/sessions/s/exec", "127.0.0.1:4242", map[string]string{"Cookie": cookie}, http.StatusMethodNotAllowed, "takes POST"},
		{"an unknown page", "GET", "/etc/passwd", "127.0.0.1:4242", map[string]string{"Cookie": cookie}, http.StatusNotFound, "no page"},
		{"an asset not served", "GET", "/assets/mcp-transport.js", "127.0.0.1:4242", map[string]string{"Cookie": cookie}, http.StatusNotFound, "no page"},
		{"the embedded directory", "GET", "/assets/", "127.0.0.1:4242", map[string]string{"Cookie": cookie}, http.StatusNotFound, "no page"},
		{"an unknown API", "GET", "/api/sessions/s/nothing", "127.0.0.1:4242", map[string]string{"Cookie": cookie}, http.StatusNotFound, `"code":"not-found"`},
		{"a bad session name", "GET", "/api/sessions/..%2fx/events", "127.0.0.1:4242", map[string]string{"Cookie": cookie}, http.StatusNotFound, ""},
		{"an invalid session name", "GET", "/api/sessions/-x/export", "127.0.0.1:4242", map[string]string{"Cookie": cookie}, http.StatusBadRequest, "invalid session name"},
		{"the guard before the route", "GET", "/etc/passwd", "evil.example:4242", nil, http.StatusForbidden, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, c.target, strings.NewReader("{}"))
			r.Host = c.host
			for k, v := range c.headers {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			testServer().ServeHTTP(w, r)
			if w.Code != c.status {
				t.Errorf("status %d, want %d: %s", w.Code, c.status, w.Body.String())
			}
			if !strings.Contains(w.Body.String(), c.says) {
				t.Errorf("the reply does not say %q: %s", c.says, w.Body.String())
			}
			h := w.Result().Header
			for k, v := range map[string]string{"Content-Security-Policy": pageCSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"} {
				if h.Get(k) != v {
					t.Errorf("%s: %q, want %q", k, h.Get(k), v)
				}
			}
		})
	}
}

// The token given in the address is kept in a cookie that no script
// reads and no other site's request carries, and the address loses it.
func TestGuardCookie(t *testing.T) {
	r := httptest.NewRequest("GET", "/?token="+testToken, nil)
	r.Host = "127.0.0.1:4242"
	w := httptest.NewRecorder()
	testServer().ServeHTTP(w, r)
	res := w.Result()
	if loc := res.Header.Get("Location"); loc != "/" {
		t.Errorf("redirected to %q, want /", loc)
	}
	cs := res.Cookies()
	if len(cs) != 1 {
		t.Fatalf("cookies %v, want one", cs)
	}
	c := cs[0]
	if c.Name != "polyrepl_view_4242" || c.Value != testToken || c.Path != "/" || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie %s, want polyrepl_view_4242=TOKEN; Path=/; HttpOnly; SameSite=Strict", c)
	}
	if s := res.Header.Get("Set-Cookie"); !strings.Contains(s, "HttpOnly") || !strings.Contains(s, "SameSite=Strict") {
		t.Errorf("Set-Cookie: %s", s)
	}
}

func TestNewToken(t *testing.T) {
	a, b := newToken(), newToken()
	if len(a) != 64 || a == b {
		t.Errorf("tokens %q and %q: want 64 hex digits, fresh each time", a, b)
	}
}
