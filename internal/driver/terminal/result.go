package terminal

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// scanErrors looks for the profile's error line in a cell's output; from
// the first one on, the output is the error's message.
func (p *process) scanErrors(b []byte) {
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n')
		chunk := b
		if nl >= 0 {
			chunk = b[:nl+1]
		}
		b = b[len(chunk):]
		if len(p.line) < 4096 {
			p.line = append(p.line, chunk[:min(len(chunk), 4096-len(p.line))]...)
		}
		if nl < 0 {
			return
		}
		l := bytes.TrimRight(p.line, "\r\n")
		p.line = p.line[:0]
		if p.pr.Error().Match(l) {
			p.errLine = string(l) + "\n" + string(b[:min(len(b), 4096)])
			return
		}
	}
}

// finish reports the running cell's result.
func (p *process) finish() {
	p.mode = modeOutput
	if p.cell == 0 {
		return
	}
	r := driver.Result{Cell: p.cell, Status: api.StatusDone}
	if p.pr.Error != nil && p.errLine == "" && len(p.line) > 0 && p.pr.Error().Match(bytes.TrimRight(p.line, "\r\n")) {
		p.errLine = string(p.line)
	}
	switch {
	case p.interrupted:
		r.Status = api.StatusInterrupted
	case p.failed || p.errLine != "":
		r.Status = api.StatusError
		msg := errorMessage(strings.ToValidUTF8(p.errLine, "\uFFFD"))
		if msg == "" {
			msg = p.failMsg
		}
		if msg == "" {
			msg = p.pr.Name + " reported an error (see the output)"
		}
		r.Error = &api.CellError{Message: msg}
	}
	if p.value.Len() > 0 {
		v := strings.ToValidUTF8(strings.TrimSuffix(p.value.String(), "\n"), "\uFFFD")
		r.ValueTotal = utf8.RuneCountInString(v)
		r.Value, r.ValueCut = v, nil
		if p.valueLim > 0 {
			r.Value, r.ValueCut = bound.HeadTail(v, p.valueLim)
		}
	}
	if p.listNames && p.pr.Vars != nil {
		r.Vars, r.Names = p.cellLook(p.names.String())
	} else if p.listNames { // else the names are as they were (nil says so)
		parse := p.pr.ParseNames
		if parse == nil {
			parse = lines
		}
		r.Names = parse(p.names.String())
	}
	if p.cellFile != "" {
		os.Remove(p.cellFile)
	}
	if p.plotFile != "" {
		w, h := driver.PNGSize(p.plotFile)
		if fi, err := os.Lstat(p.plotFile); err == nil && fi.Mode().IsRegular() && w > 0 {
			r.Rich = append(r.Rich, api.Rich{MIME: "image/png", File: p.plotFile, Width: w, Height: h, Bytes: fi.Size(),
				Text: fmt.Sprintf("<%s plot %dx%d>", p.pr.Name, w, h)})
		} else {
			os.Remove(p.plotFile)
		}
	}
	p.cell, p.cellFile, p.plotFile = 0, "", ""
	if p.raw != nil {
		p.setEcho(true)
	}
	if !p.done {
		p.h.CellDone(r)
	}
}

// excerpt matches the source lines compilers quote under a message
// ("  |", "3 | x = y"), which the message leaves out.
var excerpt = Pattern(`^\s*\d*\s*\|`)

// Pattern is a regular expression compiled at its first use. Every
// process of polyrepl's one binary (each CLI command, each holder) runs
// every package's initialisation: compiled there, the drivers' patterns
// would cost each of them time and memory for runtimes it never drives.
func Pattern(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// errorMessage is the error's message: the output from its first error
// line, up to the next blank line, at most five lines, without quoted
// source lines. The whole text stays in the output.
func errorMessage(text string) string {
	var msg []string
	for i, l := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\n") {
		if strings.TrimSpace(l) == "" {
			if i == 0 {
				continue
			}
			break
		}
		if excerpt().MatchString(l) {
			continue
		}
		if msg = append(msg, strings.TrimRight(l, " ")); len(msg) == 5 {
			break
		}
	}
	return strings.Join(msg, "\n")
}

// lines is the default names parser: one name per line.
func lines(out string) []string {
	var names []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			names = append(names, l)
		}
	}
	return names
}
