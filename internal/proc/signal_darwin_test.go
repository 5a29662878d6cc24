package proc

import "testing"

// TestSignalChecksStartTime has only the kill(2) way to check on macOS,
// which has no pidfd.
func TestSignalChecksStartTime(t *testing.T) { testSignalChecksStartTime(t) }
