package proc

import (
	"bytes"
	"errors"
)

// entry is one process found by a scan of the process table (/proc on
// Linux, sysctl kern.proc.all on macOS).
type entry struct {
	stat
	// cookie is true when the process's environment holds the tree's cookie.
	cookie bool
}

// proc returns the identity of e.
func (e entry) proc() Proc { return Proc{PID: e.pid, Start: e.start} }

// hasEntry reports whether the NUL-separated environment env holds want as a
// whole entry, so that a cookie never matches a prefix or a longer value.
func hasEntry(env, want []byte) bool {
	for len(env) > 0 {
		i := bytes.IndexByte(env, 0)
		if i < 0 {
			return bytes.Equal(env, want)
		}
		if bytes.Equal(env[:i], want) {
			return true
		}
		env = env[i+1:]
	}
	return false
}

// errBadCookie is returned for a cookie that cannot be an environment entry.
var errBadCookie = errors.New("cookie must be a KEY=VALUE string without NUL bytes")

// validCookie checks the cookie; an empty cookie is valid and means none.
func validCookie(c string) error {
	if c == "" {
		return nil
	}
	i := bytes.IndexByte([]byte(c), '=')
	if i <= 0 || bytes.IndexByte([]byte(c), 0) >= 0 {
		return errBadCookie
	}
	return nil
}
