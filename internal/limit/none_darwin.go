package limit

import (
	"errors"
	"runtime"
)

// choose finds no way on macOS, whatever was wanted: see noWay.
func choose(string) (by, dir, why string) {
	return byNone, "", noWay(runtime.GOOS)
}

// setRlimit is never reached on macOS (Apply refuses every limit first),
// and would not hold one: RLIMIT_DATA does not cover mmap.
func setRlimit(int, int64) error {
	return errors.New("cannot limit the session's memory: " + noWay(runtime.GOOS))
}
