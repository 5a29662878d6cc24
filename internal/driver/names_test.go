package driver

import (
	"slices"
	"testing"
)

// People type a runtime as they know it: in any case, by its language,
// its command or its extension; a slip of the keys is answered with the
// name meant.
func TestCanonical(t *testing.T) {
	known := []string{"bash", "ghci", "ipython", "node", "python", "r", "ruby", "sh"}
	has := func(n string) bool { return slices.Contains(known, n) }
	prefixes := []string{"jupyter:"}
	for in, want := range map[string]string{
		"python": "python", "Python": "python", "PYTHON": "python", "python3": "python", "py": "python",
		"IPython": "ipython", "ipython3": "ipython",
		"R": "r", "r": "r", "Rscript": "r",
		"nodejs": "node", "js": "node", "JavaScript": "node", "Node": "node",
		"Ruby": "ruby", "rb": "ruby", "irb": "ruby",
		"haskell": "ghci", "GHC": "ghci",
		"Jupyter:ir": "jupyter:ir", "jupyter:python3": "jupyter:python3",
	} {
		got, ok := canonical(in, has, prefixes)
		if !ok || got != want {
			t.Errorf("canonical(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"pyton", "shell", "julia", "", "jupyter:"} {
		if got, ok := canonical(in, has, prefixes); ok {
			t.Errorf("canonical(%q) = %q; want no runtime", in, got)
		}
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"bash", "ghci", "ipython", "julia", "node", "octave", "python", "r", "ruby", "sh"}
	for in, want := range map[string]string{
		"pyton": "python", "pythn": "python", "Pyhton": "python", "ruyb": "ruby", "ocatve": "octave",
		"nodjs": "node", "bsh": "bash", "ipyhton": "ipython", "juila": "julia",
		"cobol": "", "x": "", "perl": "", "fortran77": "",
	} {
		if got := suggest(in, known); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"python", "pyton", 1}, {"kitten", "sitting", 3}, {"é", "e", 1}, {"ruyb", "ruby", 1}} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
