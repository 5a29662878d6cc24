package view

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
)

// The files a page shows are the ones the session's record names: an
// entry's rich outputs and its whole output, found by asking the daemon
// for the entry. A path never comes from the request, so no other file
// can be fetched.

// richTypes are the types a rich output is served as; any other is a
// download. Those that can run script or load things (HTML, SVG) get
// the sandbox policy.
var richTypes = map[string]string{
	"image/png":     "image/png",
	"image/jpeg":    "image/jpeg",
	"image/gif":     "image/gif",
	"image/webp":    "image/webp",
	"image/svg+xml": "image/svg+xml",
	"text/html":     "text/html; charset=utf-8",
	"text/markdown": "text/markdown; charset=utf-8",
	"text/plain":    "text/plain; charset=utf-8",
}

// entry asks the daemon for entry seq of session name, or answers why
// not and returns false.
func (s *Server) entry(w http.ResponseWriter, r *http.Request, name, seqText string) (api.Entry, bool) {
	seq, err := strconv.Atoi(seqText)
	if err != nil || seq <= 0 {
		refuse(w, r, refusal{http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("invalid entry %s: give its seq, a number from 1", strconv.Quote(seqText)), ""})
		return api.Entry{}, false
	}
	en, err := s.look.Entry(r.Context(), name, seq)
	if err != nil {
		s.fail(w, err)
		return api.Entry{}, false
	}
	return en, true
}

// rich answers GET …/entries/{seq}/rich/{i}: the file of the entry's
// i-th rich output (from 0), as its type if it is one a page shows.
func (s *Server) rich(w http.ResponseWriter, r *http.Request, name, seqText, iText string) {
	en, ok := s.entry(w, r, name, seqText)
	if !ok {
		return
	}
	i, err := strconv.Atoi(iText)
	if err != nil || i < 0 || i >= len(en.Rich) {
		refuse(w, r, refusal{http.StatusNotFound, codeNotFound,
			fmt.Sprintf("%s has no rich output %s: it has %d, numbered from 0", en.ID, strconv.Quote(iText), len(en.Rich)), ""})
		return
	}
	x := en.Rich[i]
	kind, shown := richTypes[x.MIME]
	if !shown {
		kind = "application/octet-stream"
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, safeName(filepath.Base(x.File))))
	}
	if x.MIME == "text/html" || x.MIME == "image/svg+xml" {
		w.Header().Set("Content-Security-Policy", sandboxCSP)
	}
	what := fmt.Sprintf("%s's rich output %d (%s)", en.ID, i, x.MIME)
	if x.MIME == "text/html" {
		s.framed(w, r, x.File, kind, what)
		return
	}
	s.file(w, r, x.File, kind, what)
}

// frameStyle goes before a cell's HTML, which the page shows in a
// sandboxed frame of its own: a table as a notebook shows it, in the
// page's colours, instead of the browser's bare defaults.
const frameStyle = `<!doctype html><meta charset="utf-8"><meta name="color-scheme" content="light dark"><style>
body{margin:6px;font:13px/1.4 system-ui,sans-serif}
table{border-collapse:collapse;border:none}
th,td{padding:3px 10px;border:none;border-bottom:1px solid rgba(128,128,128,.3);text-align:right}
thead th{border-bottom:1px solid rgba(128,128,128,.7)}
tbody tr:nth-child(odd){background:rgba(128,128,128,.07)}
</style>
`

// framed serves the HTML file at path with frameStyle before it.
func (s *Server) framed(w http.ResponseWriter, r *http.Request, path, kind, what string) {
	f, err := os.Open(path)
	if err != nil {
		w.Header().Set("Content-Security-Policy", pageCSP)
		refuse(w, r, refusal{http.StatusNotFound, codeGone, fmt.Sprintf("the file of %s is gone: %v", what, err), "the record keeps files while it keeps their entries"})
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", kind)
	io.WriteString(w, frameStyle)
	if r.Method != http.MethodHead {
		io.Copy(w, f)
	}
}

// output answers GET …/entries/{seq}/output: the whole output of an
// entry, from the file that holds it when the entry's was cut, as text
// in a sandbox.
func (s *Server) output(w http.ResponseWriter, r *http.Request, name, seqText string) {
	en, ok := s.entry(w, r, name, seqText)
	if !ok {
		return
	}
	w.Header().Set("Content-Security-Policy", sandboxCSP)
	const kind = "text/plain; charset=utf-8"
	if en.OutputCut != nil && en.OutputCut.File != "" {
		s.file(w, r, en.OutputCut.File, kind, en.ID+"'s whole output")
		return
	}
	w.Header().Set("Content-Type", kind)
	io.WriteString(w, en.Output)
}

// file serves the file at path, which the record names, as kind; what
// names it for a person.
func (s *Server) file(w http.ResponseWriter, r *http.Request, path, kind, what string) {
	f, err := os.Open(path)
	if err != nil {
		w.Header().Set("Content-Security-Policy", pageCSP)
		refuse(w, r, refusal{http.StatusNotFound, codeGone, fmt.Sprintf("the file of %s is gone: %v", what, err), "the record keeps files while it keeps their entries"})
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		w.Header().Set("Content-Security-Policy", pageCSP)
		refuse(w, r, refusal{http.StatusNotFound, codeGone, fmt.Sprintf("the file of %s, %s, is not a regular file", what, path), ""})
		return
	}
	w.Header().Set("Content-Type", kind)
	http.ServeContent(w, r, "", st.ModTime(), f)
}

// safeName keeps a file name to characters a Content-Disposition header
// carries without quoting.
func safeName(name string) string {
	return strings.Map(func(c rune) rune {
		if c == '"' || c == '\\' || c < ' ' || c > '~' {
			return '_'
		}
		return c
	}, name)
}
