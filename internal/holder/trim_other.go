//go:build !linux

package holder

// trim does nothing where the process's mappings cannot be read.
func trim() {}
