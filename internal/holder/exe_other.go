//go:build !linux

package holder

import (
	"os"
	"sync"
)

// selfExe is the running binary's path, as the daemon found it when it
// first started a holder. Without /proc/self/exe a binary replaced on disk
// meanwhile (an upgrade) would run as the holder: stop the daemon before
// replacing the binary.
var selfExe = sync.OnceValue(func() string {
	if p, err := os.Executable(); err == nil {
		return p
	}
	return os.Args[0]
})
