package worker

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
)

// FuzzEvent feeds a worker's event lines: a hostile or broken worker can
// make parseEvent return nothing, never panic it or hand the session a
// result it cannot show.
func FuzzEvent(f *testing.F) {
	for _, s := range []string{
		`{"op":"hello","version":"3.11","executable":"/usr/bin/python3","pid":7}`,
		`{"op":"done","cell":1,"status":"done","value":"42","names":["x"],"flushed":true}`,
		`{"op":"done","cell":2,"status":"error","error":{"type":"E","message":"m"}}`,
		`{"op":"done","cell":3,"value_head":"aaa","value_tail":"zzz","value_total":-5}`,
		`{"op":"done","cell":4,"status":"exploded"}`, `{"op":"done","status":"error"}`,
		`{"op":"done","cell":"x"}`, `{"op":5}`, `not json`, ``, `{"op":"done","value":"\udc80"}`,
		`{"op":"input","cell":1,"nonce":"n","flushed":true,"password":false,"shown":false,"prompt_total":-3,"prompt":"? "}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		eventHead(line) // the head of a line too long to take: never a panic
		if q, _, _, ok := parseInput(line); ok && (utf8.RuneCountInString(q.Text) > api.PromptLimit+64 || q.Total < 0) {
			t.Fatalf("%q: a question of %d characters, total %d", line, utf8.RuneCountInString(q.Text), q.Total)
		}
		hello, done, _, _ := parseEvent(line)
		if hello != nil && done != nil {
			t.Fatalf("%q parsed as both a hello and a result", line)
		}
		if done == nil {
			return
		}
		switch done.Status {
		case api.StatusDone, api.StatusInterrupted:
		case api.StatusError:
			if done.Error == nil {
				t.Fatalf("%q: an error result without an error", line)
			}
		default:
			t.Fatalf("%q: status %q reached the session", line, done.Status)
		}
		if !utf8.ValidString(done.Value) || strings.Contains(done.Value, "[… -") {
			t.Fatalf("%q: value %q", line, done.Value)
		}
		if len(done.Names) > maxNames {
			t.Fatalf("%q: %d names", line, len(done.Names))
		}
	})
}
