package driver

import (
	"slices"
	"sort"
	"strings"
)

// aliases are the other names people type for a runtime: its language,
// its command, its file extension. Each names one runtime; a name that
// could mean two (shell: sh or bash?) is not here.
var aliases = map[string]string{
	"py": "python", "python3": "python", "py3": "python",
	"ipython3": "ipython",
	"rscript":  "r", "rlang": "r",
	"nodejs": "node", "js": "node", "javascript": "node",
	"rb": "ruby", "irb": "ruby",
	"haskell": "ghci", "ghc": "ghci", "hs": "ghci",
	"jl":  "julia",
	"c++": "cpp", "cling": "cpp",
	"jshell":  "java",
	"fortran": "lfortran",
	"clj":     "clojure",
}

// canonical is the runtime name meant by name, given the registered
// names (has): the name itself, in any case (R, Python), or an alias
// (nodejs, py, rb); a family's prefix in any case (Jupyter:ir). ok is
// false when it names none of them.
func canonical(name string, has func(string) bool, prefixes []string) (string, bool) {
	if has(name) {
		return name, true
	}
	n := strings.TrimSpace(name)
	for _, p := range prefixes {
		if len(n) > len(p) && strings.EqualFold(n[:len(p)], p) {
			return p + n[len(p):], true
		}
	}
	low := strings.ToLower(n)
	if has(low) {
		return low, true
	}
	if a, ok := aliases[low]; ok && has(a) {
		return a, true
	}
	return name, false
}

// Canonical is the registered runtime name meant by name — R for r,
// nodejs for node — or name itself when it means none: a client names
// the runtime as the daemon keeps it, so that "R" and "r" are one
// runtime when a name is used again.
func Canonical(name string) string {
	mu.Lock()
	defer mu.Unlock()
	c, _ := canonical(name, registered, prefixesLocked())
	return c
}

// registered says whether a driver is registered under n; mu is held.
func registered(n string) bool { _, ok := drivers[n]; return ok }

// prefixesLocked lists the families' prefixes; mu is held.
func prefixesLocked() []string {
	out := make([]string, 0, len(families))
	for _, f := range families {
		out = append(out, f.Prefix)
	}
	return out
}

// suggest is the known name (or alias) closest to name, if it is close
// enough to be a slip of the keys (two edits, one for a name of four
// letters or fewer, none for two), or "".
func suggest(name string, known []string) string {
	low := strings.ToLower(strings.TrimSpace(name))
	best, bestD := "", 3
	switch n := len([]rune(low)); {
	case n <= 2:
		return "" // one letter off a one-letter name is any name
	case n <= 4:
		bestD = 2
	}
	try := func(cand, means string) {
		if d := editDistance(low, cand); d < bestD {
			best, bestD = means, d
		}
	}
	for _, k := range known {
		try(k, k)
	}
	as := make([]string, 0, len(aliases))
	for a := range aliases {
		as = append(as, a)
	}
	sort.Strings(as) // ties go the same way every time
	for _, a := range as {
		if slices.Contains(known, aliases[a]) {
			try(a, aliases[a])
		}
	}
	return best
}

// editDistance is the distance between a and b in runes, counting an
// insertion, a deletion, a change or two neighbours swapped as one edit
// (the optimal string alignment distance): "ruyb" is one from "ruby".
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
