package e2e

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// completion is a complete route's reply (api.CompleteReply).
type completion struct {
	Matches []string `json:"matches"`
	By      string   `json:"by"`
}

// complete asks the daemon's complete route, as attach's Tab does, for
// what word may become in session name.
func (e *env) complete(name, word string) completion {
	e.t.Helper()
	body, _ := json.Marshal(map[string]string{"word": word})
	resp, err := e.api().Post("http://polyrepl/v1/sessions/"+name+"/complete", "application/json", strings.NewReader(string(body)))
	if err != nil {
		e.t.Fatalf("complete %q: %v", word, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	var c completion
	if resp.StatusCode != 200 || json.Unmarshal(msg, &c) != nil {
		e.t.Fatalf("complete %q: %d %s", word, resp.StatusCode, msg)
	}
	return c
}

// completesLive checks that each word completes by the runtime itself to
// the matches wanted (want[0] is enough to be among them when all is
// false), with no cell: the record gains no entry.
func completesLive(t *testing.T, e *env, name string, cases []completeCase) {
	t.Helper()
	entries := len(e.history(name))
	for _, c := range cases {
		got := e.complete(name, c.word)
		if got.By != "runtime" {
			t.Errorf("%q was completed by %q, want the runtime: %q", c.word, got.By, got.Matches)
			continue
		}
		if c.all && strings.Join(got.Matches, " ") != strings.Join(c.want, " ") || !c.all && !contains(got.Matches, c.want) {
			t.Errorf("%q completes to %q, want %q", c.word, got.Matches, c.want)
		}
	}
	if n := len(e.history(name)); n != entries {
		t.Errorf("the record has %d entries after completions, want %d: a completion is no cell", n, entries)
	}
}

type completeCase struct {
	word string
	want []string
	all  bool // the matches are exactly want, else they include it
}

func contains(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// TestCompletesR: R completes from the live session by its own
// completion: a name, a data frame's columns after $, pkg::name; a call
// before $ is not run.
func TestCompletesR(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "r", "r-base-core")
	e.must(0, "exec", "rs", "--runtime", "r", "total_count <- 41; total_sum <- 2; df <- data.frame(colour = 1, count_ = 2); boom <- function() { cat('RAN'); list(x = 1) }")
	completesLive(t, e, "rs", []completeCase{
		{"total_", []string{"total_count", "total_sum"}, true},
		{"df$co", []string{"df$colour", "df$count_"}, true},
		{"utils::hea", []string{"utils::head"}, false},
		{"boom()$", nil, true},
	})
	if out, _ := e.must(0, "exec", "rs", "total_count + 1"); !strings.Contains(out, "[1] 42") || strings.Contains(out, "RAN") {
		t.Errorf("the next cell: %q", out)
	}
}

// TestCompletesRuby: Ruby completes from the live binding: a local
// variable, a keyword, a named object's methods after a dot; an
// expression before the dot is not run.
func TestCompletesRuby(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	needRuntime(t, e, "ruby", "ruby")
	e.must(0, "exec", "rb", "--runtime", "ruby", "total_count = 41; total_sum = 2; greeting = 'hi'; def boom; puts 'RAN'; 'x'; end; module Shapes; Circle = 1; end")
	completesLive(t, e, "rb", []completeCase{
		{"total_", []string{"total_count", "total_sum"}, true},
		{"greeting.upc", []string{"greeting.upcase", "greeting.upcase!"}, true},
		{"unles", []string{"unless"}, true},
		{"boom.up", nil, true},
	})
	if out, _ := e.must(0, "exec", "rb", "total_count + 1"); !strings.Contains(out, "42") || strings.Contains(out, "RAN") {
		t.Errorf("the next cell: %q", out)
	}

	// attach's Tab takes Name:: into the word.
	con := e.onTerminal("attach", "rb", "--label", "carol")
	con.expect("start", "Attached to session 'rb'")
	con.send("Shapes::Ci\t")
	if !waitFor(10*time.Second, func() bool { return strings.HasSuffix(con.scr.String(), "Shapes::Circle") }) {
		t.Fatalf("Tab after Shapes:: does not complete the constant:\n%q", after(con.scr.String(), "rb> "))
	}
	con.send(" + 1\r")
	con.expect("the completed name runs", "2")
	con.send("\x04")
	if err := con.exit("Ctrl-D"); err != nil {
		t.Errorf("attach ended with %v after Ctrl-D, want exit 0", err)
	}
}

// TestCompletesIPython: IPython completes from the live session by its
// own completer: a name, a method after a dot, a magic, a dict's keys; a
// call before the dot is not run.
func TestCompletesIPython(t *testing.T) {
	needIPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "ipy", "--runtime", "ipython", "total_count = 41; total_sum = 2; word = 'abc'; d = {'colour': 1, 'count_': 2}\ndef boom():\n    print('RAN')\n    return word")
	completesLive(t, e, "ipy", []completeCase{
		{"total_", []string{"total_count", "total_sum"}, true},
		{"word.upp", []string{"word.upper"}, true},
		{"%tim", []string{"%timeit"}, false},
		{"d['co", []string{"d['colour']", "d['count_']"}, true},
		{"boom().up", nil, true},
	})
	if out, _ := e.must(0, "exec", "ipy", "total_count + 1"); !strings.Contains(out, "42") || strings.Contains(out, "RAN") {
		t.Errorf("the next cell: %q", out)
	}
}
