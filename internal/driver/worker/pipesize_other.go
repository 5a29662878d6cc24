//go:build !linux

package worker

import "os"

// growPipe does nothing: only Linux lets a pipe's capacity be set.
func growPipe(*os.File) {}
