//go:build !linux

package sandbox

import (
	"os"
	"sync"
)

// Self is the running binary's path, which the trampoline is.
var Self = sync.OnceValue(func() string {
	if p, err := os.Executable(); err == nil {
		return p
	}
	return os.Args[0]
})
