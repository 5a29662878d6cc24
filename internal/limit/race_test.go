//go:build race

package limit

// The race detector reserves more address space than the rlimit tests'
// limits allow and than the VM has: those tests skip under it.
const raceEnabled = true
