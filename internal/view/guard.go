package view

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// The page is served on loopback, where every local process and every
// web page the person's browser shows can reach it. The guard lets a
// request through only if it is addressed to this server by name (Host:
// a page of another site that rebinds its own name to 127.0.0.1 is
// refused), comes from this server's own page (Origin, when a browser
// sends one; always, for a change), and carries the token `polyrepl view`
// printed: in the address once, then in a cookie no script can read and
// no other site's request carries, or as a bearer token from a script.

// pageCSP is the page's policy: its own script and style, nothing from
// anywhere else, no inline script, and no site may frame it.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; frame-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

// sandboxCSP is the policy of what a cell made (its HTML, an SVG, its
// whole output): shown in a sandbox, an origin of its own, running no
// script, loading nothing but inline images and styles. (No
// frame-ancestors: 'self' would name the sandbox's own opaque origin,
// not the page's; another site cannot frame it anyway, since its
// request would carry no cookie.)
const sandboxCSP = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'"

// newToken is 32 random bytes in hex: what a request must show.
func newToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("view: no randomness for the token: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// guard is the check every request passes, for a server on port with
// token.
type guard struct {
	port  int
	token string
}

// cookie is the name of the cookie that keeps the token: one per port,
// since a browser sends a host's cookies to every port of it.
func (g guard) cookie() string { return "polyrepl_view_" + strconv.Itoa(g.port) }

// hosts are the names a request may be addressed to, and origins the
// pages it may come from.
func (g guard) hostOK(host string) bool {
	p := ":" + strconv.Itoa(g.port)
	return host == "127.0.0.1"+p || host == "localhost"+p
}

func (g guard) originOK(origin string) bool {
	p := ":" + strconv.Itoa(g.port)
	return origin == "http://127.0.0.1"+p || origin == "http://localhost"+p
}

// same compares a token shown with the server's in constant time.
func (g guard) same(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(g.token)) == 1
}

// refusal is why a request was refused: its status and words.
type refusal struct {
	status int
	code   string
	msg    string
	hint   string
}

// Codes of the view's own refusals (ErrorReply.Code), beside the
// daemon's.
const (
	codeForbidden = "forbidden"
	codeNotFound  = "not-found"
	codeMethod    = "method"
	codeTooLarge  = "too-large"
	codeMediaType = "media-type"
	codeGone      = "gone"
)

// tokenHint says how to get a token: the address the command printed.
const tokenHint = "open the address `polyrepl view` printed (it carries ?token=…); a new `polyrepl view` prints a new one"

// check lets r through, or says why not. When the token came in the
// address, setCookie is the cookie to keep it in, and redirect says the
// page should be asked for again without it (the token leaves the
// address bar and the history).
func (g guard) check(r *http.Request) (setCookie *http.Cookie, redirect bool, no *refusal) {
	if !g.hostOK(r.Host) {
		return nil, false, &refusal{http.StatusForbidden, codeForbidden,
			"this page answers only at http://127.0.0.1:" + strconv.Itoa(g.port) + "/ (the request was addressed to " + strconv.Quote(r.Host) + ")",
			"open the address `polyrepl view` printed"}
	}
	origin, hasOrigin := r.Header["Origin"]
	if hasOrigin && (len(origin) != 1 || !g.originOK(origin[0])) {
		return nil, false, &refusal{http.StatusForbidden, codeForbidden,
			"requests from another page (" + strconv.Quote(strings.Join(origin, ", ")) + ") are refused: only the view's own page may send them", ""}
	}
	bearer := false
	switch q := r.URL.Query(); {
	case q.Has("token"):
		if !g.same(q.Get("token")) {
			return nil, false, &refusal{http.StatusForbidden, codeForbidden, "the token in the address is not this view's", tokenHint}
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			setCookie = &http.Cookie{Name: g.cookie(), Value: g.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode}
			redirect = r.URL.Path == "/"
		}
	case strings.HasPrefix(r.Header.Get("Authorization"), "Bearer "):
		if !g.same(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")) {
			return nil, false, &refusal{http.StatusForbidden, codeForbidden, "the bearer token is not this view's", tokenHint}
		}
		bearer = true
	default:
		c, err := r.Cookie(g.cookie())
		if err != nil || !g.same(c.Value) {
			return nil, false, &refusal{http.StatusForbidden, codeForbidden, "this page needs the token `polyrepl view` printed with its address", tokenHint}
		}
	}
	if r.Method == http.MethodPost {
		// A browser sends Origin on every POST a script makes; a form
		// or a page elsewhere could send none. A script with the bearer
		// token is no browser, and no page can send that header here.
		if !hasOrigin && !bearer {
			return nil, false, &refusal{http.StatusForbidden, codeForbidden, "a request that changes a session must come from the view's own page (it carried no Origin)", ""}
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			return nil, false, &refusal{http.StatusUnsupportedMediaType, codeMediaType,
				"a request that changes a session must be JSON (Content-Type: application/json), not " + strconv.Quote(r.Header.Get("Content-Type")), ""}
		}
	}
	return setCookie, redirect, nil
}
