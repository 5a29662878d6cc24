// Package version holds the one version string that the binary, the daemon
// and the wire protocol compare, so that a client talking to a daemon built
// from other code can say so instead of failing strangely.
package version

import (
	"strconv"
	"strings"
)

// Version is the polyrepl release. Builds may override it with
// -ldflags "-X github.com/polyrepl/polyrepl/internal/version.Version=…".
var Version = "0.2.0"

// Newer reports whether version a is a later release than b, both of the
// form MAJOR.MINOR.PATCH (with an optional -suffix, which comes before the
// release it suffixes). A version of another form is never newer: a
// client cannot tell, and leaves the daemon be.
func Newer(a, b string) bool {
	x, okx := parse(a)
	y, oky := parse(b)
	if !okx || !oky {
		return false
	}
	for i := range 3 {
		if x.n[i] != y.n[i] {
			return x.n[i] > y.n[i]
		}
	}
	switch {
	case x.pre == y.pre:
		return false
	case x.pre == "":
		return true // a release is after its pre-releases
	case y.pre == "":
		return false
	}
	return x.pre > y.pre
}

type semver struct {
	n   [3]int
	pre string
}

func parse(v string) (semver, bool) {
	var s semver
	core, pre, _ := strings.Cut(strings.TrimPrefix(v, "v"), "-")
	s.pre = pre
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return s, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return s, false
		}
		s.n[i] = n
	}
	return s, true
}
