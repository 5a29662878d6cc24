//go:build !linux

package proc

// childPIDs has no quick source outside Linux: Children scans the table.
func childPIDs(Proc) ([]int, bool) { return nil, false }
