package proc

import (
	"bytes"
	"encoding/binary"
)

// procArgsEnv returns the environment held in a reply of macOS's sysctl
// kern.procargs2 for one process, as the NUL-separated entries hasEntry
// takes (each NUL-terminated), or nil when there is none or the reply is
// malformed. It lives here, not in a darwin file, so that it is tested on
// every system. The reply is laid out as:
//
//	argc       int32, native byte order
//	exec path  NUL-terminated, then NULs padding it to an aligned length
//	argv       argc strings, each NUL-terminated
//	environ    strings, each NUL-terminated, up to an empty string or
//	           the end of the reply
//
// After the environment the kernel may show more strings (its "apple"
// strings, such as executable_path=…); where no empty string separates
// them they are taken for environment entries, which is harmless since
// none of them is a cookie.
//
// An entry cut off by the end of the reply, without its NUL, is dropped:
// its beginning could equal a shorter cookie. A first argument that is the
// empty string cannot be told from the padding and is skipped with it, so
// the first environment entry is then counted as the last argument and
// lost: a cookie may be missed this way, but never wrongly found.
func procArgsEnv(b []byte) []byte {
	if len(b) < 4 {
		return nil
	}
	argc := int32(binary.NativeEndian.Uint32(b))
	rest := b[4:]
	path := bytes.IndexByte(rest, 0)
	if argc < 0 || path < 0 {
		return nil
	}
	rest = bytes.TrimLeft(rest[path:], "\x00")
	for ; argc > 0; argc-- {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			return nil // fewer arguments than argc: no environment follows
		}
		rest = rest[i+1:]
	}
	n := 0
	for {
		i := bytes.IndexByte(rest[n:], 0)
		if i <= 0 {
			break // an empty string ends the environment; a cut-off one is dropped
		}
		n += i + 1
	}
	if n == 0 {
		return nil
	}
	return rest[:n]
}
