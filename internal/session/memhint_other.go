//go:build !linux

package session

// memoryHint is what to do when a session's memory limit cannot be set:
// outside Linux no limit can be (internal/limit says why).
const memoryHint = "run without a memory limit"
