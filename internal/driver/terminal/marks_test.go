package terminal

import (
	"bytes"
	"testing"
)

// split runs a splitter over stream in reads of n bytes and renders what
// it passes on, marks as «kind».
func split(stream []byte, n int, prompt string, hold bool) string {
	var out bytes.Buffer
	s := splitter{prefix: []byte("polyrepl_abc_"), prompt: []byte(prompt), hold: func() bool { return hold }}
	take := func(b []byte) { out.Write(b) }
	mark := func(kind string) { out.WriteString("«" + kind + "»") }
	for i := 0; i < len(stream); i += n {
		s.feed(stream[i:min(i+n, len(stream))], false, take, mark)
	}
	s.feed(nil, true, take, mark)
	return out.String()
}

func TestSplitter(t *testing.T) {
	for _, tc := range []struct{ in, prompt, want string }{
		{"out\npolyrepl_abc_end\nmore", "", "out\n«end»more"},
		{"no-nlpolyrepl_abc_end\n", "", "no-nl«end»"},
		{"polyrepl_abc_" + string(bytes.Repeat([]byte("x"), 40)) + "\n", "", "polyrepl_abc_" + string(bytes.Repeat([]byte("x"), 40)) + "\n"},
		{"a>> polyrepl_abc_end\n>> b", ">> ", "a«end»b"},
		{">> x\n", ">> ", ">> x\n"},
		{"half polyrepl_ab", "", "half polyrepl_ab"},
		{"v polyrepl_abc_error exit status 2\r\n", "", "v «error exit status 2»"},
	} {
		for _, n := range []int{1, 2, 3, 7, 100} {
			if got := split([]byte(tc.in), n, tc.prompt, true); got != tc.want {
				t.Errorf("split(%q) in reads of %d = %q, want %q", tc.in, n, got, tc.want)
			}
		}
	}
}

// FuzzSplitter checks that where reads begin and end never changes what
// the splitter makes of a REPL's stream.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte("out\npolyrepl_abc_end\n>> polyrepl_abc_names\nx\n"), uint8(3), true)
	f.Add([]byte("polyrepl_abpolyrepl_abc_ready\n>> >"), uint8(1), false)
	f.Fuzz(func(t *testing.T, stream []byte, step uint8, withPrompt bool) {
		prompt := ""
		if withPrompt {
			prompt = ">> "
		}
		whole := split(stream, len(stream)+1, prompt, true)
		if got := split(stream, int(step)%9+1, prompt, true); got != whole {
			t.Fatalf("%q in reads of %d: %q; read whole: %q", stream, int(step)%9+1, got, whole)
		}
	})
}
