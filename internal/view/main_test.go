package view

import (
	"os"
	"testing"

	"github.com/polyrepl/polyrepl/internal/holder"

	// Every runtime, as cmd/polyrepl links them: the daemon links none.
	_ "github.com/polyrepl/polyrepl/internal/driver/all"
)

// TestMain lets this test binary be the holders of the sessions its
// in-process daemon starts (the benchmark's).
func TestMain(m *testing.M) {
	holder.IfHolder()
	os.Exit(m.Run())
}
