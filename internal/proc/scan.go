package proc

import (
	"bytes"
	"errors"
	"strings"
)

// entry is one process found by a scan of the process table (/proc on
// Linux, sysctl kern.proc.all on macOS).
type entry struct {
	stat
	// tags are the entries of the process's environment under the key the
	// scan looked for (KEY=…: the cookies of every session at once), so
	// one scan serves every tree whose cookie has that key.
	tags []string
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

// entriesUnder lists the entries of the NUL-separated environment env
// that begin with key ("KEY="), whole.
func entriesUnder(env, key []byte) []string {
	var out []string
	for len(env) > 0 {
		i := bytes.IndexByte(env, 0)
		e := env
		if i >= 0 {
			e, env = env[:i], env[i+1:]
		} else {
			env = nil
		}
		if bytes.HasPrefix(e, key) {
			out = append(out, string(e))
		}
	}
	return out
}

// cookieKey is the key of a valid cookie with its '=' ("KEY="), which a
// scan looks for; "" for no cookie or one that could match nothing or,
// if empty-keyed, too much.
func cookieKey(cookie string) string {
	if cookie == "" || validCookie(cookie) != nil {
		return ""
	}
	return cookie[:strings.IndexByte(cookie, '=')+1]
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
